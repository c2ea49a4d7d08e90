import type { SqlClient } from '../sql-client.js';

/**
 * The audio rows OxiCloud's extractor leaves (`audio.file_metadata`, fact
 * sheet §9): it reads a file's bytes at `.blobs/<aa>/<file hash>.blob`, so
 * only where that object holds the plaintext — a legacy blob or a one-chunk
 * file on a local unencrypted store (`readsRawPath`) — and stores a row for
 * every file whose bytes start with an ID3v2 tag, which every generated
 * audio file does (an empty tag: no title, duration 0, format `MPEG` as its
 * writer stores it). Images get none: the generated JPEGs carry no EXIF.
 * Returns the rows written.
 */
export async function insertAudioMetadata(client: SqlClient, readsRawPath: boolean): Promise<number> {
  if (!readsRawPath) return 0;
  const written = await client.query(`
    INSERT INTO audio.file_metadata (file_id, duration_secs, format, created_at, updated_at)
    SELECT f.id, 0, 'MPEG', f.created_at, f.created_at
      FROM storage.files f
      JOIN oxi_drives od ON od.id = f.drive_id
     WHERE f.mime_type LIKE 'audio/%'
       AND CASE WHEN EXISTS (SELECT 1 FROM storage.chunk_manifests cm WHERE cm.file_hash = f.blob_hash)
                THEN EXISTS (SELECT 1 FROM storage.chunk_manifests cm
                              WHERE cm.file_hash = f.blob_hash AND cm.chunk_count = 1)
                ELSE EXISTS (SELECT 1 FROM storage.blobs b WHERE b.hash = f.blob_hash AND b.size > 0) END`);
  return written.rowCount ?? 0;
}
