import { type Blake3, blobBytes, STREAM } from './blob-content.js';
import { DatasetError } from './errors.js';
import { expectedFindings, FAULT_EXPECTATIONS, type FaultName } from './faults.js';
import type { ResolvedDatasetOptions } from './options.js';
import { Prng } from './prng.js';
import type { FaultRecord, FaultResource } from './report.js';
import { rows, type SqlClient, toInt } from './sql-client.js';

/** A blob-storage change to make after the rows are committed. */
export type StorageFaultAction =
  | { readonly type: 'delete'; readonly hash: string }
  | { readonly type: 'put'; readonly hash: string; readonly bytes: Uint8Array; readonly modifiedAt: Date };

interface FaultContext {
  readonly client: SqlClient;
  readonly options: ResolvedDatasetOptions;
  readonly blake3: Blake3;
  /** Drives an earlier fault touched; later faults pick elsewhere. */
  readonly usedDrives: Set<string>;
  /** Blobs an earlier fault's files point at. */
  readonly usedBlobs: Set<string>;
  readonly storage: StorageFaultAction[];
  readonly now: Date;
}

type Injector = (ctx: FaultContext) => Promise<FaultResource[]>;

const MEDIA = ['audio/mpeg', 'image/jpeg'];
const DAY_MS = 86_400_000;

function notApplicable(fault: FaultName, wanted: number, found: number, advice: string): never {
  throw new DatasetError(
    'FAULT_NOT_APPLICABLE',
    `fault ${fault} needs ${wanted} candidate${wanted === 1 ? '' : 's'} but the clean dataset has ${found}: ${advice}`,
  );
}

function excluded(ctx: FaultContext): string[] {
  return [...ctx.usedDrives];
}

function n(ctx: FaultContext): number {
  return ctx.options.faultsPerKind;
}

interface DriveRow {
  drive_id: string;
  username: string;
  drive_name: string;
}

function driveLabel(r: DriveRow): string {
  return `${r.username}/${r.drive_name}`;
}

const driveDrift: Injector = async (ctx) => {
  const picks = await rows<{
    a_id: string;
    b_id: string;
    username: string;
    a_name: string;
    b_name: string;
    a_used: string;
    b_used: string;
  }>(
    ctx.client,
    `SELECT d0.id AS a_id, d1.id AS b_id, d0.username, d0.name AS a_name, d1.name AS b_name,
            a.used_bytes AS a_used, b.used_bytes AS b_used
       FROM ds_drives d0
       JOIN ds_drives d1 ON d1.user_no = d0.user_no AND d1.drive_idx = 1
       JOIN storage.drives a ON a.id = d0.id
       JOIN storage.drives b ON b.id = d1.id
      WHERE d0.drive_idx = 0 AND b.used_bytes > 0
        AND NOT (d0.id = ANY($1::uuid[])) AND NOT (d1.id = ANY($1::uuid[]))
      ORDER BY hashint8extended(d0.user_no, $2::bigint)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx)],
  );
  if (picks.length < n(ctx)) {
    notApplicable(
      'drive_used_bytes_drift',
      n(ctx),
      picks.length,
      'it needs users with two non-empty drives: raise users or secondDriveShare',
    );
  }
  const out: FaultResource[] = [];
  for (const p of picks) {
    const aUsed = toInt(p.a_used);
    const bUsed = toInt(p.b_used);
    const delta = Math.max(1, Math.floor(bUsed / 3));
    await ctx.client.query('UPDATE storage.drives SET used_bytes = used_bytes + $2::bigint WHERE id = $1', [
      p.a_id,
      delta,
    ]);
    await ctx.client.query('UPDATE storage.drives SET used_bytes = used_bytes - $2::bigint WHERE id = $1', [
      p.b_id,
      delta,
    ]);
    ctx.usedDrives.add(p.a_id).add(p.b_id);
    out.push(
      {
        type: 'drive',
        id: p.a_id,
        label: `${p.username}/${p.a_name}`,
        detail: { storedBytes: aUsed + delta, expectedBytes: aUsed },
      },
      {
        type: 'drive',
        id: p.b_id,
        label: `${p.username}/${p.b_name}`,
        detail: { storedBytes: bUsed - delta, expectedBytes: bUsed },
      },
    );
  }
  return out;
};

const userDrift: Injector = async (ctx) => {
  const picks = await rows<{ id: string; username: string; used: string; drive_ids: string[] }>(
    ctx.client,
    `SELECT u.id, u.username, au.storage_used_bytes AS used, array_agg(d.id::text) AS drive_ids
       FROM ds_users u
       JOIN auth.users au ON au.id = u.id
       JOIN ds_drives d ON d.user_no = u.user_no
      GROUP BY u.user_no, u.id, u.username, au.storage_used_bytes
     HAVING NOT bool_or(d.id = ANY($1::uuid[]))
      ORDER BY hashint8extended(u.user_no, $2::bigint + 1)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx)],
  );
  if (picks.length < n(ctx)) notApplicable('user_used_bytes_drift', n(ctx), picks.length, 'raise users');
  // One client runs one statement at a time (pg 9 refuses queued queries): one UPDATE after another.
  const resources: FaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const delta = 1_048_576 + i * 4096;
    await ctx.client.query(
      'UPDATE auth.users SET storage_used_bytes = storage_used_bytes + $2::bigint WHERE id = $1',
      [p.id, delta],
    );
    for (const d of p.drive_ids) ctx.usedDrives.add(d);
    const used = toInt(p.used);
    resources.push({
      type: 'user',
      id: p.id,
      label: p.username,
      detail: { storedBytes: used + delta, expectedBytes: used },
    });
  }
  return resources;
};

