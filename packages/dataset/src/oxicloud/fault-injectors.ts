/**
 * The injectors of the OxiCloud faults ({@link OXICLOUD_FAULT_NAMES}), run
 * inside the generation's transaction on the clean dataset (they read the
 * `oxi_*` scratch tables). Each picks resources no earlier fault touched
 * (drives, and content hashes: a file hash with its chunks), in an order
 * fixed by the seed and by names, paths and hashes (never ids), and
 * changes exactly one invariant; what it must keep right is kept right by
 * the same statements.
 */
import { blake3Hex } from '@oxicloud/storage';
import { blobBytes } from '../blob-content.js';
import { DatasetError } from '../errors.js';
import { Prng } from '../prng.js';
import { rows, type SqlClient, toInt } from '../sql-client.js';
import {
  OXICLOUD_FAULT_EXPECTATIONS,
  type OxiCloudFaultExpectation,
  type OxiCloudFaultName,
} from './faults.js';
import type { ResolvedOxiCloudDatasetOptions } from './options.js';
import { OXI_STREAM } from './plan.js';

/** One resource a fault touched. */
export interface OxiCloudFaultResource {
  readonly type: 'user' | 'drive' | 'folder' | 'file' | 'blob' | 'manifest' | 'grant' | 'thumbnail';
  /** UUID, or a hash for `blob`, `manifest` and `thumbnail`: the id the expected finding carries. */
  readonly id: string;
  /** A stable label (username, drive, path, file name, content hash): the same for the same seed, unlike ids. */
  readonly label: string;
  readonly detail: Readonly<Record<string, unknown>>;
}

/** One injected fault: the invariant it breaks and exactly the resources a check must report. */
export interface OxiCloudFaultRecord {
  readonly fault: OxiCloudFaultName;
  readonly expect: OxiCloudFaultExpectation;
  /** The ids of the findings (or, for the grant-expiry faults, of the grants a cleanup removes). */
  readonly resourceIds: readonly string[];
  readonly resources: readonly OxiCloudFaultResource[];
}

/** A change to make once the rows are committed: blob bytes (port) or thumbnail files (storage root). */
export type OxiCloudStorageAction =
  | { readonly type: 'delete'; readonly hash: string }
  | { readonly type: 'put'; readonly hash: string; readonly bytes: Uint8Array; readonly modifiedAt: Date }
  | { readonly type: 'thumbnail'; readonly hash: string };

interface Ctx {
  readonly client: SqlClient;
  readonly options: ResolvedOxiCloudDatasetOptions;
  readonly usedDrives: Set<string>;
  readonly usedHashes: Set<string>;
  readonly storage: OxiCloudStorageAction[];
  readonly hasStorageRoot: boolean;
  readonly now: Date;
}

type Injector = (ctx: Ctx) => Promise<OxiCloudFaultResource[]>;

const DAY_MS = 86_400_000;

function notApplicable(fault: OxiCloudFaultName, wanted: number, found: number, advice: string): never {
  throw new DatasetError(
    'FAULT_NOT_APPLICABLE',
    `fault ${fault} needs ${wanted} candidate${wanted === 1 ? '' : 's'} but the clean dataset has ${found}: ${advice}`,
  );
}

const n = (ctx: Ctx) => ctx.options.faultsPerKind;
const drives = (ctx: Ctx) => [...ctx.usedDrives];
const hashes = (ctx: Ctx) => [...ctx.usedHashes];

/** Runs `pick` (LIMIT 1, seeing the exclusions so far) `n` times; refuses the fault when one comes back empty. */
async function pickEach<T>(
  ctx: Ctx,
  fault: OxiCloudFaultName,
  advice: string,
  pick: (i: number) => Promise<T | undefined>,
  use: (row: T) => void,
): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n(ctx); i++) {
    const row = await pick(i);
    if (row === undefined) notApplicable(fault, n(ctx), i, advice);
    use(row);
    out.push(row);
  }
  return out;
}

