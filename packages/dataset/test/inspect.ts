/**
 * Direct SQL and disk inspection of a generated dataset, for the tests: one
 * query per invariant, each returning the ids that break it (empty = holds).
 */
import type { BlobStorage } from '@oxicloud/tenants';
import type pg from 'pg';

async function ids(pool: pg.Pool, sql: string): Promise<string[]> {
  const result = await pool.query(sql);
  return result.rows.map((r: { id: string }) => String(r.id)).sort();
}

/** Every anomaly class the faults produce, found by independent SQL (and a listing of the blob storage). */
export async function findAnomalies(pool: pg.Pool, blobs: BlobStorage) {
  const onDisk = await listAll(blobs);
  const rows = new Set(await ids(pool, 'SELECT hash AS id FROM storage.blobs'));
  const disk = new Set(onDisk.map((b) => b.hash));
  return {
    // Drive used_bytes against the sum of all its files, trashed included.
    driveDrift: await ids(
      pool,
      `SELECT d.id FROM storage.drives d
         LEFT JOIN (SELECT drive_id, sum(size) AS total FROM storage.files GROUP BY drive_id) s ON s.drive_id = d.id
        WHERE d.used_bytes <> COALESCE(s.total, 0)`,
    ),
    // User envelope against the sum of the user's drives ...
    userDriftVsDrives: await ids(
      pool,
      `SELECT u.id FROM auth.users u
         LEFT JOIN (SELECT owner_id, sum(used_bytes) AS total FROM storage.drives GROUP BY owner_id) s ON s.owner_id = u.id
        WHERE u.storage_used_bytes <> COALESCE(s.total, 0)`,
    ),
    // ... and against the sum of the user's files.
    userDriftVsFiles: await ids(
      pool,
      `SELECT u.id FROM auth.users u
         LEFT JOIN (SELECT d.owner_id, sum(f.size) AS total FROM storage.files f
                      JOIN storage.drives d ON d.id = f.drive_id GROUP BY d.owner_id) s ON s.owner_id = u.id
        WHERE u.storage_used_bytes <> COALESCE(s.total, 0)`,
    ),
    liveFolderUnderTrashed: await ids(
      pool,
      `SELECT c.id FROM storage.folders c JOIN storage.folders p ON p.id = c.parent_id
        WHERE p.is_trashed AND NOT c.is_trashed`,
    ),
    liveFileUnderTrashed: await ids(
      pool,
      `SELECT f.id FROM storage.files f JOIN storage.folders p ON p.id = f.folder_id
        WHERE p.is_trashed AND NOT f.is_trashed`,
    ),
    // Path and lpath against a reconstruction from the parent chain (names and ids only).
    pathMismatch: await ids(
      pool,
      `WITH RECURSIVE chain AS (
         SELECT id, '/' || name AS path FROM storage.folders WHERE parent_id IS NULL
         UNION ALL
         SELECT c.id, chain.path || '/' || c.name FROM storage.folders c JOIN chain ON c.parent_id = chain.id
       )
       SELECT f.id FROM storage.folders f JOIN chain ON chain.id = f.id WHERE f.path <> chain.path`,
    ),
    lpathMismatch: await ids(
      pool,
      `WITH RECURSIVE chain AS (
         SELECT id, storage.folder_label(id) AS lpath FROM storage.folders WHERE parent_id IS NULL
         UNION ALL
         SELECT c.id, chain.lpath || storage.folder_label(c.id) FROM storage.folders c JOIN chain ON c.parent_id = chain.id
       )
       SELECT f.id FROM storage.folders f JOIN chain ON chain.id = f.id WHERE f.lpath <> chain.lpath`,
    ),
    missingBlobRow: await ids(
      pool,
      'SELECT f.id FROM storage.files f WHERE NOT EXISTS (SELECT 1 FROM storage.blobs b WHERE b.hash = f.blob_hash)',
    ),
    blobSizeMismatch: await ids(
      pool,
      'SELECT f.id FROM storage.files f JOIN storage.blobs b ON b.hash = f.blob_hash WHERE f.size <> b.size',
    ),
    orphanOnDisk: [...disk].filter((h) => !rows.has(h)).sort(),
    bytesMissing: [...rows].filter((h) => !disk.has(h)).sort(),
    diskSizeMismatch: await (async () => {
      const sizes = new Map(
        (await pool.query('SELECT hash, size FROM storage.blobs')).rows.map(
          (r: { hash: string; size: string }) => [r.hash, Number(r.size)],
        ),
      );
      return onDisk.filter((b) => sizes.has(b.hash) && sizes.get(b.hash) !== b.size).map((b) => b.hash);
    })(),
    expiredGrants: await ids(pool, 'SELECT id FROM storage.role_grants WHERE expires_at < now()'),
    oldTrash: await ids(
      pool,
      `SELECT id FROM storage.folders WHERE is_trashed AND trashed_at < now() - interval '30 days'
       UNION ALL SELECT id FROM storage.files WHERE is_trashed AND trashed_at < now() - interval '30 days'`,
    ),
    // ref_count must equal the number of files pointing at the blob; orphaned_at set exactly when it is 0.
    refCountWrong: await ids(
      pool,
      `SELECT b.hash AS id FROM storage.blobs b
         LEFT JOIN (SELECT blob_hash, count(*) AS n FROM storage.files GROUP BY blob_hash) s ON s.blob_hash = b.hash
        WHERE b.ref_count <> COALESCE(s.n, 0) OR (b.ref_count = 0) <> (b.orphaned_at IS NOT NULL)`,
    ),
    unreferencedBlobs: await ids(pool, 'SELECT hash AS id FROM storage.blobs WHERE ref_count = 0'),
    // A trashed folder's children (folders and files) are trashed too.
    trashNotWholeSubtree: await ids(
      pool,
      `SELECT c.id FROM storage.folders c JOIN storage.folders p ON p.id = c.parent_id
        WHERE p.is_trashed AND NOT c.is_trashed
       UNION ALL
       SELECT f.id FROM storage.files f JOIN storage.folders p ON p.id = f.folder_id
        WHERE p.is_trashed AND NOT f.is_trashed`,
    ),
    youngRows: await ids(
      pool,
      `SELECT id::text AS id FROM auth.users WHERE created_at > now() - interval '1 hour'
       UNION ALL SELECT id::text FROM storage.drives WHERE created_at > now() - interval '1 hour'
       UNION ALL SELECT id::text FROM storage.folders WHERE created_at > now() - interval '1 hour'
       UNION ALL SELECT id::text FROM storage.files WHERE created_at > now() - interval '1 hour'
       UNION ALL SELECT hash FROM storage.blobs WHERE created_at > now() - interval '1 hour'
       UNION ALL SELECT id::text FROM storage.role_grants WHERE created_at > now() - interval '1 hour'`,
    ),
  };
}