const liveFolderUnderTrashedParent: Injector = async (ctx) => {
  const picks = await rows<DriveRow & { id: string; path: string }>(
    ctx.client,
    `SELECT f.id, f.path, d.id AS drive_id, d.username, d.name AS drive_name
       FROM storage.folders f JOIN ds_drives d ON d.id = f.drive_id
      WHERE f.is_trashed AND NOT (d.id = ANY($1::uuid[]))
      ORDER BY hashtextextended(d.drive_no || ':' || f.path, $2::bigint)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx)],
  );
  if (picks.length < n(ctx)) {
    notApplicable(
      'live_folder_under_trashed_parent',
      n(ctx),
      picks.length,
      'raise trashedFolderShare or users',
    );
  }
  const out: FaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const [row] = await rows<{ id: string; path: string }>(
      ctx.client,
      `INSERT INTO storage.folders (drive_id, parent_id, name, created_at, updated_at)
       VALUES ($1, $2, $3, now() - interval '3 days', now() - interval '3 days')
       RETURNING id, path`,
      [p.drive_id, p.id, `Restored ${i + 1}`],
    );
    if (!row) throw new Error('internal: folder insert returned nothing');
    out.push({
      type: 'folder',
      id: row.id,
      label: `${driveLabel(p)}:${row.path}`,
      detail: { parentId: p.id, parentPath: p.path },
    });
  }
  for (const p of picks) ctx.usedDrives.add(p.drive_id);
  return out;
};

const liveFileUnderTrashedFolder: Injector = async (ctx) => {
  const picks = await rows<DriveRow & { id: string; name: string; folder_id: string; path: string }>(
    ctx.client,
    `SELECT fi.id, fi.name, fo.id AS folder_id, fo.path, d.id AS drive_id, d.username, d.name AS drive_name
       FROM storage.files fi
       JOIN storage.folders fo ON fo.id = fi.folder_id
       JOIN ds_drives d ON d.id = fi.drive_id
      WHERE fi.is_trashed AND fo.is_trashed AND NOT (d.id = ANY($1::uuid[]))
      ORDER BY hashtextextended(fi.name, $2::bigint)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx)],
  );
  if (picks.length < n(ctx)) {
    notApplicable(
      'live_file_under_trashed_folder',
      n(ctx),
      picks.length,
      'raise trashedFolderShare or filesPerUser',
    );
  }
  await ctx.client.query(
    'UPDATE storage.files SET is_trashed = false, trashed_at = NULL WHERE id = ANY($1::uuid[])',
    [picks.map((p) => p.id)],
  );
  for (const p of picks) ctx.usedDrives.add(p.drive_id);
  return picks.map((p) => ({
    type: 'file',
    id: p.id,
    label: `${driveLabel(p)}:${p.path}/${p.name}`,
    detail: { folderId: p.folder_id, folderPath: p.path },
  }));
};