/** Conditions on `m`: a multi-chunk manifest of this dataset that no earlier fault touched, chunks included. */
const MANIFEST_FILTER = `m.chunk_count >= 2 AND NOT (m.file_hash = ANY($1::text[])) AND NOT (m.chunk_hashes && $1::text[])
   AND EXISTS (SELECT 1 FROM storage.files f JOIN oxi_drives d ON d.id = f.drive_id WHERE f.blob_hash = m.file_hash)`;

const missingManifest: Injector = (ctx) =>
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

const missingChunkRow: Injector = async (ctx) => {
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

const missingBlobRow: Injector = async (ctx) => {
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
async function pickChunk(ctx: Ctx, salt: number, i: number) {
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

const blobBytesMissing: Injector = async (ctx) => {
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

/** Bytes of a fault: fresh ones no content has (a stream of their own). */
function faultBytes(ctx: Ctx, salt: number, i: number): Uint8Array {
  const size = new Prng(ctx.options.seed, OXI_STREAM.faultBytes, salt, i).int(1000, 20_000);
  return blobBytes(ctx.options.seed, OXI_STREAM.faultBytes, salt * 1000 + i, size, 'other');
}

const orphanBlobOnDisk: Injector = async (ctx) => {
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

const blobRefCountDrift: Injector = async (ctx) => {
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

const manifestRefCountDrift: Injector = async (ctx) => {
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

const manifestShapeMismatch: Injector = async (ctx) => {
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

const blobOrphanedAtUnset: Injector = async (ctx) => {
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

/** Keeps `users.storage_used_bytes` of a personal drive's owner in step with a change of that drive's bytes. */
async function addToDrive(ctx: Ctx, driveId: string, delta: number): Promise<void> {
  await ctx.client.query('UPDATE storage.drives SET used_bytes = used_bytes + $2::bigint WHERE id = $1', [
    driveId,
    delta,
  ]);
  await ctx.client.query(
    `UPDATE auth.users u SET storage_used_bytes = u.storage_used_bytes + $2::bigint
       FROM storage.drives d JOIN storage.role_grants g
         ON g.resource_type = 'drive' AND g.resource_id = d.id AND g.role = 'owner' AND g.subject_type = 'user'
      WHERE d.id = $1 AND d.kind = 'personal' AND u.id = g.subject_id AND NOT u.is_external`,
    [driveId, delta],
  );
}

interface FileRow {
  id: string;
  name: string;
  blob_hash: string;
  size: string;
  drive_id: string;
  label: string;
  folder_id: string;
}

/** A live file in a live folder, of a drive and a content no earlier fault touched. */
async function pickLiveFile(ctx: Ctx, salt: number, i: number, extra = ''): Promise<FileRow | undefined> {
  return (
    await rows<FileRow>(
      ctx.client,
      `SELECT f.id, f.name, f.blob_hash, f.size, f.drive_id, d.label, f.folder_id
         FROM storage.files f JOIN oxi_drives d ON d.id = f.drive_id JOIN storage.folders fo ON fo.id = f.folder_id
        WHERE NOT f.is_trashed AND NOT fo.is_trashed AND f.size > 0
          AND NOT (f.drive_id = ANY($1::uuid[])) AND NOT (f.blob_hash = ANY($2::text[])) ${extra}
        ORDER BY hashtextextended(f.name, $3::bigint + $4::bigint) LIMIT 1`,
      [drives(ctx), hashes(ctx), ctx.options.seed, salt * 1000 + i],
    )
  )[0];
}

const blobSizeMismatch: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'blob_size_mismatch',
    'raise users or filesPerDrive',
    (i) => pickLiveFile(ctx, 23, i),
    (p) => {
      ctx.usedDrives.add(p.drive_id);
      ctx.usedHashes.add(p.blob_hash);
    },
  );
  const out: OxiCloudFaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const delta = 1000 + i * 7;
    await ctx.client.query('UPDATE storage.files SET size = size + $2::bigint WHERE id = $1', [p.id, delta]);
    await addToDrive(ctx, p.drive_id, delta);
    out.push({
      type: 'file',
      id: p.id,
      label: `${p.label}:${p.name}`,
      detail: { fileSize: toInt(p.size) + delta, contentSize: toInt(p.size), blobHash: p.blob_hash },
    });
  }
  return out;
};

interface DriveRow {
  id: string;
  kind: string;
  label: string;
  used_bytes: string;
}

async function pickDrive(ctx: Ctx, salt: number, i: number, where: string): Promise<DriveRow | undefined> {
  return (
    await rows<DriveRow>(
      ctx.client,
      `SELECT d.id, d.kind, od.label, d.used_bytes FROM storage.drives d JOIN oxi_drives od ON od.id = d.id
        WHERE NOT (d.id = ANY($1::uuid[])) AND ${where}
        ORDER BY hashtextextended(od.label, $2::bigint + $3::bigint) LIMIT 1`,
      [drives(ctx), ctx.options.seed, salt * 1000 + i],
    )
  )[0];
}

const driveUsedBytesDrift: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'drive_used_bytes_drift',
    'raise users or sharedDrives',
    async (i) => (await pickDrive(ctx, 29, i, "d.kind = 'shared'")) ?? pickDrive(ctx, 29, i, 'true'),
    (p) => ctx.usedDrives.add(p.id),
  );
  const out: OxiCloudFaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const delta = 1_048_576 + i * 4096;
    // A personal drive's owner envelope follows, so it still adds up over the stored drives.
    await addToDrive(ctx, p.id, delta);
    out.push({
      type: 'drive',
      id: p.id,
      label: p.label,
      detail: { storedBytes: toInt(p.used_bytes) + delta, expectedBytes: toInt(p.used_bytes) },
    });
  }
  return out;
};

const userUsedBytesDrift: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'user_used_bytes_drift',
    'raise users',
    async (i) =>
      (
        await rows<{ id: string; username: string; used: string; drive_id: string }>(
          ctx.client,
          `SELECT u.id, u.username, au.storage_used_bytes AS used, d.id AS drive_id
             FROM oxi_users u JOIN auth.users au ON au.id = u.id
             JOIN oxi_drives d ON d.kind = 'personal' AND d.user_no = u.user_no
            WHERE NOT u.external AND NOT (d.id = ANY($1::uuid[]))
            ORDER BY hashtextextended(u.username, $2::bigint + $3::bigint) LIMIT 1`,
          [drives(ctx), ctx.options.seed, 31_000 + i],
        )
      )[0],
    (p) => ctx.usedDrives.add(p.drive_id),
  );
  const out: OxiCloudFaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const delta = 2_097_152 + i * 4096;
    await ctx.client.query(
      'UPDATE auth.users SET storage_used_bytes = storage_used_bytes + $2::bigint WHERE id = $1',
      [p.id, delta],
    );
    out.push({
      type: 'user',
      id: p.id,
      label: p.username,
      detail: { storedBytes: toInt(p.used) + delta, expectedBytes: toInt(p.used) },
    });
  }
  return out;
};

