import type { RunTransaction } from '@oxicloud/recoverable';
import type {
  BlobCounterState,
  BlobRowState,
  DerivedColumnState,
  DerivedFileColumn,
  DriveUsageState,
  FaceRowState,
  FileBlobSizeState,
  FolderPathRow,
  GrantRowState,
  ManifestCounterState,
  ReferenceRowState,
  ReferenceSource,
  ReferencingFile,
  RepairStore,
  RepairTx,
  TrashedParentState,
  UserUsageState,
} from '@oxicloud/tenants';
import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import { bigintToNumber } from '../postgres/database.js';
import { StorageError } from '../storage-error.js';
import { CATEGORY_ORDER_SQL } from './content-sql.js';
import type { OxiCloudDatabase } from './database.js';
import { ITEM_DANGLING_ARMS } from './oxi-reference-scan.js';

type Trx = Transaction<OxiCloudDatabase>;

/** The rows a repair deletes when their item is gone (§12 item 25): the table, its item columns, its key's type. */
const DELETABLE_REFERENCES: Readonly<
  Partial<Record<ReferenceSource, { table: string; type: string; id: string; key: string }>>
> = {
  favorites: { table: 'auth.user_favorites', type: 'item_type', id: 'item_id', key: 'bigint' },
  recent_items: { table: 'auth.user_recent_files', type: 'item_type', id: 'item_id', key: 'bigint' },
  magic_links: {
    table: 'auth.magic_link_tokens',
    type: 'resource_type',
    id: 'resource_id::text',
    key: 'uuid',
  },
  nextcloud_ids: {
    table: 'storage.nextcloud_object_ids',
    type: 'object_type',
    id: 'object_id::text',
    key: 'bigint',
  },
};

function deletable(source: ReferenceSource): { table: string; type: string; id: string; key: string } {
  const t = DELETABLE_REFERENCES[source];
  if (t === undefined) {
    throw new StorageError(
      'INVALID_ARGUMENT',
      `a repair does not delete rows of ${source} on OxiCloud's domain`,
    );
  }
  return t;
}

/**
 * OxiCloud's formula for a derived file column, over the row `f`: the sort
 * bucket of its name and type (§12 item 23, `category_order_for`), and the
 * timeline date, its capture date else its creation (§12 item 22).
 */
function derivedFormula(column: DerivedFileColumn): RawBuilder<unknown> {
  return column === 'category_order'
    ? CATEGORY_ORDER_SQL('f.name', 'f.mime_type')
    : sql`COALESCE((SELECT fm.captured_at FROM storage.file_metadata fm WHERE fm.file_id = f.id), f.created_at)`;
}

/** Deeper chains than this are treated as cycles. */
const MAX_DEPTH = 10_000;

/** What {@link OxiRepairStore.finishBlobDeletion} answers: the step does not exist on this domain. */
const NO_DELETION_PROTOCOL =
  "OxiCloud's storage domain has no deletion protocol (no blobs.deleting_at): unreferenced bytes get a row at " +
  'ref_count 0 with orphaned_at, and dedup_gc moves them to its quarantine past its grace';

/**
 * The SQL of a drive's owner for the drive row `d`: `default_for_user`
 * when set, else its strongest owner grant (a user before a group, then the
 * oldest); there is no owner column (fact sheet §3). Same rule as
 * `OxiDriveUsageScan`'s findings.
 */
const DRIVE_OWNER = sql`COALESCE(d.default_for_user, (
  SELECT g.subject_id FROM storage.role_grants g
   WHERE g.resource_type = 'drive' AND g.resource_id = d.id AND g.role = 'owner'
   ORDER BY (g.subject_type = 'user') DESC, g.granted_at, g.id
   LIMIT 1))`;

/**
 * Whether the drive row `d` counts in an envelope: a personal drive with a
 * user owner grant of an internal user (§6's user formula).
 */
const IN_ENVELOPE = sql`(d.kind = 'personal' AND EXISTS (
  SELECT 1 FROM storage.role_grants g JOIN auth.users u ON u.id = g.subject_id
   WHERE g.resource_type = 'drive' AND g.resource_id = d.id AND g.role = 'owner'
     AND g.subject_type = 'user' AND NOT u.is_external))`;

/**
 * The count §12 item 15 expects of the blob row `hash`: the manifests
 * listing it (once per manifest); else 0 when it is a manifest's
 * `file_hash`; else the files naming it (a legacy whole-file blob, trashed
 * included). `OxiBlobRowScan`'s rule, for one hash.
 */
function expectedRefCount(hash: string) {
  return sql<string>`(
    SELECT CASE WHEN l.n > 0 THEN l.n
                WHEN EXISTS (SELECT 1 FROM storage.chunk_manifests m WHERE m.file_hash = ${hash}) THEN 0
                ELSE (SELECT count(*) FROM storage.files f WHERE f.blob_hash = ${hash}) END
      FROM (SELECT count(*) AS n FROM storage.chunk_manifests m
             WHERE m.chunk_hashes @> ARRAY[${hash}::text]) l)`;
}

/** The files whose content uses `hash`: they name it, or their manifest lists it as a chunk. */
function usingFiles(hash: string) {
  return sql`(f.blob_hash = ${hash} OR f.blob_hash IN (
    SELECT m.file_hash FROM storage.chunk_manifests m WHERE m.chunk_hashes @> ARRAY[${hash}::text]))`;
}

