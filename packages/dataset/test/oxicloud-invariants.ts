/**
 * OXICLOUD.md §12 invariants 1–20 written as independent SQL (plus a listing
 * of the blob store and the thumbnails folder), for the tests of the
 * OxiCloud-shaped generator: each check returns the ids that break it
 * (empty = the invariant holds).
 */

import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  categoryOrderFor,
  expectedBlobRefCounts,
  hashFileContent,
  type ManifestShapeProblem,
  manifestShapeProblems,
  readsMediaAtRawPath,
} from '@oxicloud/storage';
import type { BlobEntry, BlobStorage } from '@oxicloud/tenants';
import type pg from 'pg';
import type { OxiCloudFaultName } from '../src/oxicloud/faults.js';
import { listThumbnailHashes, THUMBNAIL_SIZES } from '../src/oxicloud/thumbnails.js';

/** The file ids of the `ext-<id>.jpg` thumbnails (any size) or of the `.transcoded/webp/<id>.webp(.skip)` files under `root`. */
async function fileIdsIn(root: string, family: 'ext' | 'transcoded'): Promise<string[]> {
  const uuid = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
  const out = new Set<string>();
  const dirs =
    family === 'ext'
      ? THUMBNAIL_SIZES.map((size) => join(root, '.thumbnails', size))
      : [join(root, '.transcoded', 'webp')];
  const pattern =
    family === 'ext' ? new RegExp(`^ext-(${uuid})\\.jpg$`) : new RegExp(`^(${uuid})\\.webp(\\.skip)?$`);
  for (const dir of dirs) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      const m = pattern.exec(name);
      if (m?.[1]) out.add(m[1]);
    }
  }
  return [...out];
}

/** Of `fileIds`, those no `storage.files` row has, sorted. */
async function missingFileIds(pool: pg.Pool, fileIds: readonly string[]): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    'SELECT x.id FROM unnest($1::text[]) AS x(id) WHERE NOT EXISTS (SELECT 1 FROM storage.files f WHERE f.id::text = x.id)',
    [[...fileIds]],
  );
  return rows.map((r) => r.id).sort();
}

async function ids(pool: pg.Pool, sql: string): Promise<string[]> {
  const result = await pool.query(sql);
  return [...new Set(result.rows.map((r: { id: string }) => String(r.id)))].sort();
}

/** Every blob the store holds, in hash order. */
export async function listAll(blobs: BlobStorage): Promise<BlobEntry[]> {
  const out: BlobEntry[] = [];
  let startAfter: string | null = null;
  for (;;) {
    const page = await blobs.list({ startAfter, limit: 1000 });
    out.push(...page);
    if (page.length < 1000) return out;
    startAfter = page[page.length - 1]?.hash ?? null;
  }
}

interface ManifestRow {
  file_hash: string;
  chunk_hashes: string[];
  chunk_sizes: string[];
  total_size: string;
  chunk_count: number;
}

/** The names of the checks of {@link checkInvariants}, one per §12 rule (some items are split in two). */
export type InvariantName = keyof Awaited<ReturnType<typeof checkInvariants>>;