async function pickLiveLeafFolders(ctx: FaultContext, fault: FaultName, salt: number) {
  const picks = await rows<DriveRow & { id: string; path: string; lpath: string }>(
    ctx.client,
    `SELECT f.id, f.path, f.lpath::text AS lpath, d.id AS drive_id, d.username, d.name AS drive_name
       FROM storage.folders f JOIN ds_drives d ON d.id = f.drive_id
      WHERE NOT f.is_trashed AND NOT (d.id = ANY($1::uuid[]))
        AND NOT EXISTS (SELECT 1 FROM storage.folders c WHERE c.parent_id = f.id)
      ORDER BY hashtextextended(d.drive_no || ':' || f.path, $2::bigint + $4::bigint)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx), salt],
  );
  if (picks.length < n(ctx)) notApplicable(fault, n(ctx), picks.length, 'raise users');
  for (const p of picks) ctx.usedDrives.add(p.drive_id);
  return picks;
}

const wrongFolderPath: Injector = async (ctx) => {
  const picks = await pickLiveLeafFolders(ctx, 'wrong_folder_path', 11);
  const out: FaultResource[] = [];
  for (const p of picks) {
    // Columns other than parent_id/name do not fire the path triggers.
    const [row] = await rows<{ path: string }>(
      ctx.client,
      `UPDATE storage.folders SET path = '/Stale' || path WHERE id = $1 RETURNING path`,
      [p.id],
    );
    out.push({
      type: 'folder',
      id: p.id,
      label: `${driveLabel(p)}:${p.path}`,
      detail: { storedPath: row?.path, expectedPath: p.path },
    });
  }
  return out;
};

const wrongFolderLpath: Injector = async (ctx) => {
  const picks = await pickLiveLeafFolders(ctx, 'wrong_folder_lpath', 13);
  const out: FaultResource[] = [];
  for (const p of picks) {
    const [row] = await rows<{ lpath: string }>(
      ctx.client,
      `UPDATE storage.folders
          SET lpath = subltree(lpath, 0, nlevel(lpath) - 1) || text2ltree(md5(path || $2::text))
        WHERE id = $1 RETURNING lpath::text AS lpath`,
      [p.id, String(ctx.options.seed)],
    );
    out.push({
      type: 'folder',
      id: p.id,
      label: `${driveLabel(p)}:${p.path}`,
      detail: { storedLpath: row?.lpath, expectedLpath: p.lpath },
    });
  }
  return out;
};

async function pickLiveNonMediaFiles(
  ctx: FaultContext,
  fault: FaultName,
  salt: number,
  knownBlobType = false,
) {
  const picks = await rows<
    DriveRow & {
      id: string;
      name: string;
      blob_hash: string;
      size: string;
      blob_size: string;
      path: string | null;
      owner_id: string;
    }
  >(
    ctx.client,
    `SELECT fi.id, fi.name, fi.blob_hash, fi.size, b.size AS blob_size, fo.path,
            d.id AS drive_id, d.username, d.name AS drive_name, u.id AS owner_id
       FROM storage.files fi
       JOIN ds_drives d ON d.id = fi.drive_id
       JOIN ds_users u ON u.user_no = d.user_no
       JOIN storage.blobs b ON b.hash = fi.blob_hash
       LEFT JOIN storage.folders fo ON fo.id = fi.folder_id
      WHERE NOT fi.is_trashed AND (fo.id IS NULL OR NOT fo.is_trashed)
        AND fi.mime_type <> ALL($4::text[]) AND NOT (d.id = ANY($1::uuid[]))
        ${knownBlobType ? "AND COALESCE(b.content_type, 'application/octet-stream') <> 'application/octet-stream'" : ''}
      ORDER BY (b.ref_count >= 2) DESC, hashtextextended(fi.name, $2::bigint + $5::bigint)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx), MEDIA, salt],
  );
  if (picks.length < n(ctx)) notApplicable(fault, n(ctx), picks.length, 'raise users or filesPerUser');
  for (const p of picks) ctx.usedDrives.add(p.drive_id);
  return picks;
}

const missingBlobRow: Injector = async (ctx) => {
  const picks = await pickLiveNonMediaFiles(ctx, 'missing_blob_row', 17);
  const out: FaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    // Fresh bytes of the file's size: their row and bytes never exist, as if both were deleted.
    const hash = ctx.blake3.hex(blobBytes(ctx.options.seed, STREAM.faultBytes, i, toInt(p.size), 'other'));
    // The files triggers refuse a reference to a blob without a row (0007),
    // so the row exists while the file is pointed at it and goes right after:
    // the state a lost row leaves behind.
    await ctx.client.query(
      'INSERT INTO storage.blobs (hash, size) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING',
      [hash, p.size],
    );
    await ctx.client.query('UPDATE storage.files SET blob_hash = $2 WHERE id = $1', [p.id, hash]);
    await ctx.client.query('DELETE FROM storage.blobs WHERE hash = $1', [hash]);
    ctx.usedBlobs.add(p.blob_hash);
    out.push({
      type: 'file',
      id: p.id,
      label: `${driveLabel(p)}:${p.path ?? ''}/${p.name}`,
      detail: { blobHash: hash, previousBlobHash: p.blob_hash, size: toInt(p.size) },
    });
  }
  return out;
};

