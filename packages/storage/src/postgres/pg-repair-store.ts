import type { RunTransaction } from '@oxicloud/recoverable';
import type {
  BlobCounterState,
  BlobRowState,
  DriveUsageState,
  FileBlobSizeState,
  FolderPathRow,
  GrantRowState,
  ReferencingFile,
  RepairStore,
  RepairTx,
  TrashedParentState,
  UserUsageState,
} from '@oxicloud/tenants';
import { type Kysely, sql, type Transaction } from 'kysely';
import { StorageError } from '../storage-error.js';
import { bigintToNumber, type StorageDatabase } from './database.js';
import { PgOrphanBlobRepository } from './pg-orphan-blob-repository.js';
import { reserveBlob } from './reserve-blob.js';

/** Deeper chains than this are treated as cycles (no root reached). */
const MAX_DEPTH = 10_000;

/** The ids of a folder's ancestors (nearest first) and whether the chain reaches a root. */
async function ancestors(
  trx: Transaction<StorageDatabase>,
  parentId: string | null,
): Promise<{ rows: { id: string; is_trashed: boolean }[]; rooted: boolean }> {
  if (parentId === null) return { rows: [], rooted: true };
  const { rows } = await sql<{ id: string; parent_id: string | null; is_trashed: boolean; depth: number }>`
    WITH RECURSIVE up AS (
      SELECT id, parent_id, is_trashed, 0 AS depth FROM storage.folders WHERE id = ${parentId}
      UNION ALL
      SELECT p.id, p.parent_id, p.is_trashed, up.depth + 1
        FROM storage.folders p JOIN up ON p.id = up.parent_id
       WHERE up.depth < ${MAX_DEPTH}
    )
    SELECT id, parent_id, is_trashed, depth FROM up ORDER BY depth`.execute(trx);
  const last = rows[rows.length - 1];
  return { rows, rooted: last !== undefined && last.parent_id === null };
}

/** Locks `ids` (id order, so two repairs cannot deadlock). */
async function lockRows(
  trx: Transaction<StorageDatabase>,
  table: 'folders' | 'files',
  ids: readonly string[],
) {
  if (ids.length === 0) return;
  const t = table === 'folders' ? sql`storage.folders` : sql`storage.files`;
  await sql`SELECT id FROM ${t} WHERE id = ANY(${[...ids]}::uuid[]) ORDER BY id FOR UPDATE`.execute(trx);
}

/** The folder (first) and the folders below it whose path/lpath differ from the chain's. */
async function folderPathRows(
  trx: Transaction<StorageDatabase>,
  folderId: string,
): Promise<FolderPathRow[] | null> {
  const { rows } = await sql<{
    id: string;
    path: string;
    lpath: string;
    expected_path: string;
    expected_lpath: string;
  }>`
    WITH RECURSIVE up AS (
      SELECT id, parent_id, name, 0 AS depth FROM storage.folders WHERE id = ${folderId}
      UNION ALL
      SELECT p.id, p.parent_id, p.name, up.depth + 1
        FROM storage.folders p JOIN up ON p.id = up.parent_id
       WHERE up.depth < ${MAX_DEPTH}
    ),
    head AS (
      SELECT '/' || string_agg(name, '/' ORDER BY depth DESC) AS epath,
             string_agg(replace(id::text, '-', ''), '.' ORDER BY depth DESC) AS elpath
        FROM up
      HAVING bool_or(parent_id IS NULL AND depth = (SELECT max(depth) FROM up))
    ),
    down AS (
      SELECT ${folderId}::uuid AS id, head.epath, head.elpath, 0 AS depth FROM head
      UNION ALL
      SELECT c.id, d.epath || '/' || c.name, d.elpath || '.' || replace(c.id::text, '-', ''), d.depth + 1
        FROM storage.folders c JOIN down d ON c.parent_id = d.id
       WHERE d.depth < ${MAX_DEPTH}
    )
    SELECT f.id, f.path, f.lpath::text AS lpath, d.epath AS expected_path, d.elpath AS expected_lpath
      FROM down d JOIN storage.folders f ON f.id = d.id
     WHERE d.depth = 0 OR f.path <> d.epath OR f.lpath::text <> d.elpath
     ORDER BY d.depth, d.epath`.execute(trx);
  if (rows.length === 0) return null;
  return rows.map((r) => ({
    folderId: r.id,
    path: r.path,
    lpath: r.lpath,
    expectedPath: r.expected_path,
    expectedLpath: r.expected_lpath,
  }));
}

class PgRepairTx implements RepairTx {
  readonly #trx: Transaction<StorageDatabase>;
  #savepoints = 0;