/** Runs every check; each value is the sorted ids that break the rule. */
export async function checkInvariants(pool: pg.Pool, blobs: BlobStorage, storageRoot: string) {
  const manifests = (
    await pool.query<ManifestRow>(
      'SELECT file_hash, chunk_hashes, chunk_sizes, total_size, chunk_count FROM storage.chunk_manifests',
    )
  ).rows;
  const files = (await pool.query<{ blob_hash: string }>('SELECT blob_hash FROM storage.files')).rows;
  const blobRows = (
    await pool.query<{ hash: string; size: string; ref_count: number }>(
      'SELECT hash, size, ref_count FROM storage.blobs',
    )
  ).rows;
  const stored = new Map((await listAll(blobs)).map((b) => [b.hash, b]));
  const rowHashes = new Set(blobRows.map((b) => b.hash));
  // What a thumbnail may be keyed by: a manifest, a blob row, or any file's hash (content lost, thumbnail kept).
  const contentHashes = new Set([
    ...rowHashes,
    ...manifests.map((m) => m.file_hash),
    ...files.map((f) => f.blob_hash),
  ]);

  // 13. Manifest shape (pure), and FastCDC's: every chunk but the last ≥ 64 KiB.
  const shape: string[] = [];
  for (const m of manifests) {
    const sizes = m.chunk_sizes.map(Number);
    const problems: ManifestShapeProblem[] = manifestShapeProblems({
      fileHash: m.file_hash,
      chunkHashes: m.chunk_hashes,
      chunkSizes: sizes,
      totalSize: Number(m.total_size),
      chunkCount: m.chunk_count,
    });
    if (problems.length > 0 || sizes.slice(0, -1).some((s) => s < 65_536)) shape.push(m.file_hash);
  }

  // 15. Blob ref counts as the upload path leaves them (the package's pure model).
  const expected = expectedBlobRefCounts({
    manifests: manifests.map((m) => ({ fileHash: m.file_hash, chunkHashes: m.chunk_hashes })),
    files: files.map((f) => ({ blobHash: f.blob_hash })),
  });
  const refCount = blobRows
    .filter((b) => b.ref_count !== (expected.get(b.hash)?.expected ?? 0))
    .map((b) => b.hash)
    .sort();

  // 17. Rows without bytes (or of another size, or whose bytes hash to something else).
  const rowsWithoutBytes: string[] = [];
  for (const b of blobRows) {
    const entry = stored.get(b.hash);
    if (entry === undefined || entry.size !== Number(b.size)) {
      rowsWithoutBytes.push(b.hash);
      continue;
    }
    const digest = await hashFileContent({ kind: 'legacy', hash: b.hash, size: Number(b.size) }, blobs);
    if (digest.hash !== b.hash) rowsWithoutBytes.push(b.hash);
  }

  // 13. The byte scan: a multi-chunk manifest whose chunks are all intact (rows, sizes, bytes) and whose
  // shape holds reads its file_hash (what is wrong with a chunk or the shape is the other rules').
  const broken = new Set(rowsWithoutBytes);
  const manifestBytes: string[] = [];
  for (const m of manifests) {
    if (m.chunk_count < 2 || shape.includes(m.file_hash)) continue;
    if (m.chunk_hashes.some((h) => broken.has(h) || !rowHashes.has(h))) continue;
    const content = {
      kind: 'manifest' as const,
      fileHash: m.file_hash,
      chunks: m.chunk_hashes.map((hash, i) => ({ hash, size: Number(m.chunk_sizes[i]) })),
      totalSize: Number(m.total_size),
    };
    const digest = await hashFileContent(content, blobs);
    if (digest.hash !== m.file_hash) manifestBytes.push(m.file_hash);
  }

  // 19. Thumbnails of hashes that are neither a manifest nor a blob.
  const thumbs = new Set<string>();
  for (const size of THUMBNAIL_SIZES)
    for (const h of await listThumbnailHashes(storageRoot, size)) thumbs.add(h);

  return {
    // 1. Root path and lpath.
    rootPath: await ids(
      pool,
      `SELECT id FROM storage.folders WHERE parent_id IS NULL
          AND (path <> name OR lpath <> text2ltree(replace(id::text, '-', '_')))`,
    ),
    // 2. Child path, and child lpath.
    childPath: await ids(
      pool,
      `SELECT c.id FROM storage.folders c JOIN storage.folders p ON p.id = c.parent_id
        WHERE c.path <> p.path || '/' || c.name`,
    ),
    childLpath: await ids(
      pool,
      `SELECT c.id FROM storage.folders c JOIN storage.folders p ON p.id = c.parent_id
        WHERE c.lpath <> p.lpath || text2ltree(replace(c.id::text, '-', '_'))`,
    ),
    // 3. Folder drive = parent's drive, and a root is named by its own drive only; 4. every live root
    //    has its drive pointing at it.
    folderDrive: await ids(
      pool,
      `SELECT c.id FROM storage.folders c JOIN storage.folders p ON p.id = c.parent_id WHERE c.drive_id <> p.drive_id
       UNION
       SELECT r.id FROM storage.folders r WHERE r.parent_id IS NULL
          AND EXISTS (SELECT 1 FROM storage.drives d WHERE d.root_folder_id = r.id AND d.id <> r.drive_id)
       UNION
       SELECT r.id FROM storage.folders r WHERE r.parent_id IS NULL AND NOT r.is_trashed
          AND NOT EXISTS (SELECT 1 FROM storage.drives d WHERE d.root_folder_id = r.id AND d.id = r.drive_id)`,
    ),
    // 5. Every drive has its own root (a parentless folder of the drive), no two drives share one.
    driveRoot: await ids(
      pool,
      `SELECT d.id FROM storage.drives d LEFT JOIN storage.folders r ON r.id = d.root_folder_id
        WHERE r.id IS NULL OR r.parent_id IS NOT NULL OR r.drive_id <> d.id
           OR EXISTS (SELECT 1 FROM storage.drives o WHERE o.root_folder_id = d.root_folder_id AND o.id <> d.id)`,
    ),
    // 6. File drive = its folder's drive; folder_id set.
    fileDrive: await ids(
      pool,
      `SELECT f.id FROM storage.files f LEFT JOIN storage.folders fo ON fo.id = f.folder_id
        WHERE fo.id IS NULL OR f.drive_id <> fo.drive_id`,
    ),
    // 7. Trash flags: nothing live under a trashed folder; trashed_at iff is_trashed; original_* only on
    //    rows trashed directly (= their parent then), NULL on live rows and on rows trashed with their folder.
    trashFlags: await ids(
      pool,
      `SELECT c.id FROM storage.folders c LEFT JOIN storage.folders p ON p.id = c.parent_id
        WHERE (NOT c.is_trashed AND p.is_trashed) OR (c.trashed_at IS NULL) = c.is_trashed
           OR (NOT c.is_trashed AND c.original_parent_id IS NOT NULL)
           OR (c.is_trashed AND p.is_trashed AND c.original_parent_id IS NOT NULL)
           OR (c.is_trashed AND NOT p.is_trashed AND c.original_parent_id IS DISTINCT FROM c.parent_id)
       UNION
       SELECT f.id FROM storage.files f JOIN storage.folders fo ON fo.id = f.folder_id
        WHERE (NOT f.is_trashed AND fo.is_trashed) OR (f.trashed_at IS NULL) = f.is_trashed
           OR (NOT f.is_trashed AND f.original_folder_id IS NOT NULL)
           OR (f.is_trashed AND fo.is_trashed AND f.original_folder_id IS NOT NULL)
           OR (f.is_trashed AND NOT fo.is_trashed AND f.original_folder_id IS DISTINCT FROM f.folder_id)`,
    ),
    // 8. Drive shape: personal = NULL quota, exactly one owner grant, a user, = default_for_user; shared ≥ 1 owner.
    driveShape: await ids(
      pool,
      `WITH o AS (
         SELECT d.id, d.kind, d.quota_bytes, d.default_for_user,
                count(g.id) AS owners, count(g.id) FILTER (WHERE g.subject_type = 'user') AS user_owners,
                bool_or(g.subject_type = 'user' AND g.subject_id = d.default_for_user) AS default_owns
           FROM storage.drives d
           LEFT JOIN storage.role_grants g ON g.resource_type = 'drive' AND g.resource_id = d.id AND g.role = 'owner'
          GROUP BY d.id)
       SELECT id FROM o
        WHERE (kind = 'personal' AND (quota_bytes IS NOT NULL OR owners <> 1 OR user_owners <> 1
                                      OR (default_for_user IS NOT NULL AND NOT default_owns)))
           OR (kind = 'shared' AND owners = 0)`,
    ),
    // 9. Drive usage = Σ live files.
    driveUsage: await ids(
      pool,
      `SELECT d.id FROM storage.drives d
        WHERE d.used_bytes <> COALESCE((SELECT sum(f.size) FROM storage.files f
                                         WHERE f.drive_id = d.id AND NOT f.is_trashed), 0)`,
    ),
    // 10. User envelope = Σ used_bytes of the personal drives the user owns; externals 0.
    userUsage: await ids(
      pool,
      `SELECT u.id FROM auth.users u
        WHERE u.storage_used_bytes <> CASE WHEN u.is_external THEN 0 ELSE COALESCE((
              SELECT sum(d.used_bytes) FROM storage.drives d
               WHERE d.kind = 'personal' AND EXISTS (
                     SELECT 1 FROM storage.role_grants g
                      WHERE g.resource_type = 'drive' AND g.resource_id = d.id AND g.role = 'owner'
                        AND g.subject_type = 'user' AND g.subject_id = u.id)), 0) END`,
    ),
    // 11. Every file's content resolves (manifest or legacy blob)...
    contentResolves: await ids(
      pool,
      `SELECT f.blob_hash AS id FROM storage.files f
        WHERE NOT EXISTS (SELECT 1 FROM storage.chunk_manifests m WHERE m.file_hash = f.blob_hash)
          AND NOT EXISTS (SELECT 1 FROM storage.blobs b WHERE b.hash = f.blob_hash)`,
    ),
    // ... and every chunk of a manifest has its row, of the declared size.
    chunkRows: await ids(
      pool,
      `SELECT c.hash AS id FROM storage.chunk_manifests m
        CROSS JOIN LATERAL unnest(m.chunk_hashes, m.chunk_sizes) AS c(hash, size)
         LEFT JOIN storage.blobs b ON b.hash = c.hash
        WHERE b.hash IS NULL OR b.size <> c.size`,
    ),
    // 12. files.size = manifest total_size, or the legacy blob's size.
    fileSize: await ids(
      pool,
      `SELECT f.id FROM storage.files f
         LEFT JOIN storage.chunk_manifests m ON m.file_hash = f.blob_hash
         LEFT JOIN storage.blobs b ON b.hash = f.blob_hash
        WHERE (m.file_hash IS NOT NULL AND f.size <> m.total_size)
           OR (m.file_hash IS NULL AND b.hash IS NOT NULL AND f.size <> b.size)`,
    ),
    manifestShape: shape.sort(),
    manifestBytes: manifestBytes.sort(),
    // 14. Manifest ref_count = its files rows, trashed included.
    manifestRefCount: await ids(
      pool,
      `SELECT m.file_hash AS id FROM storage.chunk_manifests m
        WHERE m.ref_count <> (SELECT count(*) FROM storage.files f WHERE f.blob_hash = m.file_hash)`,
    ),
    blobRefCount: refCount,
    // 16. orphaned_at set whenever ref_count = 0.
    orphanedAt: await ids(
      pool,
      'SELECT hash AS id FROM storage.blobs WHERE ref_count = 0 AND orphaned_at IS NULL',
    ),
    rowsWithoutBytes: rowsWithoutBytes.sort(),
    // 18. Objects in the store with no row.
    bytesWithoutRows: [...stored.keys()].filter((h) => !rowHashes.has(h)).sort(),
    orphanThumbnails: [...thumbs].filter((h) => !contentHashes.has(h)).sort(),
    // 19. Files keyed by file id whose file no longer exists: ext- thumbnails, transcoded images.
    orphanFileThumbnails: await missingFileIds(pool, await fileIdsIn(storageRoot, 'ext')),
    orphanTranscodedImages: await missingFileIds(pool, await fileIdsIn(storageRoot, 'transcoded')),
    // 20. Grants whose subject or resource does not exist (expired ones belong to the purge).
    danglingGrants: await ids(
      pool,
      `SELECT g.id FROM storage.role_grants g
        WHERE (g.expires_at IS NULL OR g.expires_at > now())
          AND (NOT CASE g.subject_type
                 WHEN 'user' THEN EXISTS (SELECT 1 FROM auth.users u WHERE u.id = g.subject_id)
                 WHEN 'group' THEN EXISTS (SELECT 1 FROM auth.subject_groups s WHERE s.id = g.subject_id)
                 ELSE EXISTS (SELECT 1 FROM storage.shares s WHERE s.id = g.subject_id) END
            OR NOT CASE g.resource_type
                 WHEN 'folder' THEN EXISTS (SELECT 1 FROM storage.folders x WHERE x.id = g.resource_id)
                 WHEN 'file' THEN EXISTS (SELECT 1 FROM storage.files x WHERE x.id = g.resource_id)
                 WHEN 'drive' THEN EXISTS (SELECT 1 FROM storage.drives x WHERE x.id = g.resource_id)
                 ELSE true END)`,
    ),
    // 25. Favorites and recent items naming a file or folder that does not exist.
    danglingReferences: await ids(
      pool,
      `SELECT r.id::text AS id FROM (
         SELECT id, item_id, item_type FROM auth.user_favorites
         UNION ALL SELECT -id, item_id, item_type FROM auth.user_recent_files) r
        WHERE NOT CASE r.item_type
                WHEN 'file' THEN EXISTS (SELECT 1 FROM storage.files x WHERE x.id::text = r.item_id)
                WHEN 'folder' THEN EXISTS (SELECT 1 FROM storage.folders x WHERE x.id::text = r.item_id)
                ELSE false END`,
    ),
    // 21. Every share has exactly one token grant, a viewer on its item.
    shareGrants: await ids(
      pool,
      `SELECT s.id FROM storage.shares s
        WHERE (SELECT count(*) FROM storage.role_grants g WHERE g.subject_type = 'token' AND g.subject_id = s.id) <> 1
           OR NOT EXISTS (SELECT 1 FROM storage.role_grants g
                           WHERE g.subject_type = 'token' AND g.subject_id = s.id AND g.role = 'viewer'
                             AND g.resource_type = s.item_type AND g.resource_id::text = s.item_id)`,
    ),
    // 25. NextCloud ids naming a file or folder that does not exist.
    danglingNextcloudIds: await ids(
      pool,
      `SELECT n.id::text AS id FROM storage.nextcloud_object_ids n
        WHERE NOT CASE n.object_type
                WHEN 'file' THEN EXISTS (SELECT 1 FROM storage.files x WHERE x.id = n.object_id)
                ELSE EXISTS (SELECT 1 FROM storage.folders x WHERE x.id = n.object_id) END`,
    ),
    // 25. Faces whose content hash is not their file's.
    staleFaces: await ids(
      pool,
      `SELECT fa.id FROM faces.faces fa JOIN storage.files f ON f.id = fa.file_id
        WHERE fa.blob_hash IS NOT NULL AND fa.blob_hash <> f.blob_hash`,
    ),
    // Grants expired inside OxiCloud's 15-day cleanup grace, and past it.
    expiredInGrace: await ids(
      pool,
      `SELECT id FROM storage.role_grants WHERE expires_at < now() AND expires_at >= now() - interval '15 days'`,
    ),
    expiredPastGrace: await ids(
      pool,
      `SELECT id FROM storage.role_grants WHERE expires_at < now() - interval '15 days'`,
    ),
    // 22. media_sort_date = created_at (no metadata rows are generated).
    mediaSortDate: await ids(pool, 'SELECT id FROM storage.files WHERE media_sort_date <> created_at'),
    // 23. category_order = OxiCloud's category_order_for(name, mime_type), in TypeScript, not the checks' SQL.
    categoryOrder: (
      await pool.query<{ id: string; name: string; mime_type: string; category_order: number }>(
        'SELECT id, name, mime_type, category_order FROM storage.files',
      )
    ).rows
      .filter((r) => r.category_order !== categoryOrderFor(r.name, r.mime_type))
      .map((r) => r.id)
      .sort(),
    // 24. Every audio file read at its raw path (a legacy blob or one chunk) on a store OxiCloud's extractor
    // reads has its tags row (every generated audio file starts with an ID3v2 tag); elsewhere none has one.
    audioMetadata: readsMediaAtRawPath(blobs)
      ? await ids(
          pool,
          `SELECT f.id FROM storage.files f
            WHERE f.mime_type LIKE 'audio/%' AND f.size > 0
              AND (EXISTS (SELECT 1 FROM storage.chunk_manifests cm WHERE cm.file_hash = f.blob_hash AND cm.chunk_count = 1)
                   OR (NOT EXISTS (SELECT 1 FROM storage.chunk_manifests cm WHERE cm.file_hash = f.blob_hash)
                       AND EXISTS (SELECT 1 FROM storage.blobs b WHERE b.hash = f.blob_hash)))
              AND NOT EXISTS (SELECT 1 FROM audio.file_metadata am WHERE am.file_id = f.id)`,
        )
      : await ids(pool, 'SELECT file_id AS id FROM audio.file_metadata'),
  };
}