const blobSizeMismatch: Injector = async (ctx) => {
  const picks = await pickLiveNonMediaFiles(ctx, 'blob_size_mismatch', 19);
  const out: FaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const delta = 1000 + i * 7;
    // Keep the accounting right, so only the mismatch remains.
    await ctx.client.query('UPDATE storage.files SET size = size + $2::bigint WHERE id = $1', [p.id, delta]);
    await ctx.client.query('UPDATE storage.drives SET used_bytes = used_bytes + $2::bigint WHERE id = $1', [
      p.drive_id,
      delta,
    ]);
    await ctx.client.query(
      'UPDATE auth.users SET storage_used_bytes = storage_used_bytes + $2::bigint WHERE id = $1',
      [p.owner_id, delta],
    );
    ctx.usedBlobs.add(p.blob_hash);
    out.push({
      type: 'file',
      id: p.id,
      label: `${driveLabel(p)}:${p.path ?? ''}/${p.name}`,
      detail: { fileSize: toInt(p.size) + delta, blobSize: toInt(p.blob_size), blobHash: p.blob_hash },
    });
  }
  return out;
};

const orphanBlobOnDisk: Injector = async (ctx) => {
  const prng = new Prng(ctx.options.seed, STREAM.faultBytes, 1);
  const out: FaultResource[] = [];
  for (let i = 0; i < n(ctx); i++) {
    const size = prng.int(ctx.options.blobSize.min, ctx.options.blobSize.max);
    const bytes = blobBytes(ctx.options.seed, STREAM.faultBytes, 1000 + i, size, 'other');
    const hash = ctx.blake3.hex(bytes);
    const modifiedAt = new Date(ctx.now.getTime() - 3 * DAY_MS);
    ctx.storage.push({ type: 'put', hash, bytes, modifiedAt });
    out.push({
      type: 'blob',
      id: hash,
      label: `orphan blob ${i + 1} (${size} B)`,
      detail: { size, modifiedAt },
    });
  }
  return out;
};

/**
 * Why blob_bytes_missing found too few blobs: a candidate blob's files must all
 * lie in drives no earlier fault took, so it needs few files per blob.
 */
function blobBytesMissingAdvice(ctx: FaultContext): string {
  const files = ctx.options.users * ctx.options.filesPerUser;
  const perBlob = files / Math.max(1, ctx.options.blobsOnDisk);
  return (
    `it needs referenced, non-media blobs whose files all lie outside the ${ctx.usedDrives.size} drive(s) the earlier faults took; ` +
    `here each blob is shared by about ${perBlob.toFixed(1)} files (users x files-per-user / blobs-on-disk = ` +
    `${ctx.options.users} x ${ctx.options.filesPerUser} / ${ctx.options.blobsOnDisk}), so almost every blob has a file in a taken drive. ` +
    `Keep it at about 2 files per blob or fewer (blobs-on-disk >= ${Math.ceil(files / 2)}), and with --faults all use ` +
    `at least ${ctx.usedDrives.size + 8} users so some drives stay untouched`
  );
}

const blobBytesMissing: Injector = async (ctx) => {
  const picks = await rows<{ hash: string; size: string; blob_no: number; file_ids: string[] }>(
    ctx.client,
    `SELECT b.hash, b.size, sb.blob_no,
            (SELECT array_agg(f.id::text ORDER BY f.id) FROM storage.files f WHERE f.blob_hash = b.hash) AS file_ids
       FROM ds_blobs sb JOIN storage.blobs b ON b.hash = sb.hash
      WHERE b.ref_count >= 1 AND b.content_type <> ALL($4::text[]) AND NOT (b.hash = ANY($5::text[]))
        AND NOT EXISTS (SELECT 1 FROM storage.files f WHERE f.blob_hash = b.hash AND f.drive_id = ANY($1::uuid[]))
      ORDER BY hashtextextended(b.hash, $2::bigint)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx), MEDIA, [...ctx.usedBlobs]],
  );
  if (picks.length < n(ctx))
    notApplicable('blob_bytes_missing', n(ctx), picks.length, blobBytesMissingAdvice(ctx));
  return picks.map((p) => {
    ctx.storage.push({ type: 'delete', hash: p.hash });
    ctx.usedBlobs.add(p.hash);
    return {
      type: 'blob',
      id: p.hash,
      label: `blob #${p.blob_no}`,
      detail: { size: toInt(p.size), fileIds: p.file_ids },
    } satisfies FaultResource;
  });
};