interface FolderRow {
  id: string;
  path: string;
  lpath: string;
  drive_id: string;
  label: string;
}

async function pickFolder(ctx: Ctx, salt: number, i: number, where: string): Promise<FolderRow | undefined> {
  return (
    await rows<FolderRow>(
      ctx.client,
      `SELECT f.id, f.path, f.lpath::text AS lpath, f.drive_id, d.label
         FROM storage.folders f JOIN oxi_drives d ON d.id = f.drive_id
        WHERE f.parent_id IS NOT NULL AND NOT (f.drive_id = ANY($1::uuid[])) AND ${where}
        ORDER BY hashtextextended(d.label || ':' || f.path, $2::bigint + $3::bigint) LIMIT 1`,
      [drives(ctx), ctx.options.seed, salt * 1000 + i],
    )
  )[0];
}

const LIVE_LEAF =
  'NOT f.is_trashed AND NOT EXISTS (SELECT 1 FROM storage.folders c WHERE c.parent_id = f.id)';

const wrongFolderPath: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'wrong_folder_path',
    'raise foldersPerDrive or users',
    (i) => pickFolder(ctx, 37, i, LIVE_LEAF),
    (p) => ctx.usedDrives.add(p.drive_id),
  );
  const out: OxiCloudFaultResource[] = [];
  for (const p of picks) {
    // Only name/parent_id fire the path trigger.
    await ctx.client.query("UPDATE storage.folders SET path = path || ' (stale)' WHERE id = $1", [p.id]);
    out.push({
      type: 'folder',
      id: p.id,
      label: `${p.label}:${p.path}`,
      detail: { storedPath: `${p.path} (stale)`, expectedPath: p.path },
    });
  }
  return out;
};

