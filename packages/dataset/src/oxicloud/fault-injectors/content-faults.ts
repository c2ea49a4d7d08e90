/**
 * The content faults: a manifest, a chunk row or a legacy blob gone, bytes
 * gone or without a row, reference counts and a manifest's shape off, an
 * unreferenced row never marked orphaned, a thumbnail of nothing.
 */
import { blake3Hex } from '@oxicloud/storage';
import { blobBytes } from '../../blob-content.js';
import { rows } from '../../sql-client.js';
import { OXI_STREAM } from '../plan.js';
import {
  addToDrive,
  DAY_MS,
  type FaultContext,
  faultBytes,
  faultChunkBytes,
  hashes,
  type Injector,
  n,
  notApplicable,
  type OxiCloudFaultResource,
  pickEach,
} from './fault-context.js';

/** Conditions on `m`: a multi-chunk manifest of this dataset that no earlier fault touched, chunks included. */
const MANIFEST_FILTER = `m.chunk_count >= 2 AND NOT (m.file_hash = ANY($1::text[])) AND NOT (m.chunk_hashes && $1::text[])
   AND EXISTS (SELECT 1 FROM storage.files f JOIN oxi_drives d ON d.id = f.drive_id WHERE f.blob_hash = m.file_hash)`;

export const missingManifest: Injector = (ctx) =>
  pickEach(
    ctx,
    'missing_manifest',
    'raise multiChunkFileShare or filesPerDrive',
    async (i) =>
      (
        await rows<{ file_hash: string; chunk_hashes: string[]; file_ids: string[] }>(
          ctx.client,
          `SELECT m.file_hash, m.chunk_hashes,
                  ARRAY(SELECT f.id::text FROM storage.files f WHERE f.blob_hash = m.file_hash ORDER BY f.name) AS file_ids
             FROM storage.chunk_manifests m WHERE ${MANIFEST_FILTER}
            ORDER BY hashtextextended(m.file_hash, $2::bigint + $3::bigint) LIMIT 1`,
          [hashes(ctx), ctx.options.seed, i],
        )
      )[0],
    (m) => {
      ctx.usedHashes.add(m.file_hash);
      for (const h of m.chunk_hashes) ctx.usedHashes.add(h);
    },
  ).then(async (picks) => {
    for (const m of picks) {
      // As remove_manifest_reference does: the row goes, each distinct chunk loses one reference.
      await ctx.client.query(
        `WITH del AS (DELETE FROM storage.chunk_manifests WHERE file_hash = $1 RETURNING chunk_hashes)
         UPDATE storage.blobs b
            SET ref_count = greatest(b.ref_count - 1, 0),
                orphaned_at = CASE WHEN b.ref_count <= 1 THEN now() ELSE b.orphaned_at END
          WHERE b.hash IN (SELECT DISTINCT unnest(chunk_hashes) FROM del)`,
        [m.file_hash],
      );
    }
    return picks.map((m) => ({
      type: 'manifest' as const,
      id: m.file_hash,
      label: `manifest ${m.file_hash.slice(0, 12)}… (${m.chunk_hashes.length} chunks)`,
      detail: { fileIds: m.file_ids, chunkHashes: m.chunk_hashes },
    }));
  });

export const missingChunkRow: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'missing_chunk_row',
    'raise multiChunkFileShare or filesPerDrive',
    async (i) =>
      (
        await rows<{ hash: string; file_hash: string; chunk_hashes: string[] }>(
          ctx.client,
          `SELECT b.hash, m.file_hash, m.chunk_hashes
             FROM storage.chunk_manifests m
            CROSS JOIN LATERAL unnest(m.chunk_hashes) AS c(hash)
             JOIN storage.blobs b ON b.hash = c.hash
            WHERE ${MANIFEST_FILTER}
              AND b.ref_count = 1 AND NOT EXISTS (SELECT 1 FROM storage.chunk_manifests o WHERE o.file_hash = b.hash)
            ORDER BY hashtextextended(b.hash, $2::bigint + 7 + $3::bigint) LIMIT 1`,
          [hashes(ctx), ctx.options.seed, i],
        )
      )[0],
    (p) => {
      ctx.usedHashes.add(p.file_hash);
      for (const h of p.chunk_hashes) ctx.usedHashes.add(h);
    },
  );
  for (const p of picks) {
    await ctx.client.query('DELETE FROM storage.blobs WHERE hash = $1', [p.hash]);
    ctx.storage.push({ type: 'delete', hash: p.hash });
  }
  return picks.map((p) => ({
    type: 'blob',
    id: p.hash,
    label: `chunk ${p.chunk_hashes.indexOf(p.hash)} of manifest ${p.file_hash.slice(0, 12)}…`,
    detail: { fileHash: p.file_hash },
  }));
};