/** Locks `ids` (id order, so two repairs cannot deadlock). */
async function lockRows(trx: Trx, table: 'folders' | 'files', ids: readonly string[]) {
  if (ids.length === 0) return;
  const t = table === 'folders' ? sql`storage.folders` : sql`storage.files`;
  await sql`SELECT id FROM ${t} WHERE id = ANY(${[...new Set(ids)].sort()}::uuid[]) ORDER BY id FOR UPDATE`.execute(
    trx,
  );
}

/** A folder's ancestors (nearest first), with the trash flag. */
async function ancestors(trx: Trx, parentId: string | null): Promise<{ id: string; is_trashed: boolean }[]> {
  if (parentId === null) return [];
  const { rows } = await sql<{ id: string; is_trashed: boolean; depth: number }>`
    WITH RECURSIVE up AS (
      SELECT id, parent_id, is_trashed, 0 AS depth FROM storage.folders WHERE id = ${parentId}
      UNION ALL
      SELECT p.id, p.parent_id, p.is_trashed, up.depth + 1
        FROM storage.folders p JOIN up ON p.id = up.parent_id
       WHERE up.depth < ${MAX_DEPTH}
    )
    SELECT id, is_trashed, depth FROM up ORDER BY depth`.execute(trx);
  return rows;
}

/** Of `ids`, the live root folders no drive of their own `drive_id` points at (every update of them fails at commit, §3). */
async function unlinkedRoots(trx: Trx, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<{ id: string }>`
    SELECT f.id FROM storage.folders f
     WHERE f.id = ANY(${[...ids]}::uuid[]) AND f.parent_id IS NULL
       AND NOT EXISTS (SELECT 1 FROM storage.drives d WHERE d.id = f.drive_id AND d.root_folder_id = f.id)
     ORDER BY f.id`.execute(trx);
  return rows.map((r) => r.id);
}

interface PathRow extends FolderPathRow {
  readonly depth: number;
}

/**
 * The folder (first) and the folders below it whose `path`/`lpath` differ
 * from what OxiCloud's trigger `trg_folders_path` gives (§4): for the
 * folder, from its parent's stored row (`parent.path || '/' || name`,
 * `parent.lpath || label(id)`; a root: `name`, `label(id)`); below it, from
 * the folder's expected values down. `null` when the folder is gone, or is a
 * live root no drive points at (OxiCloud's constraint trigger would reject
 * any update of it at commit).
 */
async function folderPathRows(trx: Trx, folderId: string): Promise<PathRow[] | null> {
  const { rows } = await sql<{
    id: string;
    path: string;
    lpath: string;
    expected_path: string;
    expected_lpath: string;
    depth: number;
    unlinked_root: boolean;
  }>`
    WITH RECURSIVE head AS (
      SELECT f.id, f.path, f.lpath::text AS lpath,
             CASE WHEN f.parent_id IS NULL THEN f.name ELSE p.path || '/' || f.name END AS epath,
             CASE WHEN f.parent_id IS NULL THEN replace(f.id::text, '-', '_')
                  ELSE p.lpath::text || '.' || replace(f.id::text, '-', '_') END AS elpath,
             (f.parent_id IS NULL AND NOT f.is_trashed
              AND NOT EXISTS (SELECT 1 FROM storage.drives d WHERE d.id = f.drive_id AND d.root_folder_id = f.id))
               AS unlinked_root
        FROM storage.folders f LEFT JOIN storage.folders p ON p.id = f.parent_id
       WHERE f.id = ${folderId}
    ),
    down AS (
      SELECT h.id, h.epath, h.elpath, 0 AS depth FROM head h
      UNION ALL
      SELECT c.id, d.epath || '/' || c.name, d.elpath || '.' || replace(c.id::text, '-', '_'), d.depth + 1
        FROM storage.folders c JOIN down d ON c.parent_id = d.id
       WHERE d.depth < ${MAX_DEPTH}
    )
    SELECT f.id, f.path, f.lpath::text AS lpath, d.epath AS expected_path, d.elpath AS expected_lpath, d.depth,
           (SELECT unlinked_root FROM head) AS unlinked_root
      FROM down d JOIN storage.folders f ON f.id = d.id
     WHERE d.depth = 0 OR f.path <> d.epath OR f.lpath::text <> d.elpath
     ORDER BY d.depth, f.id`.execute(trx);
  const head = rows[0];
  if (head === undefined || head.unlinked_root) return null;
  return rows.map((r) => ({
    folderId: r.id,
    path: r.path,
    lpath: r.lpath,
    expectedPath: r.expected_path,
    expectedLpath: r.expected_lpath,
    depth: r.depth,
  }));
}

const differs = (r: FolderPathRow) => r.path !== r.expectedPath || r.lpath !== r.expectedLpath;

class OxiRepairTx implements RepairTx {
  readonly #trx: Trx;
  #savepoints = 0;

  constructor(trx: Trx) {
    this.#trx = trx;
  }

