import type { SqlClient } from '../sql-client.js';

/**
 * The faces OxiCloud's face indexer leaves (`faces.faces`, fact sheet §10):
 * in each internal user's default drive among this dataset's drives, the
 * first live image file (by name) has two faces of that user, each carrying
 * the file's `blob_hash` as the indexer stores it (the content the face was
 * found in; no foreign key), no person assigned, written two days ago.
 * Every face's hash is its file's, so `references_consistency` finds
 * nothing on a clean dataset; the `stale_face` fault breaks one. Returns the
 * faces written.
 */
export async function insertFaces(client: SqlClient): Promise<number> {
  const written = await client.query(`
    INSERT INTO faces.faces (file_id, user_id, bbox, det_score, quality, embedding, blob_hash, created_at)
    SELECT x.id, d.default_for_user, ARRAY[0.1 * n, 0.2, 0.15, 0.2]::real[], 0.9, 0.8,
           decode(repeat('00', 2048), 'hex'), x.blob_hash, now() - interval '2 days'
      FROM storage.drives d
      JOIN oxi_drives od ON od.id = d.id
     CROSS JOIN LATERAL (
           SELECT f.id, f.blob_hash FROM storage.files f
            WHERE f.drive_id = d.id AND NOT f.is_trashed AND f.mime_type LIKE 'image/%' AND f.size > 0
            ORDER BY f.name, f.id LIMIT 1) x
     CROSS JOIN generate_series(1, 2) AS n
     WHERE d.default_for_user IS NOT NULL`);
  return written.rowCount ?? 0;
}