const wrongFolderLpath: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'wrong_folder_lpath',
    'raise foldersPerDrive or users',
    (i) => pickFolder(ctx, 41, i, LIVE_LEAF),
    (p) => ctx.usedDrives.add(p.drive_id),
  );
  const out: OxiCloudFaultResource[] = [];
  for (const p of picks) {
    const [row] = await rows<{ lpath: string }>(
      ctx.client,
      `UPDATE storage.folders
          SET lpath = public.subltree(lpath, 0, public.nlevel(lpath) - 1) || public.text2ltree('x' || md5(path || $2::text))
        WHERE id = $1 RETURNING lpath::text AS lpath`,
      [p.id, String(ctx.options.seed)],
    );
    out.push({
      type: 'folder',
      id: p.id,
      label: `${p.label}:${p.path}`,
      detail: { storedLpath: row?.lpath, expectedLpath: p.lpath },
    });
  }
  return out;
};

const liveFolderUnderTrashedParent: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'live_folder_under_trashed_parent',
    'raise trashedFolderShare or users',
    (i) => pickFolder(ctx, 43, i, 'f.is_trashed'),
    (p) => ctx.usedDrives.add(p.drive_id),
  );
  const out: OxiCloudFaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const [row] = await rows<{ id: string; path: string }>(
      ctx.client,
      `INSERT INTO storage.folders (name, parent_id, drive_id, created_at, updated_at)
       VALUES ($3, $1, $2, now() - interval '3 days', now() - interval '3 days') RETURNING id, path`,
      [p.id, p.drive_id, `Restored ${i + 1}`],
    );
    if (!row) throw new Error('internal: folder insert returned nothing');
    out.push({ type: 'folder', id: row.id, label: `${p.label}:${row.path}`, detail: { parentId: p.id } });
  }
  return out;
};

const liveFileUnderTrashedFolder: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'live_file_under_trashed_folder',
    'raise trashedFolderShare or filesPerDrive',
    async (i) =>
      (
        await rows<FileRow>(
          ctx.client,
          `SELECT f.id, f.name, f.blob_hash, f.size, f.drive_id, d.label, f.folder_id
             FROM storage.files f JOIN oxi_drives d ON d.id = f.drive_id JOIN storage.folders fo ON fo.id = f.folder_id
            WHERE f.is_trashed AND fo.is_trashed AND f.original_folder_id IS NULL
              AND NOT (f.drive_id = ANY($1::uuid[])) AND NOT (f.blob_hash = ANY($2::text[]))
            ORDER BY hashtextextended(f.name, $3::bigint + $4::bigint) LIMIT 1`,
          [drives(ctx), hashes(ctx), ctx.options.seed, 47_000 + i],
        )
      )[0],
    (p) => ctx.usedDrives.add(p.drive_id),
  );
  const out: OxiCloudFaultResource[] = [];
  for (const p of picks) {
    await ctx.client.query('UPDATE storage.files SET is_trashed = false, trashed_at = NULL WHERE id = $1', [
      p.id,
    ]);
    // A live file counts toward its drive (and a personal drive's owner): usage follows.
    await addToDrive(ctx, p.drive_id, toInt(p.size));
    out.push({ type: 'file', id: p.id, label: `${p.label}:${p.name}`, detail: { folderId: p.folder_id } });
  }
  return out;
};

