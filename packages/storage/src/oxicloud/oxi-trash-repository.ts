import type { Logger } from '@oxicloud/scheduler';
import type {
  TrashFolderBatch,
  TrashFolderCursor,
  TrashPurgeBatch,
  TrashRepository,
} from '@oxicloud/tenants';
import { type Kysely, sql } from 'kysely';
import type { OxiCloudDatabase } from './database.js';

/**
 * The shortest trash retention on OxiCloud's domain, in days: OxiCloud
 * promises its users 30 days in the trash (its purge has the value fixed,
 * whatever `OXICLOUD_TRASH_RETENTION_DAYS` says, fact sheet §6), so
 * {@link OxiTrashRepository} never purges anything trashed more recently,
 * whatever cutoff it is given.
 */
export const OXICLOUD_TRASH_RETENTION_DAYS_FLOOR = 30;

const DAY_MS = 86_400_000;

/**
 * The retention that applies on OxiCloud's domain for a configured one:
 * `max(days, OXICLOUD_TRASH_RETENTION_DAYS_FLOOR)`. Passing `trash_cleanup`'s
 * configured `retentionDays` (`trashCleanupConfigFromEnv`) through this makes
 * the job's `extra.retention_days` and `cutoff` report what is really
 * applied; {@link OxiTrashRepository} applies the floor either way.
 */
export function oxiTrashRetentionDays(days: number): number {
  return Math.max(days, OXICLOUD_TRASH_RETENTION_DAYS_FLOOR);
}

/** Bound on the lock-until-stable loop (one round per level a concurrent insert could add). */
const MAX_LOCK_ROUNDS = 1000;

/** Drives whose `read_only` policy (full freeze, legal hold) is on: their trash is never purged. */
const NOT_READ_ONLY = (driveId: ReturnType<typeof sql.ref>) =>
  sql`NOT EXISTS (SELECT 1 FROM storage.drives d
                   WHERE d.id = ${driveId} AND (d.policies->>'read_only')::boolean IS TRUE)`;

/** The subtrees of `roots` by `parent_id` (the edge `ON DELETE CASCADE` follows), tagged with their root. */
function subtreeOf(roots: readonly string[]) {
  return sql`
    WITH RECURSIVE tree(root, id) AS (
      SELECT r, r FROM unnest(${[...roots]}::uuid[]) AS r
      UNION
      SELECT t.root, f.id FROM storage.folders f JOIN tree t ON f.parent_id = t.id
    )`;
}

/** Options of {@link OxiTrashRepository}. */
export interface OxiTrashRepositoryOptions {
  /** Told once (warn) when a cutoff newer than the 30-day floor was moved back to it. */
  readonly logger?: Logger;
  /** Clock of the floor. @defaultValue `() => new Date()` */
  readonly now?: () => Date;
}

/**
 * {@link TrashRepository} on OxiCloud's `storage.folders` / `storage.files`:
 * what OxiCloud's retention purge deletes (`TrashCleanupService`, fact
 * sheet §4, §6), with its two promises kept:
 *
 * - **never less than 30 days**: the cutoff used is the older of the one
 *   given and `now − OXICLOUD_TRASH_RETENTION_DAYS_FLOOR` days
 *   ({@link OxiTrashRepository.effectiveCutoff}); a newer cutoff is moved
 *   back, and the logger is told once;
 * - **a `read_only` drive's trash is never purged** (`(policies->>'read_only')
 *   ::boolean IS TRUE`: a freeze or legal hold), and neither is a subtree
 *   that holds a row of such a drive.
 *
 * Nor is a subtree that holds a drive's root folder (a trashed root: its
 * deletion would cascade to the drive row, `root_folder_id ON DELETE
 * CASCADE`, and from there to everything in the drive). Such roots, and the
 * frozen ones, are selected (the cursor moves past them) but neither deleted
 * nor named in `skippedLiveDescendants`.
 *
 * Rows are picked by `is_trashed AND trashed_at < cutoff`. A folder batch
 * deletes each subtree's files first, then its folders (the FK cascade
 * would take them anyway; explicit statements keep the counts exact). A
 * trashed root whose subtree still holds a live row (legacy pre-2026-06-17
 * trash) is left whole and named in `skippedLiveDescendants`, where
 * OxiCloud's own purge would cascade through it.
 *
 * Reference counts: each deleted file fires OxiCloud's
 * `trg_files_decrement_blob_ref`, which decrements (and stamps orphaned)
 * `storage.blobs` rows only. `storage.chunk_manifests.ref_count` is NOT
 * touched, which is OxiCloud's own behaviour on every bulk delete path: the
 * dedup GC's phase 1 removes manifests no file references any more.
 *
 * @example
 * ```ts
 * const config = trashCleanupConfigFromEnv(process.env);
 * const job = createTrashCleanupJob({
 *   repository: new OxiTrashRepository(db, { logger }),
 *   config: { ...config, retentionDays: oxiTrashRetentionDays(config.retentionDays) },
 * });
 * ```
 */
