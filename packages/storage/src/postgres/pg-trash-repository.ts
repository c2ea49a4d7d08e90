import type {
  TrashFolderBatch,
  TrashFolderCursor,
  TrashPurgeBatch,
  TrashRepository,
} from '@oxicloud/tenants';
import { type Kysely, sql } from 'kysely';
import type { StorageDatabase } from './database.js';

/** Bound on the lock-until-stable loop (one round per level a concurrent insert could add). */
const MAX_LOCK_ROUNDS = 1000;

/** The subtrees of `roots` by `parent_id` (the edge `ON DELETE CASCADE` follows), tagged with their root. */
function subtreeOf(roots: readonly string[]) {
  return sql`
    WITH RECURSIVE tree(root, id) AS (
      SELECT r, r FROM unnest(${[...roots]}::uuid[]) AS r
      UNION
      SELECT t.root, f.id FROM storage.folders f JOIN tree t ON f.parent_id = t.id
    )`;
}

/**
 * {@link TrashRepository} on `storage.folders` / `storage.files`. Each batch
 * is one short transaction:
 *
 * 1. the next trashed roots past the cutoff are locked (`FOR UPDATE SKIP
 *    LOCKED`, so two purgers never fight over a row), in `(trashed_at, id)`
 *    order after the caller's cursor;
 * 2. every folder of their subtrees (by `parent_id`, the edge the
 *    `ON DELETE CASCADE` follows) is locked, again until no new folder shows
 *    up, then every file in them: a concurrent insert, move or restore into
 *    the subtree either committed first (and is seen) or waits for us;
 * 3. a root whose subtree holds a folder or file that is not trashed is
 *    skipped whole (`skippedLiveDescendants`): the cascade would delete live
 *    data, which `files_consistency` rates DataLoss;
 * 4. the other subtrees' files and folders are deleted with explicit
 *    statements, so the counts are exact.
 *
 * The blob `ref_count` triggers fire once per statement and mark blobs
 * orphaned; `dedup_gc` collects them later.
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

  async purgeFolderBatch(
    cutoff: Date,
    limit: number,
    after: TrashFolderCursor | null,
  ): Promise<TrashFolderBatch> {
    return this.#db.transaction().execute(async (trx) => {
      const roots = await sql<{ id: string; trashed_at: string }>`
        SELECT id, trashed_at::text AS trashed_at FROM storage.folders
         WHERE is_trashed AND trashed_at < ${cutoff}
           AND (${after === null} OR (trashed_at, id) > (${after?.trashedAt ?? null}::timestamptz, ${after?.id ?? null}::uuid))
         ORDER BY trashed_at, id
         LIMIT ${limit}
           FOR UPDATE SKIP LOCKED`.execute(trx);
      const last = roots.rows[roots.rows.length - 1];
      if (last === undefined)
        return { selected: 0, folders: 0, files: 0, skippedLiveDescendants: [], next: null };
      const next = { trashedAt: last.trashed_at, id: last.id };
      const ids = roots.rows.map((r) => r.id);

      // Lock the subtrees until they stop growing (a folder committed under a
      // locked one before our lock is only seen by the next statement).
      let locked = 0;
      for (let round = 0; ; round++) {
        const tree = await sql<{ id: string }>`${subtreeOf(ids)}
          SELECT f.id FROM storage.folders f WHERE f.id IN (SELECT id FROM tree) ORDER BY f.id FOR UPDATE`.execute(
          trx,
        );
        if (tree.rows.length === locked || round >= MAX_LOCK_ROUNDS) break;
        locked = tree.rows.length;
      }
      await sql`${subtreeOf(ids)}
        SELECT fi.id FROM storage.files fi WHERE fi.folder_id IN (SELECT id FROM tree) ORDER BY fi.id FOR UPDATE`.execute(
        trx,
      );
      const live = await sql<{ root: string }>`${subtreeOf(ids)}
        SELECT DISTINCT t.root FROM tree t
         WHERE EXISTS (SELECT 1 FROM storage.folders f WHERE f.id = t.id AND NOT f.is_trashed)
            OR EXISTS (SELECT 1 FROM storage.files fi WHERE fi.folder_id = t.id AND NOT fi.is_trashed)`.execute(
        trx,
      );
      const skipped = new Set(live.rows.map((r) => r.root));
      const clean = ids.filter((id) => !skipped.has(id));
      const skippedLiveDescendants = ids.filter((id) => skipped.has(id));
      if (clean.length === 0)
        return { selected: ids.length, folders: 0, files: 0, skippedLiveDescendants, next };
      const files = await sql`${subtreeOf(clean)}
        DELETE FROM storage.files WHERE folder_id IN (SELECT id FROM tree)`.execute(trx);
      const folders = await sql`${subtreeOf(clean)}
        DELETE FROM storage.folders WHERE id IN (SELECT id FROM tree)`.execute(trx);
      return {
        selected: ids.length,
        folders: Number(folders.numAffectedRows ?? 0n),
        files: Number(files.numAffectedRows ?? 0n),
        skippedLiveDescendants,
        next,
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