const folderUnderOtherDrive: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  const picks = await pickEach(
    ctx,
    'folder_under_other_drive',
    'raise users',
    (i) => pickFolder(ctx, 53, i, LIVE_LEAF),
    (p) => ctx.usedDrives.add(p.drive_id),
  );
  for (const [i, p] of picks.entries()) {
    const target =
      (await pickDrive(ctx, 59, i, "d.kind = 'personal'")) ?? (await pickDrive(ctx, 59, i, 'true'));
    if (!target) notApplicable('folder_under_other_drive', n(ctx), i, 'raise users');
    ctx.usedDrives.add(target.id);
    const [root] = await rows<{ id: string }>(
      ctx.client,
      'SELECT root_folder_id AS id FROM storage.drives WHERE id = $1',
      [target.id],
    );
    await ctx.client.query('UPDATE storage.folders SET parent_id = $2 WHERE id = $1', [p.id, root?.id]);
    out.push({
      type: 'folder',
      id: p.id,
      label: `${p.label}:${p.path}`,
      detail: { parentId: root?.id, parentDriveId: target.id },
    });
  }
  return out;
};

const fileInOtherDriveFolder: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'file_in_other_drive_folder',
    'raise users or filesPerDrive',
    (i) => pickLiveFile(ctx, 61, i),
    (p) => ctx.usedDrives.add(p.drive_id),
  );
  const out: OxiCloudFaultResource[] = [];
  for (const [i, p] of picks.entries()) {
    const target =
      (await pickDrive(ctx, 67, i, "d.kind = 'personal'")) ?? (await pickDrive(ctx, 67, i, 'true'));
    if (!target) notApplicable('file_in_other_drive_folder', n(ctx), i, 'raise users');
    ctx.usedDrives.add(target.id);
    const size = toInt(p.size);
    await ctx.client.query('UPDATE storage.files SET drive_id = $2 WHERE id = $1', [p.id, target.id]);
    await addToDrive(ctx, p.drive_id, -size);
    await addToDrive(ctx, target.id, size);
    out.push({
      type: 'file',
      id: p.id,
      label: `${p.label}:${p.name}`,
      detail: { driveId: target.id, folderDriveId: p.drive_id },
    });
  }
  return out;
};

const driveWithoutOwner: Injector = async (ctx) => {
  const picks = await pickEach(
    ctx,
    'drive_without_owner',
    'raise sharedDrives',
    (i) => pickDrive(ctx, 71, i, "d.kind = 'shared'"),
    (p) => ctx.usedDrives.add(p.id),
  );
  for (const p of picks) {
    await ctx.client.query(
      "DELETE FROM storage.role_grants WHERE resource_type = 'drive' AND resource_id = $1 AND role = 'owner'",
      [p.id],
    );
  }
  return picks.map((p) => ({ type: 'drive', id: p.id, label: p.label, detail: {} }));
};

/** Inserts one user grant on a folder (or a file id nobody has) and returns its id. */
async function insertGrant(
  ctx: Ctx,
  fault: OxiCloudFaultName,
  i: number,
  resource: 'folder' | 'missing_file',
  expiresAgo: string | null,
): Promise<OxiCloudFaultResource> {
  const [g] = await rows<{ id: string; username: string; resource_id: string }>(
    ctx.client,
    `WITH pick AS (
       SELECT u.id AS subject, u.username, fo.id AS folder_id, o.id AS owner
         FROM oxi_users u
         JOIN oxi_drives d ON d.kind = 'shared' OR d.user_no <> u.user_no
         JOIN oxi_folders fo ON fo.drive_no = d.drive_no AND fo.folder_no = 0
         JOIN oxi_users o ON o.user_no = d.user_no
        WHERE u.user_no < 100 AND d.drive_no < 100
          AND NOT EXISTS (SELECT 1 FROM storage.role_grants g
                           WHERE g.subject_type = 'user' AND g.subject_id = u.id AND g.resource_id = fo.id)
        ORDER BY hashtextextended(u.username || ':' || d.label, $1::bigint + $2::bigint) LIMIT 1
     )
     INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by, granted_at, expires_at)
     SELECT 'user', p.subject, CASE WHEN $3 = 'folder' THEN 'folder' ELSE 'file' END,
            CASE WHEN $3 = 'folder' THEN p.folder_id ELSE gen_random_uuid() END,
            'viewer', p.owner, now() - interval '40 days',
            CASE WHEN $4::interval IS NULL THEN NULL ELSE now() - $4::interval END
       FROM pick p
     RETURNING id, (SELECT username FROM pick) AS username, resource_id`,
    [ctx.options.seed, fault.length * 1000 + i, resource, expiresAgo],
  );
  if (!g) notApplicable(fault, n(ctx), i, 'raise users');
  return {
    type: 'grant',
    id: g.id,
    label: `${g.username} → ${resource === 'folder' ? 'a root folder' : 'a missing file'} (${fault} ${i + 1})`,
    detail: { resourceId: g.resource_id, expiresAgo },
  };
}