const LEGACY_CANDIDATES = `
  FROM storage.blobs b
 WHERE b.content_type IS NOT NULL AND NOT (b.hash = ANY($1::text[]))
   AND NOT EXISTS (SELECT 1 FROM storage.chunk_manifests m WHERE m.file_hash = b.hash)
   AND EXISTS (SELECT 1 FROM storage.files f JOIN oxi_drives d ON d.id = f.drive_id
                WHERE f.blob_hash = b.hash AND NOT f.is_trashed)`;

export const missingBlobRow: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'missing_blob_row',
    'raise legacyFileShare or filesPerDrive',
    async (i) =>
      (
        await rows<{ hash: string; file_ids: string[] }>(
          ctx.client,
          `SELECT b.hash, ARRAY(SELECT f.id::text FROM storage.files f WHERE f.blob_hash = b.hash ORDER BY f.name) AS file_ids
             ${LEGACY_CANDIDATES}
            ORDER BY hashtextextended(b.hash, $2::bigint + 11 + $3::bigint) LIMIT 1`,
          [hashes(ctx), ctx.options.seed, i],
        )
      )[0],
    (p) => ctx.usedHashes.add(p.hash),
  );
  for (const p of picks) {
    await ctx.client.query('DELETE FROM storage.blobs WHERE hash = $1', [p.hash]);
    ctx.storage.push({ type: 'delete', hash: p.hash });
  }
  return picks.map((p) => ({
    type: 'blob',
    id: p.hash,
    label: `legacy blob ${p.hash.slice(0, 12)}…`,
    detail: { fileIds: p.file_ids },
  }));
};

/** A chunk of a multi-chunk manifest (not a one-chunk file's hash), not touched yet. */
async function pickChunk(ctx: FaultContext, salt: number, i: number) {
  return (
    await rows<{ hash: string; ref_count: number; listing: string[] }>(
      ctx.client,
      `SELECT b.hash, b.ref_count,
              ARRAY(SELECT o.file_hash FROM storage.chunk_manifests o WHERE o.chunk_hashes @> ARRAY[b.hash::text]) AS listing
         FROM storage.blobs b
        WHERE b.content_type IS NULL AND NOT (b.hash = ANY($1::text[]))
          AND NOT EXISTS (SELECT 1 FROM storage.chunk_manifests o WHERE o.file_hash = b.hash)
          AND NOT EXISTS (SELECT 1 FROM storage.chunk_manifests o
                           WHERE o.chunk_hashes @> ARRAY[b.hash::text] AND o.file_hash = ANY($1::text[]))
          AND EXISTS (SELECT 1 FROM storage.chunk_manifests o
                        JOIN storage.files f ON f.blob_hash = o.file_hash JOIN oxi_drives d ON d.id = f.drive_id
                       WHERE o.chunk_hashes @> ARRAY[b.hash::text])
        ORDER BY hashtextextended(b.hash, $2::bigint + $3::bigint) LIMIT 1`,
      [hashes(ctx), ctx.options.seed, salt * 1000 + i],
    )
  )[0];
}

export const blobBytesMissing: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'blob_bytes_missing',
    'raise multiChunkFileShare',
    (i) => pickChunk(ctx, 13, i),
    (p) => {
      ctx.usedHashes.add(p.hash);
      for (const h of p.listing) ctx.usedHashes.add(h);
    },
  );
  for (const p of picks) ctx.storage.push({ type: 'delete', hash: p.hash });
  return picks.map((p) => ({
    type: 'blob',
    id: p.hash,
    label: `chunk ${p.hash.slice(0, 12)}…`,
    detail: { listedBy: p.listing },
  }));
};

/**
 * Other bytes under a chunk's key: of the same size (`chunk_bytes_overwritten`:
 * bit rot, a bad restore) or shorter (`truncated_chunk`: a crash mid-write
 * left a short object at its final path, which a later identical upload
 * keeps). Only a deep run, which re-hashes every object, can tell.
 */