const expiredGrants: Injector = async (ctx) => {
  if (ctx.options.users < 2)
    notApplicable('expired_grants', 2, ctx.options.users, 'it needs at least 2 users');
  const inserted = await rows<{ id: string; subject: string; owner: string; expires_at: Date }>(
    ctx.client,
    `WITH picks AS (
       SELECT i, s.id AS subject_id, s.username AS subject, o.id AS owner_id, o.username AS owner, d.id AS drive_id
         FROM generate_series(0, $1::int - 1) i
         JOIN ds_users s ON s.user_no = (i * 7) % $2::int
         JOIN ds_users o ON o.user_no = ((i * 7) % $2::int + 1) % $2::int
         JOIN ds_drives d ON d.user_no = o.user_no AND d.drive_idx = 0
     ), ins AS (
       INSERT INTO storage.role_grants (subject_id, resource_type, resource_id, role, granted_by, created_at, expires_at)
       SELECT subject_id, 'drive', drive_id, 'viewer', owner_id, now() - interval '10 days',
              now() - interval '2 days' - make_interval(hours => i)
         FROM picks ORDER BY i
       RETURNING id, subject_id, granted_by, expires_at
     )
     SELECT ins.id, p.subject, p.owner, ins.expires_at
       FROM ins JOIN picks p
         ON p.subject_id = ins.subject_id AND p.owner_id = ins.granted_by
        AND ins.expires_at = now() - interval '2 days' - make_interval(hours => p.i)
      ORDER BY p.i`,
    [n(ctx), ctx.options.users],
  );
  return inserted.map((g) => ({
    type: 'grant',
    id: g.id,
    label: `${g.subject} → drive of ${g.owner}`,
    detail: { expiresAt: g.expires_at },
  }));
};

const oldTrash: Injector = async (ctx) => {
  const roots = await rows<DriveRow & { id: string; path: string; lpath: string; subtree: string }>(
    ctx.client,
    `WITH cand AS (
       SELECT f.id, f.path, f.lpath, d.id AS drive_id, d.username, d.name AS drive_name, d.drive_no
         FROM storage.folders f
         JOIN ds_drives d ON d.id = f.drive_id
         LEFT JOIN storage.folders p ON p.id = f.parent_id
        WHERE f.is_trashed AND (p.id IS NULL OR NOT p.is_trashed) AND NOT (d.id = ANY($1::uuid[]))
        ORDER BY hashtextextended(d.drive_no || ':' || f.path, $2::bigint + 23)
        LIMIT 50
     )
     SELECT c.id, c.path, c.lpath::text AS lpath, c.drive_id, c.username, c.drive_name,
            (SELECT count(*) FROM storage.folders s WHERE s.drive_id = c.drive_id AND s.lpath <@ c.lpath) AS subtree
       FROM cand c
      ORDER BY subtree, hashtextextended(c.drive_no || ':' || c.path, $2::bigint + 23)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx)],
  );
  const out: FaultResource[] = [];
  const rootDrives = new Set(roots.map((r) => r.drive_id));
  for (const [i, r] of roots.entries()) {
    const ago = `${45 * 24 + i} hours`;
    const touched = await rows<{ type: 'folder' | 'file'; id: string; label: string }>(
      ctx.client,
      `WITH fo AS (
         UPDATE storage.folders s
            SET trashed_at = now() - $3::interval, updated_at = now() - $3::interval,
                created_at = LEAST(s.created_at, now() - interval '60 days')
          WHERE s.drive_id = $1 AND s.lpath <@ $2::ltree
         RETURNING s.id, s.path
       ), fi AS (
         UPDATE storage.files f
            SET trashed_at = now() - $3::interval, updated_at = now() - $3::interval,
                created_at = LEAST(f.created_at, now() - interval '60 days')
           FROM fo WHERE f.folder_id = fo.id
         RETURNING f.id, fo.path || '/' || f.name AS label
       )
       SELECT 'folder' AS type, id, path AS label FROM fo
       UNION ALL SELECT 'file' AS type, id, label FROM fi
       ORDER BY type DESC, label`,
      [r.drive_id, r.lpath, ago],
    );
    for (const t of touched) {
      out.push({
        type: t.type,
        id: t.id,
        label: `${driveLabel(r)}:${t.label}`,
        detail: { trashRootId: r.id, trashedAgo: ago },
      });
    }
  }
  // Standalone trashed files (in a live folder or at a drive root), in other drives.
  const files = await rows<DriveRow & { id: string; name: string; path: string | null }>(
    ctx.client,
    `SELECT fi.id, fi.name, fo.path, d.id AS drive_id, d.username, d.name AS drive_name
       FROM storage.files fi
       JOIN ds_drives d ON d.id = fi.drive_id
       LEFT JOIN storage.folders fo ON fo.id = fi.folder_id
      WHERE fi.is_trashed AND (fo.id IS NULL OR NOT fo.is_trashed) AND NOT (d.id = ANY($1::uuid[]))
      ORDER BY hashtextextended(fi.name, $2::bigint + 29)
      LIMIT $3::int`,
    [[...excluded(ctx), ...rootDrives], ctx.options.seed, n(ctx)],
  );
  for (const [i, f] of files.entries()) {
    const ago = `${45 * 24 + 12 + i} hours`;
    await ctx.client.query(
      `UPDATE storage.files SET trashed_at = now() - $2::interval, updated_at = now() - $2::interval,
              created_at = LEAST(created_at, now() - interval '60 days')
        WHERE id = $1`,
      [f.id, ago],
    );
    out.push({
      type: 'file',
      id: f.id,
      label: `${driveLabel(f)}:${f.path ?? ''}/${f.name}`,
      detail: { trashedAgo: ago },
    });
  }
  if (roots.length === 0 && files.length === 0) {
    notApplicable('old_trash', n(ctx), 0, 'raise trashedFolderShare or trashedFileShare');
  }
  for (const d of rootDrives) ctx.usedDrives.add(d);
  for (const f of files) ctx.usedDrives.add(f.drive_id);
  return out;
};

const blobRefCountDrift: Injector = async (ctx) => {
  const picks = await rows<{ hash: string; ref_count: number; blob_no: number }>(
    ctx.client,
    `SELECT b.hash, b.ref_count, sb.blob_no
       FROM ds_blobs sb JOIN storage.blobs b ON b.hash = sb.hash
      WHERE b.ref_count >= 1 AND NOT (b.hash = ANY($4::text[]))
        AND NOT EXISTS (SELECT 1 FROM storage.files f WHERE f.blob_hash = b.hash AND f.drive_id = ANY($1::uuid[]))
      ORDER BY hashtextextended(b.hash, $2::bigint + 31)
      LIMIT $3::int`,
    [excluded(ctx), ctx.options.seed, n(ctx), [...ctx.usedBlobs]],
  );
  if (picks.length < n(ctx)) notApplicable('blob_ref_count_drift', n(ctx), picks.length, 'raise users');
  for (const p of picks) {
    await ctx.client.query('UPDATE storage.blobs SET ref_count = ref_count + 2 WHERE hash = $1', [p.hash]);
    ctx.usedBlobs.add(p.hash);
  }
  return picks.map((p) => ({
    type: 'blob',
    id: p.hash,
    label: `blob #${p.blob_no}`,
    detail: { storedRefCount: p.ref_count + 2, fileCount: p.ref_count },
  }));
};

