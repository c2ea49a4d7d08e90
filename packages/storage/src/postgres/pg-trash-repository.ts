import type { TrashPurgeBatch, TrashRepository } from '@oxicloud/tenants';
import { type Kysely, sql } from 'kysely';
import type { StorageDatabase } from './database.js';

/**
 * {@link TrashRepository} on `storage.folders` / `storage.files`. Each batch
 * is one short transaction: the oldest trashed roots are locked
 * (`FOR UPDATE SKIP LOCKED`, so two purgers never fight over a row), then
 * the files and folders of their subtrees (by `parent_id`, the same edge
 * the `ON DELETE CASCADE` follows) are deleted with explicit statements, so
 * the counts are exact. The blob `ref_count` triggers fire once per
 * statement and mark blobs orphaned; `dedup_gc` collects them later.
 *
 * @example
 * ```ts
 * const db = new Kysely<StorageDatabase>({ dialect: new PostgresDialect({ pool }) });
 * const job = createTrashCleanupJob({ repository: new PgTrashRepository(db), config });
 * ```
 */
export class PgTrashRepository implements TrashRepository {
  readonly #db: Kysely<StorageDatabase>;

  constructor(db: Kysely<StorageDatabase>) {
    this.#db = db;
  }

  async purgeFolderBatch(cutoff: Date, limit: number): Promise<TrashPurgeBatch> {
    return this.#db.transaction().execute(async (trx) => {
      const roots = await sql<{ id: string }>`
        SELECT id FROM storage.folders
         WHERE is_trashed AND trashed_at < ${cutoff}
         ORDER BY trashed_at, id
         LIMIT ${limit}
           FOR UPDATE SKIP LOCKED`.execute(trx);
      const ids = roots.rows.map((r) => r.id);
      if (ids.length === 0) return { selected: 0, folders: 0, files: 0 };
      const subtree = sql`
        WITH RECURSIVE tree(id) AS (
          SELECT unnest(${ids}::uuid[])
          UNION
          SELECT f.id FROM storage.folders f JOIN tree t ON f.parent_id = t.id
        )`;
      const files = await sql`${subtree}
        DELETE FROM storage.files WHERE folder_id IN (SELECT id FROM tree)`.execute(trx);
      const folders = await sql`${subtree}
        DELETE FROM storage.folders WHERE id IN (SELECT id FROM tree)`.execute(trx);
      return {
        selected: ids.length,
        folders: Number(folders.numAffectedRows ?? 0n),
        files: Number(files.numAffectedRows ?? 0n),
      };
    });
  }

  async purgeFileBatch(cutoff: Date, limit: number): Promise<TrashPurgeBatch> {
    const result = await sql`
      DELETE FROM storage.files WHERE id IN (
        SELECT id FROM storage.files
         WHERE is_trashed AND trashed_at < ${cutoff}
         ORDER BY trashed_at, id
         LIMIT ${limit}
           FOR UPDATE SKIP LOCKED)`.execute(this.#db);
    const files = Number(result.numAffectedRows ?? 0n);
    return { selected: files, folders: 0, files };
  }
}