function replacedChunk(fault: 'chunk_bytes_overwritten' | 'truncated_chunk', salt: number): Injector {
  return async (ctx) => {
    const picks = await pickEach(
      ctx,
      fault,
      'raise multiChunkFileShare',
      (i) => pickChunk(ctx, salt, i),
      (p) => {
        ctx.usedHashes.add(p.hash);
        for (const h of p.listing) ctx.usedHashes.add(h);
      },
    );
    const out: OxiCloudFaultResource[] = [];
    for (const [i, p] of picks.entries()) {
      const [row] = await rows<{ size: string }>(
        ctx.client,
        'SELECT size::text FROM storage.blobs WHERE hash = $1',
        [p.hash],
      );
      const size = Number(row?.size ?? 0);
      const length = fault === 'truncated_chunk' ? Math.max(1, Math.floor(size / 2)) : size;
      const bytes = blobBytes(ctx.options.seed, OXI_STREAM.faultBytes, salt * 1000 + i, length, 'other');
      ctx.storage.push({
        type: 'put',
        hash: p.hash,
        bytes,
        modifiedAt: new Date(ctx.now.getTime() - 3 * DAY_MS),
      });
      out.push({
        type: 'blob',
        id: p.hash,
        label: `chunk ${p.hash.slice(0, 12)}… (${size} B → ${length} B of other bytes)`,
        detail: { size, storedSize: length, listedBy: p.listing },
      });
    }
    return out;
  };
}

export const chunkBytesOverwritten: Injector = replacedChunk('chunk_bytes_overwritten', 41);
export const truncatedChunk: Injector = replacedChunk('truncated_chunk', 43);

/** A one-chunk content's chunk row counted once too often (what `copy_folder_tree` leaves, §5). */
export const oneChunkRefCountDrift: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'one_chunk_ref_count_drift',
    'raise filesPerDrive',
    async (i) =>
      (
        await rows<{ hash: string; ref_count: number }>(
          ctx.client,
          `SELECT b.hash, b.ref_count FROM storage.blobs b
             JOIN storage.chunk_manifests m ON m.file_hash = b.hash AND cardinality(m.chunk_hashes) = 1
            WHERE NOT (b.hash = ANY($1::text[]))
              AND NOT EXISTS (SELECT 1 FROM storage.chunk_manifests o
                               WHERE o.chunk_hashes @> ARRAY[b.hash::text] AND o.file_hash <> b.hash)
              AND EXISTS (SELECT 1 FROM storage.files f JOIN oxi_drives d ON d.id = f.drive_id
                           WHERE f.blob_hash = b.hash)
            ORDER BY hashtextextended(b.hash, $2::bigint + 47 + $3::bigint) LIMIT 1`,
          [hashes(ctx), ctx.options.seed, i],
        )
      )[0],
    (p) => ctx.usedHashes.add(p.hash),
  );
  for (const p of picks) {
    await ctx.client.query('UPDATE storage.blobs SET ref_count = ref_count + 1 WHERE hash = $1', [p.hash]);
  }
  return picks.map((p) => ({
    type: 'blob',
    id: p.hash,
    label: `one-chunk content ${p.hash.slice(0, 12)}…`,
    detail: { storedRefCount: p.ref_count + 1, expectedRefCount: p.ref_count },
  }));
};

export const orphanBlobOnDisk: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  for (let i = 0; i < n(ctx); i++) {
    const bytes = faultBytes(ctx, 1, i);
    const hash = blake3Hex(bytes);
    ctx.storage.push({ type: 'put', hash, bytes, modifiedAt: new Date(ctx.now.getTime() - 3 * DAY_MS) });
    ctx.usedHashes.add(hash);
    out.push({
      type: 'blob',
      id: hash,
      label: `orphan bytes ${i + 1} (${bytes.length} B)`,
      detail: { size: bytes.length },
    });
  }
  return out;
};

export const blobRefCountDrift: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'blob_ref_count_drift',
    'raise multiChunkFileShare',
    (i) => pickChunk(ctx, 17, i),
    (p) => {
      ctx.usedHashes.add(p.hash);
      for (const h of p.listing) ctx.usedHashes.add(h);
    },
  );
  for (const p of picks) {
    await ctx.client.query('UPDATE storage.blobs SET ref_count = ref_count + 2 WHERE hash = $1', [p.hash]);
  }
  return picks.map((p) => ({
    type: 'blob',
    id: p.hash,
    label: `chunk ${p.hash.slice(0, 12)}…`,
    detail: { storedRefCount: p.ref_count + 2, expectedRefCount: p.ref_count },
  }));
};