const blobOrphanedAtUnset: Injector = async (ctx) => {
  const prng = new Prng(ctx.options.seed, STREAM.faultBytes, 2);
  const out: FaultResource[] = [];
  for (let i = 0; i < n(ctx); i++) {
    const size = prng.int(ctx.options.blobSize.min, ctx.options.blobSize.max);
    const bytes = blobBytes(ctx.options.seed, STREAM.faultBytes, 2000 + i, size, 'other');
    const hash = ctx.blake3.hex(bytes);
    // The insert trigger marks a ref_count-0 row orphaned; clearing it is the fault.
    await ctx.client.query(
      `INSERT INTO storage.blobs (hash, size, ref_count, content_type, created_at)
       VALUES ($1, $2, 0, 'application/pdf', now() - interval '3 days')`,
      [hash, size],
    );
    await ctx.client.query('UPDATE storage.blobs SET orphaned_at = NULL WHERE hash = $1', [hash]);
    ctx.storage.push({ type: 'put', hash, bytes, modifiedAt: new Date(ctx.now.getTime() - 3 * DAY_MS) });
    ctx.usedBlobs.add(hash);
    out.push({ type: 'blob', id: hash, label: `never-marked blob ${i + 1} (${size} B)`, detail: { size } });
  }
  return out;
};

async function insertFaultGrants(
  ctx: FaultContext,
  fault: FaultName,
  values: (i: number) => { type: string; resourceId: string | null; expiresAgo: string | null },
): Promise<FaultResource[]> {
  if (ctx.options.users < 2) notApplicable(fault, 2, ctx.options.users, 'it needs at least 2 users');
  const out: FaultResource[] = [];
  for (let i = 0; i < n(ctx); i++) {
    const v = values(i);
    const [g] = await rows<{ id: string; resource_id: string; subject: string }>(
      ctx.client,
      `WITH s AS (SELECT id, username FROM ds_users WHERE user_no = $1::int)
       INSERT INTO storage.role_grants (subject_id, resource_type, resource_id, role, created_at, expires_at)
       SELECT s.id, $2, COALESCE($3::uuid, md5($5::text)::uuid), 'viewer', now() - interval '40 days',
              CASE WHEN $4::interval IS NULL THEN NULL ELSE now() - $4::interval END
         FROM s
       RETURNING id, resource_id, (SELECT username FROM s) AS subject`,
      [
        (i * 5 + 3) % ctx.options.users,
        v.type,
        v.resourceId,
        v.expiresAgo,
        `${ctx.options.seed}:${fault}:${i}`,
      ],
    );
    if (!g) throw new Error('internal: grant insert returned nothing');
    out.push({
      type: 'grant',
      id: g.id,
      label: `${g.subject} → ${v.type} ${i + 1}`,
      detail: { resourceType: v.type, resourceId: g.resource_id, expiresAgo: v.expiresAgo },
    });
  }
  return out;
}