export class OxiTrashRepository implements TrashRepository {
  readonly #db: Kysely<OxiCloudDatabase>;
  readonly #logger: Logger | undefined;
  readonly #now: () => Date;
  #warned = false;

  constructor(db: Kysely<OxiCloudDatabase>, options: OxiTrashRepositoryOptions = {}) {
    this.#db = db;
    this.#logger = options.logger;
    this.#now = options.now ?? (() => new Date());
  }

  /** The cutoff actually applied for `cutoff`: never later than `now − 30 days`. */
  effectiveCutoff(cutoff: Date): Date {
    const floor = new Date(this.#now().getTime() - OXICLOUD_TRASH_RETENTION_DAYS_FLOOR * DAY_MS);
    if (cutoff.getTime() <= floor.getTime()) return cutoff;
    if (!this.#warned) {
      this.#warned = true;
      this.#logger?.warn(
        {
          target: 'oxicloud::trash_cleanup',
          event: 'trash_cleanup.retention_floor',
          requested_cutoff: cutoff.toISOString(),
          cutoff: floor.toISOString(),
          floor_days: OXICLOUD_TRASH_RETENTION_DAYS_FLOOR,
        },
        `trash retention shorter than OxiCloud's ${OXICLOUD_TRASH_RETENTION_DAYS_FLOOR} days: purging only items trashed before ${floor.toISOString()}`,
      );
    }
    return floor;
  }

  async purgeFolderBatch(
    cutoff: Date,
    limit: number,
    after: TrashFolderCursor | null,
  ): Promise<TrashFolderBatch> {
    const applied = this.effectiveCutoff(cutoff);
    return this.#db.transaction().execute(async (trx) => {
      const roots = await sql<{ id: string; trashed_at: string }>`
        SELECT f.id, f.trashed_at::text AS trashed_at FROM storage.folders f
         WHERE f.is_trashed AND f.trashed_at < ${applied}
           AND ${NOT_READ_ONLY(sql.ref('f.drive_id'))}
           AND (${after === null} OR (f.trashed_at, f.id) > (${after?.trashedAt ?? null}::timestamptz, ${after?.id ?? null}::uuid))
         ORDER BY f.trashed_at, f.id
         LIMIT ${limit}
           FOR UPDATE OF f SKIP LOCKED`.execute(trx);
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
      const held = await sql<{ root: string }>`${subtreeOf(ids)}
        SELECT DISTINCT t.root FROM tree t
         WHERE EXISTS (SELECT 1 FROM storage.folders f WHERE f.id = t.id AND NOT ${NOT_READ_ONLY(sql.ref('f.drive_id'))})
            OR EXISTS (SELECT 1 FROM storage.files fi
                        WHERE fi.folder_id = t.id AND NOT ${NOT_READ_ONLY(sql.ref('fi.drive_id'))})
         UNION
        SELECT t.root FROM tree t
         WHERE t.id = ANY (ARRAY(SELECT d.root_folder_id FROM storage.drives d
                                  WHERE d.root_folder_id = ANY (ARRAY(SELECT id FROM tree))))`.execute(trx);
      const skipped = new Set(live.rows.map((r) => r.root));
      const frozen = new Set(held.rows.map((r) => r.root));
      const clean = ids.filter((id) => !skipped.has(id) && !frozen.has(id));
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
    const applied = this.effectiveCutoff(cutoff);
    const result = await sql`
      DELETE FROM storage.files WHERE id IN (
        SELECT fi.id FROM storage.files fi
         WHERE fi.is_trashed AND fi.trashed_at < ${applied}
           AND ${NOT_READ_ONLY(sql.ref('fi.drive_id'))}
         ORDER BY fi.trashed_at, fi.id
         LIMIT ${limit}
           FOR UPDATE OF fi SKIP LOCKED)`.execute(this.#db);
    const files = Number(result.numAffectedRows ?? 0n);
    return { selected: files, folders: 0, files };
  }
}