export const manifestRefCountDrift: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'manifest_ref_count_drift',
    'it needs a manifest shared by two files: raise dedupShare',
    async (i) =>
      (
        await rows<{ file_hash: string; ref_count: number; chunk_hashes: string[] }>(
          ctx.client,
          `SELECT m.file_hash, m.ref_count, m.chunk_hashes FROM storage.chunk_manifests m
            WHERE m.ref_count >= 2 AND NOT (m.file_hash = ANY($1::text[]))
              AND EXISTS (SELECT 1 FROM storage.files f JOIN oxi_drives d ON d.id = f.drive_id WHERE f.blob_hash = m.file_hash)
            ORDER BY hashtextextended(m.file_hash, $2::bigint + 19 + $3::bigint) LIMIT 1`,
          [hashes(ctx), ctx.options.seed, i],
        )
      )[0],
    (p) => ctx.usedHashes.add(p.file_hash),
  );
  for (const p of picks) {
    await ctx.client.query(
      'UPDATE storage.chunk_manifests SET ref_count = ref_count - 1 WHERE file_hash = $1',
      [p.file_hash],
    );
  }
  return picks.map((p) => ({
    type: 'manifest',
    id: p.file_hash,
    label: `manifest ${p.file_hash.slice(0, 12)}… (${p.chunk_hashes.length} chunks)`,
    detail: { storedRefCount: p.ref_count - 1, fileCount: p.ref_count },
  }));
};

export const manifestRefCountHigh: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'manifest_ref_count_high',
    'raise multiChunkFileShare or filesPerDrive',
    async (i) =>
      (
        await rows<{ file_hash: string; ref_count: number; chunk_count: number }>(
          ctx.client,
          `SELECT m.file_hash, m.ref_count, m.chunk_count FROM storage.chunk_manifests m WHERE ${MANIFEST_FILTER}
            ORDER BY hashtextextended(m.file_hash, $2::bigint + 29 + $3::bigint) LIMIT 1`,
          [hashes(ctx), ctx.options.seed, i],
        )
      )[0],
    (p) => ctx.usedHashes.add(p.file_hash),
  );
  // What a bulk delete leaves (fact sheet §5): one file row fewer than the count, here without deleting one.
  for (const p of picks) {
    await ctx.client.query(
      'UPDATE storage.chunk_manifests SET ref_count = ref_count + 1 WHERE file_hash = $1',
      [p.file_hash],
    );
  }
  return picks.map((p) => ({
    type: 'manifest',
    id: p.file_hash,
    label: `manifest ${p.file_hash.slice(0, 12)}… (${p.chunk_count} chunks)`,
    detail: { storedRefCount: p.ref_count + 1, fileCount: p.ref_count },
  }));
};

export const unreferencedManifest: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  for (let i = 0; i < n(ctx); i++) {
    // A two-chunk content whose last file row is gone: its manifest and chunks stay, counted as OxiCloud
    // counts them (one reference per manifest listing a chunk), bytes in the store.
    const chunks = [faultChunkBytes(ctx, 5, i), faultBytes(ctx, 6, i)];
    const chunkHashes = chunks.map((c) => blake3Hex(c));
    const fileHash = blake3Hex(Buffer.concat(chunks));
    const modifiedAt = new Date(ctx.now.getTime() - 3 * DAY_MS);
    for (const [k, bytes] of chunks.entries()) {
      await ctx.client.query(
        `INSERT INTO storage.blobs (hash, size, ref_count, content_type, created_at, orphaned_at)
         VALUES ($1, $2, 1, NULL, now() - interval '3 days', NULL)`,
        [chunkHashes[k], bytes.length],
      );
      ctx.storage.push({ type: 'put', hash: chunkHashes[k] as string, bytes, modifiedAt });
      ctx.usedHashes.add(chunkHashes[k] as string);
    }
    const total = chunks.reduce((sum, c) => sum + c.length, 0);
    await ctx.client.query(
      `INSERT INTO storage.chunk_manifests (file_hash, chunk_hashes, chunk_sizes, total_size, chunk_count,
                                            content_type, ref_count, created_at)
       VALUES ($1, $2::text[], $3::bigint[], $4, 2, 'application/octet-stream', 1, now() - interval '3 days')`,
      [fileHash, chunkHashes, chunks.map((c) => c.length), total],
    );
    ctx.usedHashes.add(fileHash);
    out.push({
      type: 'manifest',
      id: fileHash,
      label: `unreferenced manifest ${i + 1} (${total} B)`,
      detail: { chunkHashes, totalSize: total },
    });
  }
  return out;
};