/**
 * The invariant of `checkInvariants` each fault breaks (the one whose finding
 * lists its resource ids); the resources of the type its expectation's
 * `also.on` names break {@link OXICLOUD_FAULT_ALSO_INVARIANT}'s instead.
 */
export const OXICLOUD_FAULT_INVARIANT: Record<OxiCloudFaultName, InvariantName> = {
  missing_manifest: 'contentResolves',
  missing_chunk_row: 'chunkRows',
  missing_blob_row: 'contentResolves',
  blob_bytes_missing: 'rowsWithoutBytes',
  orphan_blob_on_disk: 'bytesWithoutRows',
  blob_ref_count_drift: 'blobRefCount',
  one_chunk_ref_count_drift: 'blobRefCount',
  chunk_bytes_overwritten: 'rowsWithoutBytes',
  truncated_chunk: 'rowsWithoutBytes',
  manifest_ref_count_drift: 'manifestRefCount',
  manifest_ref_count_high: 'manifestRefCount',
  unreferenced_manifest: 'manifestRefCount',
  manifest_shape_mismatch: 'manifestShape',
  wrong_manifest_total: 'manifestShape',
  manifest_chunks_reordered: 'manifestBytes',
  blob_orphaned_at_unset: 'orphanedAt',
  blob_size_mismatch: 'fileSize',
  drive_used_bytes_drift: 'driveUsage',
  user_used_bytes_drift: 'userUsage',
  wrong_folder_path: 'childPath',
  wrong_folder_lpath: 'childLpath',
  live_folder_under_trashed_parent: 'trashFlags',
  live_file_under_trashed_folder: 'trashFlags',
  live_folder_with_original_parent: 'trashFlags',
  folder_under_other_drive: 'folderDrive',
  root_without_drive: 'folderDrive',
  file_in_other_drive_folder: 'fileDrive',
  drive_without_owner: 'driveShape',
  media_sort_date_drift: 'mediaSortDate',
  category_order_drift: 'categoryOrder',
  audio_metadata_missing: 'audioMetadata',
  dangling_grant: 'danglingGrants',
  dangling_user_grant: 'danglingGrants',
  dangling_group_grant: 'danglingGrants',
  dangling_token_grant: 'danglingGrants',
  dangling_favorite: 'danglingReferences',
  dangling_nextcloud_id: 'danglingNextcloudIds',
  drive_root_shared: 'driveRoot',
  drive_root_not_root: 'driveRoot',
  stale_face: 'staleFaces',
  share_without_grant: 'shareGrants',
  orphan_thumbnail: 'orphanThumbnails',
  orphan_file_thumbnail: 'orphanFileThumbnails',
  orphan_transcoded_image: 'orphanTranscodedImages',
  expired_grants: 'expiredInGrace',
  lingering_expired_grant: 'expiredPastGrace',
};

/** The invariant the resources of a fault's `also.on` type break (a shared root: §12 item 3). */
export const OXICLOUD_FAULT_ALSO_INVARIANT: Partial<Record<OxiCloudFaultName, InvariantName>> = {
  drive_root_shared: 'folderDrive',
};