  async attempt<T>(fn: () => Promise<T>): Promise<T> {
    this.#savepoints += 1;
    const name = sql.raw(`oxi_repair_item_${this.#savepoints}`);
    await sql`SAVEPOINT ${name}`.execute(this.#trx);
    try {
      const result = await fn();
      await sql`RELEASE SAVEPOINT ${name}`.execute(this.#trx);
      return result;
    } catch (error) {
      await sql`ROLLBACK TO SAVEPOINT ${name}`.execute(this.#trx);
      throw error;
    }
  }

  async driveUsage(driveId: string, lock: boolean): Promise<DriveUsageState | null> {
    const { rows } = await sql<{
      owner_id: string | null;
      used_bytes: string;
      in_envelope: boolean;
    }>`
      SELECT ${DRIVE_OWNER} AS owner_id, d.used_bytes, ${IN_ENVELOPE} AS in_envelope
        FROM storage.drives d WHERE d.id = ${driveId}
      ${lock ? sql`FOR UPDATE OF d` : sql``}`.execute(this.#trx);
    const row = rows[0];
    if (row === undefined) return null;
    const sum = await sql<{ total: string }>`
      SELECT COALESCE(SUM(size), 0)::bigint AS total FROM storage.files
       WHERE drive_id = ${driveId} AND NOT is_trashed`.execute(this.#trx);
    return {
      ownerId: row.owner_id ?? '',
      usedBytes: bigintToNumber(row.used_bytes),
      filesBytes: bigintToNumber(sum.rows[0]?.total ?? '0'),
      countsInEnvelope: row.in_envelope,
    };
  }

  async setDriveUsedBytes(driveId: string, bytes: number): Promise<void> {
    await sql`UPDATE storage.drives SET used_bytes = ${bytes} WHERE id = ${driveId}`.execute(this.#trx);
  }

  async userUsage(userId: string, lock: boolean): Promise<UserUsageState | null> {
    const { rows } = await sql<{ storage_used_bytes: string }>`
      SELECT storage_used_bytes FROM auth.users WHERE id = ${userId}
      ${lock ? sql`FOR UPDATE` : sql``}`.execute(this.#trx);
    const row = rows[0];
    if (row === undefined) return null;
    // §6: Σ used_bytes over the personal drives the user owns by a user owner grant (expires_at ignored).
    const sum = await sql<{ total: string }>`
      SELECT COALESCE(SUM(d.used_bytes), 0)::bigint AS total
        FROM storage.drives d
       WHERE d.kind = 'personal'
         AND EXISTS (SELECT 1 FROM storage.role_grants g
                      WHERE g.resource_type = 'drive' AND g.resource_id = d.id AND g.role = 'owner'
                        AND g.subject_type = 'user' AND g.subject_id = ${userId})`.execute(this.#trx);
    return {
      usedBytes: bigintToNumber(row.storage_used_bytes),
      drivesBytes: bigintToNumber(sum.rows[0]?.total ?? '0'),
    };
  }

  async setUserUsedBytes(userId: string, bytes: number): Promise<void> {
    // External users are pinned to 0 by a CHECK and skipped by OxiCloud's sweep.
    await sql`UPDATE auth.users SET storage_used_bytes = ${bytes} WHERE id = ${userId} AND NOT is_external`.execute(
      this.#trx,
    );
  }

  async addUsage(driveId: string, delta: number): Promise<void> {
    if (delta === 0) return;
    await sql`UPDATE storage.drives SET used_bytes = used_bytes + ${delta} WHERE id = ${driveId}`.execute(
      this.#trx,
    );
    // The envelope moves only for a personal drive, for its internal user owners (§6).
    await sql`
      UPDATE auth.users u SET storage_used_bytes = u.storage_used_bytes + ${delta}
        FROM storage.drives d
       WHERE d.id = ${driveId} AND d.kind = 'personal' AND NOT u.is_external
         AND EXISTS (SELECT 1 FROM storage.role_grants g
                      WHERE g.resource_type = 'drive' AND g.resource_id = d.id AND g.role = 'owner'
                        AND g.subject_type = 'user' AND g.subject_id = u.id)`.execute(this.#trx);
  }

  async folderPaths(folderId: string, lock: boolean): Promise<readonly FolderPathRow[] | null> {
    if (lock) {
      // The parent (its stored path is what the trigger reads) and the subtree below.
      const self = await sql<{ parent_id: string | null }>`
        SELECT parent_id FROM storage.folders WHERE id = ${folderId}`.execute(this.#trx);
      const head = self.rows[0];
      if (head === undefined) return null;
      const { rows } = await sql<{ id: string }>`
        WITH RECURSIVE down AS (
          SELECT ${folderId}::uuid AS id, 0 AS depth
          UNION ALL
          SELECT c.id, d.depth + 1 FROM storage.folders c JOIN down d ON c.parent_id = d.id
           WHERE d.depth < ${MAX_DEPTH}
        ) SELECT id FROM down`.execute(this.#trx);
      await lockRows(this.#trx, 'folders', [
        ...(head.parent_id === null ? [] : [head.parent_id]),
        ...rows.map((r) => r.id),
      ]);
    }
    const rows = await folderPathRows(this.#trx, folderId);
    return rows === null ? null : rows.map(({ depth: _depth, ...r }) => r);
  }

  /**
   * Through OxiCloud's trigger, never by writing the columns (§4): `SET
   * name = name` on the shallowest folders that differ, then again on what
   * still differs, until nothing does. Each pass fixes its level (the
   * trigger reads the parent's stored row, already right), and the cascade
   * trigger's prefix rewrite of the rows below is corrected by the next.
   */
  async rewriteFolderPaths(folderId: string): Promise<number> {
    const first = (await folderPathRows(this.#trx, folderId)) ?? [];
    const changed = first.filter(differs).length;
    let rows = first;
    for (let pass = 0; pass <= MAX_DEPTH; pass += 1) {
      const wrong = rows.filter(differs);
      const top = wrong[0];
      if (top === undefined) return changed;
      const level = wrong.filter((r) => r.depth === top.depth).map((r) => r.folderId);
      await sql`UPDATE storage.folders SET name = name WHERE id = ANY(${level}::uuid[])`.execute(this.#trx);
      const next = (await folderPathRows(this.#trx, folderId)) ?? [];
      const still = next.filter((r) => differs(r) && level.includes(r.folderId));
      if (still.length > 0) {
        throw new StorageError(
          'CONFLICT',
          `folder ${still[0]?.folderId}: its path is still ${still[0]?.path} after the trigger recomputed it (expected ${still[0]?.expectedPath}); nothing written`,
        );
      }
      rows = next;
    }
    throw new StorageError(
      'CONFLICT',
      `folder ${folderId}: the subtree's paths did not settle; nothing written`,
    );
  }

  async fileBlobSize(fileId: string, lock: boolean): Promise<FileBlobSizeState | null> {
    const { rows } = await sql<{
      drive_id: string;
      owner_id: string | null;
      blob_hash: string;
      size: string;
      is_trashed: boolean;
      in_envelope: boolean;
      content_size: string | null;
    }>`
      SELECT f.drive_id, ${DRIVE_OWNER} AS owner_id, f.blob_hash, f.size, f.is_trashed,
             ${IN_ENVELOPE} AS in_envelope,
             COALESCE((SELECT m.total_size FROM storage.chunk_manifests m WHERE m.file_hash = f.blob_hash),
                      (SELECT b.size FROM storage.blobs b WHERE b.hash = f.blob_hash)) AS content_size
        FROM storage.files f
        JOIN storage.drives d ON d.id = f.drive_id
       WHERE f.id = ${fileId}
       ${lock ? sql`FOR UPDATE OF f` : sql``}`.execute(this.#trx);
    const row = rows[0];
    if (row === undefined) return null;
    return {
      driveId: row.drive_id,
      ownerId: row.owner_id ?? '',
      blobHash: row.blob_hash,
      fileSize: bigintToNumber(row.size),
      blobSize: row.content_size === null ? null : bigintToNumber(row.content_size),
      countsInUsage: !row.is_trashed,
      countsInEnvelope: row.in_envelope,
    };
  }

  async setFileSize(fileId: string, size: number): Promise<void> {
    // updated_at too: OxiCloud's statement trigger enqueues the folder's tree-ETag bump.
    await sql`UPDATE storage.files SET size = ${size}, updated_at = now() WHERE id = ${fileId}`.execute(
      this.#trx,
    );
  }

  async trashedParent(
    type: 'file' | 'folder',
    id: string,
    lock: boolean,
  ): Promise<TrashedParentState | null> {
    const self =
      type === 'file'
        ? await sql<{ is_trashed: boolean; drive_id: string; parent_id: string | null }>`
            SELECT is_trashed, drive_id, folder_id AS parent_id FROM storage.files WHERE id = ${id}`.execute(
            this.#trx,
          )
        : await sql<{ is_trashed: boolean; drive_id: string; parent_id: string | null }>`
            SELECT is_trashed, drive_id, parent_id FROM storage.folders WHERE id = ${id}`.execute(this.#trx);
    const row = self.rows[0];
    if (row === undefined) return null;
    const up = await ancestors(this.#trx, row.parent_id);
    let liveFolders: string[] = [];
    let liveFiles: string[] = [];
    if (type === 'folder') {
      const below = await sql<{ id: string; is_trashed: boolean }>`
        WITH RECURSIVE down AS (
          SELECT c.id, c.is_trashed, 1 AS depth FROM storage.folders c WHERE c.parent_id = ${id}
          UNION ALL
          SELECT c.id, c.is_trashed, d.depth + 1 FROM storage.folders c JOIN down d ON c.parent_id = d.id
           WHERE d.depth < ${MAX_DEPTH}
        ) SELECT id, is_trashed FROM down`.execute(this.#trx);
      liveFolders = below.rows
        .filter((r) => !r.is_trashed)
        .map((r) => r.id)
        .sort();
      const inTree = [id, ...below.rows.map((r) => r.id)];
      const files = await sql<{ id: string }>`
        SELECT id FROM storage.files WHERE folder_id = ANY(${inTree}::uuid[]) AND NOT is_trashed ORDER BY id`.execute(
        this.#trx,
      );
      liveFiles = files.rows.map((r) => r.id);
    }
    if (lock) {
      await lockRows(this.#trx, 'folders', [
        ...up.map((r) => r.id),
        ...(type === 'folder' ? [id] : []),
        ...liveFolders,
      ]);
      await lockRows(this.#trx, 'files', [...(type === 'file' ? [id] : []), ...liveFiles]);
      // Read again under the locks: the answer is what apply compares.
      return this.trashedParent(type, id, false);
    }
    const trashing = type === 'file' ? (row.is_trashed ? [] : [id]) : liveFiles;
    return {
      trashed: row.is_trashed,
      driveId: row.drive_id,
      trashedAncestors: up.filter((r) => r.is_trashed).map((r) => r.id),
      liveFolders,
      liveFiles,
      trashUsage: await this.#usageOf(trashing),
    };
  }

  /** The live bytes of `fileIds` per drive, with the user whose envelope counts the drive. */
  async #usageOf(fileIds: readonly string[]) {
    if (fileIds.length === 0) return [];
    const { rows } = await sql<{ drive_id: string; bytes: string; user_id: string | null }>`
      SELECT d.id AS drive_id, SUM(f.size)::bigint AS bytes,
             CASE WHEN ${IN_ENVELOPE} THEN (
               SELECT g.subject_id FROM storage.role_grants g
                WHERE g.resource_type = 'drive' AND g.resource_id = d.id AND g.role = 'owner'
                  AND g.subject_type = 'user' ORDER BY g.granted_at, g.id LIMIT 1) END AS user_id
        FROM storage.files f JOIN storage.drives d ON d.id = f.drive_id
       WHERE f.id = ANY(${[...fileIds]}::uuid[]) AND NOT f.is_trashed
       GROUP BY d.id
      HAVING SUM(f.size) > 0
       ORDER BY d.id`.execute(this.#trx);
    return rows.map((r) => ({ driveId: r.drive_id, bytes: bigintToNumber(r.bytes), userId: r.user_id }));
  }

  /**
   * Untrashes the folders as OxiCloud's restore leaves a row (§4):
   * `is_trashed` false, `trashed_at` and `original_parent_id` NULL (a live
   * row has no `original_*`). Refuses a live-to-be root no drive points at
   * (its commit would fail OxiCloud's constraint trigger).
   */
  async restoreFolders(folderIds: readonly string[]): Promise<void> {
    if (folderIds.length === 0) return;
    const unlinked = await unlinkedRoots(this.#trx, folderIds);
    if (unlinked.length > 0) {
      throw new StorageError(
        'CONFLICT',
        `folder ${unlinked[0]} is a top-level folder no drive points at: restoring it would fail OxiCloud's trg_no_orphan_root_folder at commit; nothing written`,
      );
    }
    await sql`
      UPDATE storage.folders
         SET is_trashed = FALSE, trashed_at = NULL, original_parent_id = NULL, updated_at = now()
       WHERE id = ANY(${[...folderIds]}::uuid[])`.execute(this.#trx);
  }

  /**
   * Trashes the rows as OxiCloud's folder-trash cascade leaves descendants
   * (§4): `is_trashed`, `trashed_at = now()`, `original_*` left NULL (so
   * restoring the trashed folder above restores them too); `folder_id` is
   * kept. The live files' sizes leave their drives' `used_bytes` (and the
   * envelopes), as OxiCloud's formula counts live files only.
   */
  async trashRows(folderIds: readonly string[], fileIds: readonly string[]): Promise<void> {
    if (folderIds.length > 0) {
      await sql`
        UPDATE storage.folders SET is_trashed = TRUE, trashed_at = now(), updated_at = now()
         WHERE id = ANY(${[...folderIds]}::uuid[]) AND NOT is_trashed`.execute(this.#trx);
    }
    if (fileIds.length > 0) {
      const { rows } = await sql<{ drive_id: string; total: string }>`
        WITH t AS (
          UPDATE storage.files SET is_trashed = TRUE, trashed_at = now(), updated_at = now()
           WHERE id = ANY(${[...fileIds]}::uuid[]) AND NOT is_trashed
          RETURNING drive_id, size
        )
        SELECT drive_id, SUM(size)::bigint AS total FROM t GROUP BY drive_id ORDER BY drive_id`.execute(
        this.#trx,
      );
      for (const r of rows) await this.addUsage(r.drive_id, -bigintToNumber(r.total));
    }
  }

  async blobRow(hash: string, lock: boolean): Promise<BlobRowState | null> {
    const { rows } = await sql<{ size: string; ref_count: number; orphaned_at: Date | null }>`
      SELECT size, ref_count, orphaned_at FROM storage.blobs WHERE hash = ${hash}
      ${lock ? sql`FOR UPDATE` : sql``}`.execute(this.#trx);
    const row = rows[0];
    if (row === undefined) return null;
    return {
      size: bigintToNumber(row.size),
      refCount: row.ref_count,
      deleting: false,
      orphanedAt: row.orphaned_at,
    };
  }

  async referencingFiles(hash: string, limit: number): Promise<{ count: number; files: ReferencingFile[] }> {
    const count = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM storage.files f WHERE ${usingFiles(hash)}`.execute(this.#trx);
    const n = count.rows[0]?.n ?? 0;
    if (limit <= 0 || n === 0) return { count: n, files: [] };
    const { rows } = await sql<{
      id: string;
      name: string;
      drive_id: string;
      owner_id: string | null;
      owner_name: string | null;
      size: string;
    }>`
      SELECT f.id, f.name, f.drive_id, o.owner_id, COALESCE(u.username, u.email) AS owner_name, f.size
        FROM storage.files f
        JOIN storage.drives d ON d.id = f.drive_id
        CROSS JOIN LATERAL (SELECT ${DRIVE_OWNER} AS owner_id) o
        LEFT JOIN auth.users u ON u.id = o.owner_id
       WHERE ${usingFiles(hash)}
       ORDER BY f.id
       LIMIT ${limit}`.execute(this.#trx);
    return {
      count: n,
      files: rows.map((r) => ({
        fileId: r.id,
        name: r.name,
        driveId: r.drive_id,
        ownerId: r.owner_id ?? '',
        ownerName: r.owner_name ?? '',
        size: bigintToNumber(r.size),
      })),
    };
  }

  /**
   * Inserts the row with the count §12 item 15 expects and no
   * `orphaned_at` (a legacy blob's `content_type` from its files); an
   * existing row's count is only ever raised to it. `created` or `existing`.
   */
  async reserveBlobRow(hash: string, size: number): Promise<string> {
    const { rows } = await sql<{ inserted: boolean }>`
      INSERT INTO storage.blobs (hash, size, ref_count, content_type, orphaned_at)
      SELECT ${hash}, ${size}, e.n, ct.mime, CASE WHEN e.n > 0 THEN NULL ELSE now() END
        FROM (SELECT ${expectedRefCount(hash)}::int AS n) e
        LEFT JOIN LATERAL (
          SELECT f.mime_type AS mime FROM storage.files f
           WHERE f.blob_hash = ${hash}
             AND NOT EXISTS (SELECT 1 FROM storage.chunk_manifests m WHERE m.chunk_hashes @> ARRAY[${hash}::text])
           ORDER BY f.created_at, f.id LIMIT 1) ct ON true
      ON CONFLICT (hash) DO UPDATE
         SET ref_count = GREATEST(storage.blobs.ref_count, EXCLUDED.ref_count),
             orphaned_at = CASE WHEN GREATEST(storage.blobs.ref_count, EXCLUDED.ref_count) > 0 THEN NULL
                                ELSE COALESCE(storage.blobs.orphaned_at, now()) END
      RETURNING (xmax = 0) AS inserted`.execute(this.#trx);
    return rows[0]?.inserted === false ? 'existing' : 'created';
  }

  async markBlobForDeletion(hash: string): Promise<boolean> {
    throw new StorageError('INVALID_ARGUMENT', `blob ${hash}: ${NO_DELETION_PROTOCOL}`);
  }

  /**
   * Bytes without a row: a row at `ref_count 0` with `orphaned_at = now()`
   * (the state OxiCloud gives an aborted upload's chunks, §5), only while no
   * file names the hash and no manifest lists it or is named by it. An
   * upload of the same bytes then pins it (+1 on conflict); `dedup_gc`
   * collects it past its grace, into its quarantine.
   */
  async insertMarkedBlobRow(hash: string, size: number): Promise<boolean> {
    const { rows } = await sql<{ hash: string }>`
      INSERT INTO storage.blobs (hash, size, ref_count, content_type, orphaned_at)
      SELECT ${hash}, ${size}, 0, NULL, now()
       WHERE NOT EXISTS (SELECT 1 FROM storage.files f WHERE f.blob_hash = ${hash})
         AND NOT EXISTS (SELECT 1 FROM storage.chunk_manifests m
                          WHERE m.file_hash = ${hash} OR m.chunk_hashes @> ARRAY[${hash}::text])
      ON CONFLICT (hash) DO NOTHING
      RETURNING hash`.execute(this.#trx);
    return rows.length === 1;
  }

  async blobCounters(hash: string, lock: boolean): Promise<BlobCounterState | null> {
    // The lock first, then the count: an upload's +1 waiting on it lands on the corrected counter.
    const { rows } = await sql<{ ref_count: number; orphaned_at: Date | null }>`
      SELECT ref_count, orphaned_at FROM storage.blobs WHERE hash = ${hash}
      ${lock ? sql`FOR UPDATE` : sql``}`.execute(this.#trx);
    const row = rows[0];
    if (row === undefined) return null;
    const expected = await sql<{ n: string }>`SELECT ${expectedRefCount(hash)} AS n`.execute(this.#trx);
    return {
      refCount: row.ref_count,
      fileCount: bigintToNumber(expected.rows[0]?.n ?? '0'),
      orphanedAt: row.orphaned_at?.toISOString() ?? null,
      deleting: false,
      refuseLowering: true,
      markOnlyAtZero: true,
      countBasis: 'expected reference(s) (manifests listing it, or files naming a legacy blob)',
    };
  }

  /** Raises (never lowers) the count; `orphaned_at` cleared above 0, else kept or stamped now. */
  async setBlobRefCount(hash: string, refCount: number): Promise<void> {
    const result = await sql`
      UPDATE storage.blobs
         SET ref_count = ${refCount},
             orphaned_at = CASE WHEN ${refCount}::int > 0 THEN NULL ELSE COALESCE(orphaned_at, now()) END
       WHERE hash = ${hash} AND ref_count <= ${refCount}`.execute(this.#trx);
    if (Number(result.numAffectedRows ?? 0) !== 1) {
      throw new StorageError(
        'CONFLICT',
        `blob ${hash}: its ref_count is gone or above ${refCount}; a repair never lowers a count on OxiCloud's domain`,
      );
    }
  }

  async manifestCounters(
    fileHash: string,
    lock: boolean,
    limit: number,
  ): Promise<ManifestCounterState | null> {
    // The lock first, then the count: an upload's +1 waiting on it lands on the raised counter.
    const { rows } = await sql<{ ref_count: number }>`
      SELECT ref_count FROM storage.chunk_manifests WHERE file_hash = ${fileHash}
      ${lock ? sql`FOR UPDATE` : sql``}`.execute(this.#trx);
    const row = rows[0];
    if (row === undefined) return null;
    // §12 item 14: every file naming the manifest, trashed included.
    const files = await sql<{ n: string; ids: string[] | null }>`
      SELECT count(*)::text AS n,
             (SELECT array_agg(x.id::text ORDER BY x.id)
                FROM (SELECT id FROM storage.files WHERE blob_hash = ${fileHash} ORDER BY id LIMIT ${limit}) x) AS ids
        FROM storage.files WHERE blob_hash = ${fileHash}`.execute(this.#trx);
    return {
      refCount: row.ref_count,
      fileCount: bigintToNumber(files.rows[0]?.n ?? '0'),
      fileIds: files.rows[0]?.ids ?? [],
    };
  }

  /** Raises (never lowers) the manifest's count. */
  async raiseManifestRefCount(fileHash: string, refCount: number): Promise<void> {
    const result = await sql`
      UPDATE storage.chunk_manifests SET ref_count = ${refCount}
       WHERE file_hash = ${fileHash} AND ref_count <= ${refCount}`.execute(this.#trx);
    if (Number(result.numAffectedRows ?? 0) !== 1) {
      throw new StorageError(
        'CONFLICT',
        `manifest ${fileHash}: it is gone or its ref_count is above ${refCount}; a repair never lowers a count on OxiCloud's domain`,
      );
    }
  }

  async derivedFileColumn(
    fileId: string,
    column: DerivedFileColumn,
    lock: boolean,
  ): Promise<DerivedColumnState | null> {
    // The file row's lock first: a rename or a metadata write waits, then the formula reads what is there.
    // As text: a timestamp keeps its microseconds (a JavaScript Date would drop them).
    const { rows } = await sql<{ recorded: string; expected: string }>`
      SELECT f.${sql.ref(column)}::text AS recorded, (${derivedFormula(column)})::text AS expected
        FROM storage.files f WHERE f.id = ${fileId}::uuid
        ${lock ? sql`FOR UPDATE OF f` : sql``}`.execute(this.#trx);
    const row = rows[0];
    if (row === undefined) return null;
    return { recorded: row.recorded, expected: row.expected };
  }

  async setDerivedFileColumn(fileId: string, column: DerivedFileColumn): Promise<void> {
    await sql`UPDATE storage.files f SET ${sql.ref(column)} = ${derivedFormula(column)}
               WHERE f.id = ${fileId}::uuid`.execute(this.#trx);
  }

  async faceRow(faceId: string, lock: boolean): Promise<FaceRowState | null> {
    const { rows } = await sql<{ file_id: string; face_hash: string | null; file_hash: string }>`
      SELECT fc.file_id::text AS file_id, fc.blob_hash AS face_hash, f.blob_hash AS file_hash
        FROM faces.faces fc JOIN storage.files f ON f.id = fc.file_id
       WHERE fc.id = ${faceId}::uuid
       ${lock ? sql`FOR UPDATE OF fc` : sql``}`.execute(this.#trx);
    const row = rows[0];
    return row === undefined
      ? null
      : { fileId: row.file_id, faceHash: row.face_hash, fileHash: row.file_hash };
  }

  async deleteFace(faceId: string): Promise<boolean> {
    const result = await sql`DELETE FROM faces.faces WHERE id = ${faceId}::uuid`.execute(this.#trx);
    return Number(result.numAffectedRows ?? 0) === 1;
  }

  get deletableReferences(): readonly ReferenceSource[] {
    return Object.keys(DELETABLE_REFERENCES) as ReferenceSource[];
  }

  async referenceRow(source: ReferenceSource, id: string, lock: boolean): Promise<ReferenceRowState | null> {
    const t = deletable(source);
    const { rows } = await sql<{ item_type: string | null; item_id: string | null; reason: string | null }>`
      SELECT r.item_type, r.item_id, CASE ${ITEM_DANGLING_ARMS(sql`r.item_type`, sql`r.item_id`)} END AS reason
        FROM (SELECT ${sql.raw(`${t.type} AS item_type, ${t.id} AS item_id`)}
                FROM ${sql.raw(t.table)} WHERE id = ${id}::${sql.raw(t.key)}
                ${lock ? sql`FOR UPDATE` : sql``}) r`.execute(this.#trx);
    const row = rows[0];
    return row === undefined ? null : { itemType: row.item_type, itemId: row.item_id, reason: row.reason };
  }

  async deleteReference(source: ReferenceSource, id: string): Promise<boolean> {
    const t = deletable(source);
    const result = await sql`DELETE FROM ${sql.raw(t.table)} WHERE id = ${id}::${sql.raw(t.key)}`.execute(
      this.#trx,
    );
    return Number(result.numAffectedRows ?? 0) === 1;
  }

  async grantRow(grantId: string, lock: boolean): Promise<GrantRowState | null> {
    // grants_consistency's dangling_grant on this domain: the subject or the resource is gone (§8, §12 item 20).
    const { rows } = await sql<{
      subject_id: string;
      resource_type: string;
      resource_id: string;
      role: string;
      expires_at: Date | null;
      resource_exists: boolean;
      expired: boolean;
    }>`
      SELECT g.subject_id, g.resource_type, g.resource_id, g.role::text AS role, g.expires_at,
             (CASE g.subject_type
                WHEN 'user' THEN EXISTS (SELECT 1 FROM auth.users x WHERE x.id = g.subject_id)
                WHEN 'group' THEN EXISTS (SELECT 1 FROM auth.subject_groups x WHERE x.id = g.subject_id)
                WHEN 'token' THEN EXISTS (SELECT 1 FROM storage.shares x WHERE x.id = g.subject_id)
                ELSE false
              END AND CASE g.resource_type
                WHEN 'folder' THEN EXISTS (SELECT 1 FROM storage.folders x WHERE x.id = g.resource_id)
                WHEN 'file' THEN EXISTS (SELECT 1 FROM storage.files x WHERE x.id = g.resource_id)
                WHEN 'drive' THEN EXISTS (SELECT 1 FROM storage.drives x WHERE x.id = g.resource_id)
                WHEN 'calendar' THEN EXISTS (SELECT 1 FROM caldav.calendars x WHERE x.id = g.resource_id)
                WHEN 'address_book' THEN EXISTS (SELECT 1 FROM carddav.address_books x WHERE x.id = g.resource_id)
                WHEN 'playlist' THEN EXISTS (SELECT 1 FROM audio.playlists x WHERE x.id = g.resource_id)
                ELSE false
              END) AS resource_exists,
             COALESCE(g.expires_at <= now(), false) AS expired
        FROM storage.role_grants g WHERE g.id = ${grantId}
        ${lock ? sql`FOR UPDATE OF g` : sql``}`.execute(this.#trx);
    const row = rows[0];
    if (row === undefined) return null;
    return {
      subjectId: row.subject_id,
      resourceType: row.resource_type,
      resourceId: row.resource_id,
      role: row.role,
      expiresAt: row.expires_at?.toISOString() ?? null,
      resourceExists: row.resource_exists,
      expired: row.expired,
    };
  }

  async deleteGrant(grantId: string): Promise<boolean> {
    // A token grant's delete fires OxiCloud's reverse cascade (its share row goes with its last grant, §8).
    const result = await sql`DELETE FROM storage.role_grants WHERE id = ${grantId}`.execute(this.#trx);
    return Number(result.numAffectedRows ?? 0) === 1;
  }
}

/**
 * {@link RepairStore} on OxiCloud's storage domain (fact sheet §3–§8, §12),
 * what the `repair` job applies plans with on `OXICLOUD_STORAGE_DOMAIN=oxicloud`.
 * Reads for a plan run in a `READ ONLY` transaction; `write` is one item's
 * transaction, where the `lock` reads take the rows' locks (id order), so
 * what apply re-checks cannot change before it writes. OxiCloud's rules:
 *
 * - **Counts are never lowered.** A blob row's `ref_count` is raised to what
 *   §12 item 15 expects (manifests listing it, or files naming a legacy
 *   blob); a count above it is a leak for a person (`refuseLowering`), and
 *   `setBlobRefCount` refuses any lower value, and so does
 *   `raiseManifestRefCount` (a manifest counted below its files).
 * - **Paths through the trigger.** `rewriteFolderPaths` runs `SET name =
 *   name` top-down; the path columns are never written.
 * - **Usage by OxiCloud's formulas** (§6): a drive's live files; the
 *   envelope of the personal drives a user owns by grant (shared drives and
 *   external users never count).
 * - **Dangling grants** (subject or resource gone) are deleted.
 * - **No deletion protocol** (`orphanRemoval: 'dedup_gc'`): orphan bytes
 *   get a row at `ref_count 0` with `orphaned_at`, for `dedup_gc` and its
 *   quarantine; `markBlobForDeletion` and `finishBlobDeletion` refuse.
 *
 * @example
 * ```ts
 * const store = new OxiRepairStore(db);
 * const actions = createRepairActions({ store, blobs: { blobs, hasher } });
 * ```
 */
export class OxiRepairStore implements RepairStore {
  readonly orphanRemoval = 'dedup_gc' as const;
  readonly #db: Kysely<OxiCloudDatabase>;

  constructor(db: Kysely<OxiCloudDatabase>) {
    this.#db = db;
  }

  read<T>(fn: (tx: RepairTx) => Promise<T>): Promise<T> {
    return this.#db
      .transaction()
      .setAccessMode('read only')
      .execute((trx) => fn(new OxiRepairTx(trx)));
  }

  write<T>(fn: (tx: RepairTx) => Promise<T>): Promise<T> {
    return this.#db.transaction().execute((trx) => fn(new OxiRepairTx(trx)));
  }

  inTransaction(tx: RunTransaction): RepairTx {
    return new OxiRepairTx(tx as unknown as Trx);
  }

  async finishBlobDeletion(hash: string): Promise<boolean> {
    throw new StorageError('INVALID_ARGUMENT', `blob ${hash}: ${NO_DELETION_PROTOCOL}`);
  }
}