export const manifestShapeMismatch: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'manifest_shape_mismatch',
    'raise multiChunkFileShare or filesPerDrive',
    async (i) =>
      (
        await rows<{ file_hash: string; chunk_count: number }>(
          ctx.client,
          `SELECT m.file_hash, m.chunk_count FROM storage.chunk_manifests m WHERE ${MANIFEST_FILTER}
            ORDER BY hashtextextended(m.file_hash, $2::bigint + 89 + $3::bigint) LIMIT 1`,
          [hashes(ctx), ctx.options.seed, i],
        )
      )[0],
    (p) => ctx.usedHashes.add(p.file_hash),
  );
  for (const p of picks) {
    await ctx.client.query(
      'UPDATE storage.chunk_manifests SET chunk_count = chunk_count + 1 WHERE file_hash = $1',
      [p.file_hash],
    );
  }
  return picks.map((p) => ({
    type: 'manifest',
    id: p.file_hash,
    label: `manifest ${p.file_hash.slice(0, 12)}… (${p.chunk_count} chunks)`,
    detail: { storedChunkCount: p.chunk_count + 1, chunkCount: p.chunk_count },
  }));
};

/**
 * A multi-chunk manifest whose `total_size` is 4 KiB more than its chunks
 * add up to, and its files' `size` with it (both come from the same upload
 * count in OxiCloud; usage of the live files' drives follows): only the
 * manifest's shape is wrong (§12 item 13).
 */
export const wrongManifestTotal: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'wrong_manifest_total',
    'raise multiChunkFileShare or filesPerDrive',
    async (i) =>
      (
        await rows<{ file_hash: string; total_size: string; chunk_count: number }>(
          ctx.client,
          `SELECT m.file_hash, m.total_size::text AS total_size, m.chunk_count FROM storage.chunk_manifests m
            WHERE ${MANIFEST_FILTER}
            ORDER BY hashtextextended(m.file_hash, $2::bigint + 97 + $3::bigint) LIMIT 1`,
          [hashes(ctx), ctx.options.seed, i],
        )
      )[0],
    (p) => ctx.usedHashes.add(p.file_hash),
  );
  const delta = 4096;
  for (const p of picks) {
    await ctx.client.query(
      'UPDATE storage.chunk_manifests SET total_size = total_size + $2::bigint WHERE file_hash = $1',
      [p.file_hash, delta],
    );
    const updated = await rows<{ drive_id: string; is_trashed: boolean }>(
      ctx.client,
      `UPDATE storage.files SET size = size + $2::bigint WHERE blob_hash = $1
       RETURNING drive_id, is_trashed`,
      [p.file_hash, delta],
    );
    const perDrive = new Map<string, number>();
    for (const f of updated) {
      if (!f.is_trashed) perDrive.set(f.drive_id, (perDrive.get(f.drive_id) ?? 0) + delta);
    }
    for (const [driveId, bytes] of perDrive) await addToDrive(ctx, driveId, bytes);
  }
  return picks.map((p) => ({
    type: 'manifest',
    id: p.file_hash,
    label: `manifest ${p.file_hash.slice(0, 12)}… (${p.chunk_count} chunks, total + ${delta})`,
    detail: { storedTotalSize: Number(p.total_size) + delta, totalSize: Number(p.total_size) },
  }));
};

export const blobOrphanedAtUnset: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  for (let i = 0; i < n(ctx); i++) {
    const bytes = faultBytes(ctx, 2, i);
    const hash = blake3Hex(bytes);
    await ctx.client.query(
      `INSERT INTO storage.blobs (hash, size, ref_count, content_type, created_at, orphaned_at)
       VALUES ($1, $2, 0, NULL, now() - interval '3 days', NULL)`,
      [hash, bytes.length],
    );
    ctx.storage.push({ type: 'put', hash, bytes, modifiedAt: new Date(ctx.now.getTime() - 3 * DAY_MS) });
    ctx.usedHashes.add(hash);
    out.push({ type: 'blob', id: hash, label: `never-marked blob ${i + 1}`, detail: { size: bytes.length } });
  }
  return out;
};