  constructor(trx: Transaction<StorageDatabase>) {
    this.#trx = trx;
  }

  async attempt<T>(fn: () => Promise<T>): Promise<T> {
    this.#savepoints += 1;
    const name = sql.raw(`repair_item_${this.#savepoints}`);
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
    const { rows } = await sql<{ owner_id: string; used_bytes: string }>`
      SELECT owner_id, used_bytes FROM storage.drives WHERE id = ${driveId}
      ${lock ? sql`FOR UPDATE` : sql``}`.execute(this.#trx);
    const row = rows[0];
    if (row === undefined) return null;
    const sum = await sql<{ total: string }>`
      SELECT COALESCE(SUM(size), 0)::bigint AS total FROM storage.files WHERE drive_id = ${driveId}`.execute(
      this.#trx,
    );
    return {
      ownerId: row.owner_id,
      usedBytes: bigintToNumber(row.used_bytes),
      filesBytes: bigintToNumber(sum.rows[0]?.total ?? '0'),
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
    const sum = await sql<{ total: string }>`
      SELECT COALESCE(SUM(used_bytes), 0)::bigint AS total FROM storage.drives WHERE owner_id = ${userId}`.execute(
      this.#trx,
    );
    return {
      usedBytes: bigintToNumber(row.storage_used_bytes),
      drivesBytes: bigintToNumber(sum.rows[0]?.total ?? '0'),
    };
  }

  async setUserUsedBytes(userId: string, bytes: number): Promise<void> {
    await sql`UPDATE auth.users SET storage_used_bytes = ${bytes} WHERE id = ${userId}`.execute(this.#trx);
  }

  async addUsage(driveId: string, delta: number): Promise<void> {
    if (delta === 0) return;
    await sql`
      WITH d AS (
        UPDATE storage.drives SET used_bytes = used_bytes + ${delta} WHERE id = ${driveId} RETURNING owner_id
      )
      UPDATE auth.users u SET storage_used_bytes = u.storage_used_bytes + ${delta}
        FROM d WHERE u.id = d.owner_id`.execute(this.#trx);
  }

  async folderPaths(folderId: string, lock: boolean): Promise<readonly FolderPathRow[] | null> {
    if (lock) {
      // Lock the chain above (a rename there changes the expected paths) and the subtree below.
      const self = await sql<{ parent_id: string | null }>`
        SELECT parent_id FROM storage.folders WHERE id = ${folderId}`.execute(this.#trx);
      const head = self.rows[0];
      if (head === undefined) return null;
      const up = await ancestors(this.#trx, head.parent_id);
      const { rows } = await sql<{ id: string }>`
        WITH RECURSIVE down AS (
          SELECT ${folderId}::uuid AS id, 0 AS depth
          UNION ALL
          SELECT c.id, d.depth + 1 FROM storage.folders c JOIN down d ON c.parent_id = d.id
           WHERE d.depth < ${MAX_DEPTH}
        ) SELECT id FROM down`.execute(this.#trx);
      await lockRows(this.#trx, 'folders', [...up.rows.map((r) => r.id), ...rows.map((r) => r.id)].sort());
    }
    return folderPathRows(this.#trx, folderId);
  }

  async rewriteFolderPaths(folderId: string): Promise<number> {
    const rows = (await folderPathRows(this.#trx, folderId)) ?? [];
    const changed = rows.filter((r) => r.path !== r.expectedPath || r.lpath !== r.expectedLpath);
    if (changed.length === 0) return 0;
    const result = await sql`
      UPDATE storage.folders f SET path = v.path, lpath = text2ltree(v.lpath)
        FROM unnest(${changed.map((r) => r.folderId)}::uuid[], ${changed.map((r) => r.expectedPath)}::text[],
                    ${changed.map((r) => r.expectedLpath)}::text[]) AS v(id, path, lpath)
       WHERE f.id = v.id`.execute(this.#trx);
    return Number(result.numAffectedRows ?? 0);
  }

  async fileBlobSize(fileId: string, lock: boolean): Promise<FileBlobSizeState | null> {
    const { rows } = await sql<{
      drive_id: string;
      owner_id: string;
      blob_hash: string;
      size: string;
      blob_size: string | null;
    }>`
      SELECT f.drive_id, d.owner_id, f.blob_hash, f.size, b.size AS blob_size
        FROM storage.files f
        JOIN storage.drives d ON d.id = f.drive_id
        LEFT JOIN storage.blobs b ON b.hash = f.blob_hash
       WHERE f.id = ${fileId}
       ${lock ? sql`FOR UPDATE OF f` : sql``}`.execute(this.#trx);
    const row = rows[0];
    if (row === undefined) return null;
    return {
      driveId: row.drive_id,
      ownerId: row.owner_id,
      blobHash: row.blob_hash,
      fileSize: bigintToNumber(row.size),
      blobSize: row.blob_size === null ? null : bigintToNumber(row.blob_size),
    };
  }

  async setFileSize(fileId: string, size: number): Promise<void> {
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
      await lockRows(
        this.#trx,
        'folders',
        [...up.rows.map((r) => r.id), ...(type === 'folder' ? [id] : []), ...liveFolders].sort(),
      );
      await lockRows(this.#trx, 'files', [...(type === 'file' ? [id] : []), ...liveFiles].sort());
      // Read again under the locks: the answer is what apply compares.
      return this.trashedParent(type, id, false);
    }
    return {
      trashed: row.is_trashed,
      driveId: row.drive_id,
      trashedAncestors: up.rows.filter((r) => r.is_trashed).map((r) => r.id),
      liveFolders,
      liveFiles,
    };
  }

  async restoreFolders(folderIds: readonly string[]): Promise<void> {
    if (folderIds.length === 0) return;
    await sql`
      UPDATE storage.folders SET is_trashed = FALSE, trashed_at = NULL, updated_at = now()
       WHERE id = ANY(${[...folderIds]}::uuid[])`.execute(this.#trx);
  }

  async trashRows(folderIds: readonly string[], fileIds: readonly string[]): Promise<void> {
    if (folderIds.length > 0) {
      await sql`
        UPDATE storage.folders SET is_trashed = TRUE, trashed_at = now(), updated_at = now()
         WHERE id = ANY(${[...folderIds]}::uuid[])`.execute(this.#trx);
    }
    if (fileIds.length > 0) {
      await sql`
        UPDATE storage.files SET is_trashed = TRUE, trashed_at = now(), updated_at = now()
         WHERE id = ANY(${[...fileIds]}::uuid[])`.execute(this.#trx);
    }
  }

  async blobRow(hash: string, lock: boolean): Promise<BlobRowState | null> {
    const { rows } = await sql<{
      size: string;
      ref_count: number;
      deleting_at: Date | null;
      orphaned_at: Date | null;
    }>`
      SELECT size, ref_count, deleting_at, orphaned_at FROM storage.blobs WHERE hash = ${hash}
      ${lock ? sql`FOR UPDATE` : sql``}`.execute(this.#trx);
    const row = rows[0];
    if (row === undefined) return null;
    return {
      size: bigintToNumber(row.size),
      refCount: row.ref_count,
      deleting: row.deleting_at !== null,
      orphanedAt: row.orphaned_at,
    };
  }

  async referencingFiles(hash: string, limit: number): Promise<{ count: number; files: ReferencingFile[] }> {
    const count = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM storage.files WHERE blob_hash = ${hash}`.execute(this.#trx);
    if (limit <= 0) return { count: count.rows[0]?.n ?? 0, files: [] };
    const { rows } = await sql<{
      id: string;
      name: string;
      drive_id: string;
      owner_id: string;
      username: string;
      size: string;
    }>`
      SELECT f.id, f.name, f.drive_id, d.owner_id, u.username, f.size
        FROM storage.files f
        JOIN storage.drives d ON d.id = f.drive_id
        JOIN auth.users u ON u.id = d.owner_id
       WHERE f.blob_hash = ${hash}
       ORDER BY f.id
       LIMIT ${limit}`.execute(this.#trx);
    return {
      count: count.rows[0]?.n ?? 0,
      files: rows.map((r) => ({
        fileId: r.id,
        name: r.name,
        driveId: r.drive_id,
        ownerId: r.owner_id,
        ownerName: r.username,
        size: bigintToNumber(r.size),
      })),
    };
  }

  async reserveBlobRow(hash: string, size: number): Promise<string> {
    return (await reserveBlob(this.#trx, { hash, size })).status;
  }

  async markBlobForDeletion(hash: string): Promise<boolean> {
    const { rows } = await sql<{ hash: string }>`
      UPDATE storage.blobs b SET deleting_at = now()
       WHERE b.hash = ${hash} AND b.ref_count = 0 AND b.deleting_at IS NULL
         AND NOT EXISTS (SELECT 1 FROM storage.files f WHERE f.blob_hash = b.hash)
      RETURNING b.hash`.execute(this.#trx);
    return rows.length === 1;
  }

  async insertMarkedBlobRow(hash: string, size: number): Promise<boolean> {
    // Only while no file references the hash: a skipped item writes nothing.
    const { rows } = await sql<{ ref_count: number }>`
      INSERT INTO storage.blobs (hash, size, ref_count, deleting_at)
      SELECT ${hash}, ${size}, 0, now()
       WHERE NOT EXISTS (SELECT 1 FROM storage.files f WHERE f.blob_hash = ${hash})
      ON CONFLICT (hash) DO NOTHING
      RETURNING ref_count`.execute(this.#trx);
    const row = rows[0];
    if (row === undefined) return false;
    if (row.ref_count !== 0) {
      // A reference committed between the check and the insert trigger's
      // count: throwing rolls the item's savepoint (and this row) back.
      throw new StorageError(
        'CONFLICT',
        `blob ${hash}: a file referencing it appeared while its row was being marked for deletion`,
      );
    }
    return true;
  }

  async blobCounters(hash: string, lock: boolean): Promise<BlobCounterState | null> {
    // The lock first, then the count: a file insert whose trigger waits on
    // this lock adds its reference after the commit, to the corrected counter.
    const { rows } = await sql<{ ref_count: number; orphaned_at: Date | null; deleting_at: Date | null }>`
      SELECT ref_count, orphaned_at, deleting_at FROM storage.blobs WHERE hash = ${hash}
      ${lock ? sql`FOR UPDATE` : sql``}`.execute(this.#trx);
    const row = rows[0];
    if (row === undefined) return null;
    const count = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM storage.files WHERE blob_hash = ${hash}`.execute(this.#trx);
    return {
      refCount: row.ref_count,
      fileCount: count.rows[0]?.n ?? 0,
      orphanedAt: row.orphaned_at?.toISOString() ?? null,
      deleting: row.deleting_at !== null,
    };
  }

  async setBlobRefCount(hash: string, refCount: number): Promise<void> {
    await sql`
      UPDATE storage.blobs
         SET ref_count = ${refCount},
             orphaned_at = CASE WHEN ${refCount}::int > 0 THEN NULL ELSE COALESCE(orphaned_at, now()) END
       WHERE hash = ${hash}`.execute(this.#trx);
  }

  async grantRow(grantId: string, lock: boolean): Promise<GrantRowState | null> {
    const { rows } = await sql<{
      subject_id: string;
      resource_type: string;
      resource_id: string;
      role: string;
      expires_at: Date | null;
      resource_exists: boolean;
      expired: boolean;
    }>`
      SELECT g.subject_id, g.resource_type, g.resource_id, g.role, g.expires_at,
             CASE g.resource_type
               WHEN 'drive' THEN EXISTS (SELECT 1 FROM storage.drives d WHERE d.id = g.resource_id)
               WHEN 'folder' THEN EXISTS (SELECT 1 FROM storage.folders d WHERE d.id = g.resource_id)
               WHEN 'file' THEN EXISTS (SELECT 1 FROM storage.files d WHERE d.id = g.resource_id)
               ELSE false
             END AS resource_exists,
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
    const result = await sql`DELETE FROM storage.role_grants WHERE id = ${grantId}`.execute(this.#trx);
    return Number(result.numAffectedRows ?? 0) === 1;
  }
}

/**
 * {@link RepairStore} on the storage domain (`auth.users`, `storage.*`).
 * Reads for a plan run in a `READ ONLY` transaction; `write` is one item's
 * transaction, where the `lock` reads take the rows' locks (id order).
 * `finishBlobDeletion` is the deletion protocol's step 3 through
 * {@link PgOrphanBlobRepository}, exactly as `dedup_gc` runs it.
 */
export class PgRepairStore implements RepairStore {
  readonly #db: Kysely<StorageDatabase>;
  readonly #orphans: PgOrphanBlobRepository;

  constructor(db: Kysely<StorageDatabase>) {
    this.#db = db;
    this.#orphans = new PgOrphanBlobRepository(db);
  }

  read<T>(fn: (tx: RepairTx) => Promise<T>): Promise<T> {
    return this.#db
      .transaction()
      .setAccessMode('read only')
      .execute((trx) => fn(new PgRepairTx(trx)));
  }

  write<T>(fn: (tx: RepairTx) => Promise<T>): Promise<T> {
    return this.#db.transaction().execute((trx) => fn(new PgRepairTx(trx)));
  }

  inTransaction(tx: RunTransaction): RepairTx {
    return new PgRepairTx(tx as unknown as Transaction<StorageDatabase>);
  }

  async finishBlobDeletion(hash: string, deleteBytes: (hash: string) => Promise<void>): Promise<boolean> {
    const result = await this.#orphans.finishDeletion([hash], async (locked) => {
      for (const blob of locked) await deleteBytes(blob.hash);
      return locked.map((b) => b.hash);
    });
    return result.deleted.includes(hash);
  }
}