// A file id nobody has: an md5 of (seed, fault, i) as a UUID (deterministic per seed; the schema's ids are v7).
const danglingGrant: Injector = (ctx) =>
  insertFaultGrants(ctx, 'dangling_grant', () => ({ type: 'file', resourceId: null, expiresAgo: null }));

const lingeringExpiredGrant: Injector = async (ctx) => {
  const drives = await rows<{ id: string }>(
    ctx.client,
    'SELECT id FROM ds_drives ORDER BY drive_no LIMIT $1::int',
    [n(ctx)],
  );
  return insertFaultGrants(ctx, 'lingering_expired_grant', (i) => ({
    type: 'drive',
    resourceId: drives[i % Math.max(1, drives.length)]?.id ?? null,
    expiresAgo: `${30 + i} days`,
  }));
};

const folderUnderOtherDrive: Injector = async (ctx) => {
  const picks = await pickLiveLeafFolders(ctx, 'folder_under_other_drive', 37);
  const out: FaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const [target] = await rows<{ id: string; drive_id: string; path: string }>(
      ctx.client,
      `SELECT f.id, f.drive_id, f.path FROM storage.folders f JOIN ds_drives dd ON dd.id = f.drive_id
        WHERE f.parent_id IS NULL AND NOT f.is_trashed AND f.drive_id <> $1 AND NOT (f.drive_id = ANY($2::uuid[]))
        ORDER BY hashtextextended(dd.drive_no || ':' || f.path, $3::bigint + $4::bigint) LIMIT 1`,
      [p.drive_id, excluded(ctx), ctx.options.seed, i],
    );
    if (!target) notApplicable('folder_under_other_drive', n(ctx), i, 'raise users');
    await ctx.client.query('UPDATE storage.folders SET parent_id = $2 WHERE id = $1', [p.id, target.id]);
    ctx.usedDrives.add(target.drive_id);
    out.push({
      type: 'folder',
      id: p.id,
      label: `${driveLabel(p)}:${p.path}`,
      detail: { parentId: target.id, parentDriveId: target.drive_id, parentPath: target.path },
    });
  }
  return out;
};

const folderParentCycle: Injector = async (ctx) => {
  const picks = await pickLiveLeafFolders(ctx, 'folder_parent_cycle', 41);
  const out: FaultResource[] = [];
  await ctx.client.query('ALTER TABLE storage.folders DISABLE TRIGGER folders_cascade_path');
  try {
    for (const p of picks) {
      const [b] = await rows<{ id: string; path: string }>(
        ctx.client,
        `INSERT INTO storage.folders (drive_id, parent_id, name, created_at, updated_at)
         VALUES ($1, $2, 'Loop', now() - interval '3 days', now() - interval '3 days') RETURNING id, path`,
        [p.drive_id, p.id],
      );
      if (!b) throw new Error('internal: folder insert returned nothing');
      await ctx.client.query('UPDATE storage.folders SET parent_id = $2 WHERE id = $1', [p.id, b.id]);
      out.push(
        { type: 'folder', id: p.id, label: `${driveLabel(p)}:${p.path}`, detail: { cycleWith: b.id } },
        { type: 'folder', id: b.id, label: `${driveLabel(p)}:${b.path}`, detail: { cycleWith: p.id } },
      );
    }
  } finally {
    await ctx.client.query('ALTER TABLE storage.folders ENABLE TRIGGER folders_cascade_path');
  }
  return out;
};