export const orphanThumbnail: Injector = async (ctx) => {
  if (!ctx.hasStorageRoot) {
    notApplicable('orphan_thumbnail', n(ctx), 0, 'it needs storageRoot (where OxiCloud keeps .thumbnails)');
  }
  const out: OxiCloudFaultResource[] = [];
  for (let i = 0; i < n(ctx); i++) {
    const hash = blake3Hex(faultBytes(ctx, 3, i));
    ctx.storage.push({ type: 'thumbnail', hash });
    out.push({ type: 'thumbnail', id: hash, label: `orphan thumbnail ${i + 1}`, detail: {} });
  }
  return out;
};

/**
 * Files OxiCloud keys by file id, left behind by a file deleted since: the
 * client-supplied `ext-<file_id>.jpg` thumbnails, or the transcoded
 * `.transcoded/webp/<file_id>.webp` (§12 item 19). The id is one no files
 * row has (deleting a real file would move usage and counts too).
 */
function orphanFileIdFiles(
  fault: 'orphan_file_thumbnail' | 'orphan_transcoded_image',
  files: 'ext_thumbnails' | 'transcoded',
  salt: number,
): Injector {
  return async (ctx) => {
    if (!ctx.hasStorageRoot) {
      notApplicable(
        fault,
        n(ctx),
        0,
        'it needs storageRoot (where OxiCloud keeps .thumbnails and .transcoded)',
      );
    }
    const out: OxiCloudFaultResource[] = [];
    for (let i = 0; i < n(ctx); i++) {
      const b = faultBytes(ctx, salt, i);
      const hex = blake3Hex(b).slice(0, 32);
      // A version-4 uuid from the seed: no row has it.
      const fileId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
      ctx.storage.push({ type: 'file_id_files', fileId, files });
      out.push({ type: 'file', id: fileId, label: `${fault.replaceAll('_', ' ')} ${i + 1}`, detail: {} });
    }
    return out;
  };
}

export const orphanFileThumbnail: Injector = orphanFileIdFiles('orphan_file_thumbnail', 'ext_thumbnails', 7);
export const orphanTranscodedImage: Injector = orphanFileIdFiles('orphan_transcoded_image', 'transcoded', 8);

/**
 * A multi-chunk manifest whose first two chunks are swapped in both arrays:
 * the shape still holds (sizes, total, count) and every chunk is intact, but
 * the file reads other bytes than its hash (§12 item 13's byte scan). Only a
 * deep run reads the bytes. (Every chunk but the last stays at least
 * FastCDC's 64 KiB minimum, so the swap looks like a real cut.)
 */
export const manifestChunksReordered: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'manifest_chunks_reordered',
    'raise multiChunkFileShare or filesPerDrive',
    async (i) =>
      (
        await rows<{ file_hash: string; chunk_hashes: string[] }>(
          ctx.client,
          `SELECT m.file_hash, m.chunk_hashes FROM storage.chunk_manifests m
            WHERE ${MANIFEST_FILTER} AND m.chunk_hashes[1] <> m.chunk_hashes[2]
              AND (m.chunk_count >= 3 OR m.chunk_sizes[2] >= 65536)
            ORDER BY hashtextextended(m.file_hash, $2::bigint + 53 + $3::bigint) LIMIT 1`,
          [hashes(ctx), ctx.options.seed, i],
        )
      )[0],
    (m) => {
      ctx.usedHashes.add(m.file_hash);
      for (const h of m.chunk_hashes) ctx.usedHashes.add(h);
    },
  );
  for (const m of picks) {
    await ctx.client.query(
      `UPDATE storage.chunk_manifests
          SET chunk_hashes = chunk_hashes[2:2] || chunk_hashes[1:1] || chunk_hashes[3:],
              chunk_sizes = chunk_sizes[2:2] || chunk_sizes[1:1] || chunk_sizes[3:]
        WHERE file_hash = $1`,
      [m.file_hash],
    );
  }
  return picks.map((m) => ({
    type: 'manifest',
    id: m.file_hash,
    label: `manifest ${m.file_hash.slice(0, 12)}… (${m.chunk_hashes.length} chunks): chunks 1 and 2 swapped`,
    detail: { chunkHashes: m.chunk_hashes },
  }));
};