export async function listAll(blobs: BlobStorage) {
  const out: { hash: string; size: number; modifiedAt?: Date }[] = [];
  let startAfter: string | null = null;
  for (;;) {
    const page = await blobs.list({ startAfter, limit: 1000 });
    out.push(...page);
    if (page.length < 1000) return out;
    startAfter = page[page.length - 1]?.hash ?? null;
  }
}

/** A digest of the dataset's natural content (names, paths, hashes, sizes, flags), without ids or times. */
export async function fingerprint(pool: pg.Pool): Promise<string> {
  const result = await pool.query(`
    SELECT md5(string_agg(x, E'\\n' ORDER BY x)) AS digest FROM (
      SELECT 'u|' || username || '|' || storage_used_bytes FROM auth.users
      UNION ALL
      SELECT 'd|' || u.username || '|' || d.name || '|' || d.used_bytes
        FROM storage.drives d JOIN auth.users u ON u.id = d.owner_id
      UNION ALL
      SELECT 'f|' || u.username || '|' || d.name || '|' || f.path || '|' || f.is_trashed || '|' || nlevel(f.lpath)
        FROM storage.folders f JOIN storage.drives d ON d.id = f.drive_id JOIN auth.users u ON u.id = d.owner_id
      UNION ALL
      SELECT 'F|' || u.username || '|' || d.name || '|' || COALESCE(fo.path, '') || '|' || fi.name || '|' ||
             fi.blob_hash || '|' || fi.size || '|' || fi.mime_type || '|' || fi.is_trashed
        FROM storage.files fi JOIN storage.drives d ON d.id = fi.drive_id JOIN auth.users u ON u.id = d.owner_id
        LEFT JOIN storage.folders fo ON fo.id = fi.folder_id
      UNION ALL
      SELECT 'b|' || hash || '|' || size || '|' || ref_count || '|' || COALESCE(content_type, '') FROM storage.blobs
      UNION ALL
      SELECT 'g|' || s.username || '|' || g.resource_type || '|' || g.role || '|' || (g.expires_at IS NULL)
        FROM storage.role_grants g JOIN auth.users s ON s.id = g.subject_id
    ) t(x)`);
  return String(result.rows[0]?.digest);
}