const fileInOtherDriveFolder: Injector = async (ctx) => {
  const picks = await pickLiveNonMediaFiles(ctx, 'file_in_other_drive_folder', 43);
  const out: FaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    if (p.path === null) continue; // at a drive root: no folder to disagree with
    const [target] = await rows<{ id: string; owner_id: string }>(
      ctx.client,
      `SELECT d.id, d.owner_id FROM storage.drives d JOIN ds_drives dd ON dd.id = d.id
        WHERE d.id <> $1 AND NOT (d.id = ANY($2::uuid[]))
        ORDER BY hashint8extended(dd.drive_no, $3::bigint + $4::bigint) LIMIT 1`,
      [p.drive_id, excluded(ctx), ctx.options.seed, i],
    );
    if (!target) notApplicable('file_in_other_drive_folder', n(ctx), i, 'raise users');
    const size = toInt(p.size);
    await ctx.client.query('UPDATE storage.files SET drive_id = $2 WHERE id = $1', [p.id, target.id]);
    // Move the bytes between the drives and the owners' envelopes: only the mismatch remains.
    await ctx.client.query('UPDATE storage.drives SET used_bytes = used_bytes - $2::bigint WHERE id = $1', [
      p.drive_id,
      size,
    ]);
    await ctx.client.query('UPDATE storage.drives SET used_bytes = used_bytes + $2::bigint WHERE id = $1', [
      target.id,
      size,
    ]);
    await ctx.client.query(
      'UPDATE auth.users SET storage_used_bytes = storage_used_bytes - $2::bigint WHERE id = $1',
      [p.owner_id, size],
    );
    await ctx.client.query(
      'UPDATE auth.users SET storage_used_bytes = storage_used_bytes + $2::bigint WHERE id = $1',
      [target.owner_id, size],
    );
    ctx.usedDrives.add(target.id);
    ctx.usedBlobs.add(p.blob_hash);
    out.push({
      type: 'file',
      id: p.id,
      label: `${driveLabel(p)}:${p.path}/${p.name}`,
      detail: { driveId: target.id, folderDriveId: p.drive_id },
    });
  }
  if (out.length === 0) notApplicable('file_in_other_drive_folder', n(ctx), 0, 'raise foldersPerDrive');
  return out;
};

const fileMimeMismatch: Injector = async (ctx) => {
  // Its blob's content type must be known: application/octet-stream counts as unknown.
  const picks = await pickLiveNonMediaFiles(ctx, 'file_mime_mismatch', 47, true);
  for (const p of picks) {
    await ctx.client.query(
      "UPDATE storage.files SET mime_type = 'application/x-oxicloud-fault' WHERE id = $1",
      [p.id],
    );
    ctx.usedBlobs.add(p.blob_hash);
  }
  return picks.map((p) => ({
    type: 'file',
    id: p.id,
    label: `${driveLabel(p)}:${p.path ?? ''}/${p.name}`,
    detail: { mimeType: 'application/x-oxicloud-fault', blobHash: p.blob_hash },
  }));
};

const INJECTORS: Record<FaultName, Injector> = {
  drive_used_bytes_drift: driveDrift,
  user_used_bytes_drift: userDrift,
  live_folder_under_trashed_parent: liveFolderUnderTrashedParent,
  live_file_under_trashed_folder: liveFileUnderTrashedFolder,
  wrong_folder_path: wrongFolderPath,
  wrong_folder_lpath: wrongFolderLpath,
  missing_blob_row: missingBlobRow,
  blob_size_mismatch: blobSizeMismatch,
  orphan_blob_on_disk: orphanBlobOnDisk,
  blob_bytes_missing: blobBytesMissing,
  expired_grants: expiredGrants,
  old_trash: oldTrash,
  blob_ref_count_drift: blobRefCountDrift,
  blob_orphaned_at_unset: blobOrphanedAtUnset,
  dangling_grant: danglingGrant,
  lingering_expired_grant: lingeringExpiredGrant,
  folder_under_other_drive: folderUnderOtherDrive,
  folder_parent_cycle: folderParentCycle,
  file_in_other_drive_folder: fileInOtherDriveFolder,
  file_mime_mismatch: fileMimeMismatch,
};

/**
 * Applies the requested faults inside the generation's transaction (needs
 * the `ds_*` scratch tables) and returns their records plus the blob-storage
 * changes to make once the rows are committed.
 */
export async function injectDatabaseFaults(input: {
  client: SqlClient;
  options: ResolvedDatasetOptions;
  blake3: Blake3;
  onFault?: (done: number) => void;
}): Promise<{ records: FaultRecord[]; storageActions: StorageFaultAction[] }> {
  const [{ now } = { now: new Date() }] = await rows<{ now: Date }>(input.client, 'SELECT now() AS now');
  const ctx: FaultContext = {
    client: input.client,
    options: input.options,
    blake3: input.blake3,
    usedDrives: new Set(),
    usedBlobs: new Set(),
    storage: [],
    now,
  };
  const records: FaultRecord[] = [];
  for (const [i, fault] of input.options.faults.entries()) {
    const resources = await INJECTORS[fault](ctx);
    records.push({
      fault,
      expect: FAULT_EXPECTATIONS[fault],
      resourceIds: resources.map((r) => r.id),
      resources,
      findings: expectedFindings(fault, resources),
    });
    input.onFault?.(i + 1);
  }
  return { records, storageActions: ctx.storage };
}