const danglingGrant: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  for (let i = 0; i < n(ctx); i++)
    out.push(await insertGrant(ctx, 'dangling_grant', i, 'missing_file', null));
  return out;
};

const expiredGrants: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  for (let i = 0; i < n(ctx); i++) {
    out.push(await insertGrant(ctx, 'expired_grants', i, 'folder', `${48 + i} hours`));
  }
  return out;
};

const lingeringExpiredGrant: Injector = async (ctx) => {
  const out: OxiCloudFaultResource[] = [];
  for (let i = 0; i < n(ctx); i++) {
    out.push(await insertGrant(ctx, 'lingering_expired_grant', i, 'folder', `${30 + i} days`));
  }
  return out;
};

const orphanThumbnail: Injector = async (ctx) => {
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

const INJECTORS: Record<OxiCloudFaultName, Injector> = {
  missing_manifest: missingManifest,
  missing_chunk_row: missingChunkRow,
  missing_blob_row: missingBlobRow,
  blob_bytes_missing: blobBytesMissing,
  orphan_blob_on_disk: orphanBlobOnDisk,
  blob_ref_count_drift: blobRefCountDrift,
  manifest_ref_count_drift: manifestRefCountDrift,
  manifest_shape_mismatch: manifestShapeMismatch,
  blob_orphaned_at_unset: blobOrphanedAtUnset,
  blob_size_mismatch: blobSizeMismatch,
  drive_used_bytes_drift: driveUsedBytesDrift,
  user_used_bytes_drift: userUsedBytesDrift,
  wrong_folder_path: wrongFolderPath,
  wrong_folder_lpath: wrongFolderLpath,
  live_folder_under_trashed_parent: liveFolderUnderTrashedParent,
  live_file_under_trashed_folder: liveFileUnderTrashedFolder,
  folder_under_other_drive: folderUnderOtherDrive,
  file_in_other_drive_folder: fileInOtherDriveFolder,
  drive_without_owner: driveWithoutOwner,
  dangling_grant: danglingGrant,
  orphan_thumbnail: orphanThumbnail,
  expired_grants: expiredGrants,
  lingering_expired_grant: lingeringExpiredGrant,
};

/**
 * Applies the requested faults, in {@link OXICLOUD_FAULT_NAMES} order, inside
 * the generation's transaction. Returns their records and the byte and
 * thumbnail changes to make once the rows are committed.
 */
export async function injectOxiCloudFaults(input: {
  client: SqlClient;
  options: ResolvedOxiCloudDatasetOptions;
  hasStorageRoot: boolean;
  onFault?: (done: number) => void;
}): Promise<{ records: OxiCloudFaultRecord[]; storageActions: OxiCloudStorageAction[] }> {
  const [{ now } = { now: new Date() }] = await rows<{ now: Date }>(input.client, 'SELECT now() AS now');
  const ctx: Ctx = {
    client: input.client,
    options: input.options,
    usedDrives: new Set(),
    usedHashes: new Set(),
    storage: [],
    hasStorageRoot: input.hasStorageRoot,
    now,
  };
  const records: OxiCloudFaultRecord[] = [];
  for (const [i, fault] of input.options.faults.entries()) {
    const resources = await INJECTORS[fault](ctx);
    records.push({
      fault,
      expect: OXICLOUD_FAULT_EXPECTATIONS[fault],
      resourceIds: resources.map((r) => r.id),
      resources,
    });
    input.onFault?.(i + 1);
  }
  return { records, storageActions: ctx.storage };
}
