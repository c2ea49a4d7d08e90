import type { UsageCorrection, UsageReconcileResult, UsageRepository } from '@oxicloud/tenants';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { bigintToNumber } from '../postgres/database.js';
import type { OxiCloudDatabase } from './database.js';

interface ReconcileRow {
  corrected: string;
  largest: { id: string; before: string; after: string }[];
}

/**
 * {@link UsageRepository} on OxiCloud's `storage.drives` / `auth.users`,
 * with OxiCloud's two formulas (fact sheet §6, §12 items 9 and 10):
 *
 * - drive: `used_bytes := Σ files.size` over the drive's **live** files
 *   (`NOT is_trashed`), 0 if none;
 * - user envelope: `storage_used_bytes := Σ drives.used_bytes` over the
 *   **personal** drives the user owns by a user owner grant
 *   (`role_grants ('user', u, 'drive', d, 'owner')`, `expires_at` ignored:
 *   default and secondary personal drives, never shared drives), 0 if none;
 *   external users are never written (a CHECK forbids a non-zero value, and
 *   OxiCloud's sweep skips them too).
 *
 * Only rows whose value `IS DISTINCT FROM` the stored one are written, so a
 * drive's `updated_at` (bumped by OxiCloud's `trg_drives_touch_updated_at`
 * on every update) moves only where something changed; `auth.users` has no
 * such trigger and its `updated_at` is left alone. Each UPDATE also requires
 * the stored value to still be the one it read, so a concurrent increment is
 * never overwritten with a stale total (the next run corrects that row).
 *
 * OxiCloud's own usage sweep (`StorageUsageService`, every
 * `OXICLOUD_STORAGE_USAGE_RECONCILE_SECS`, always on) writes the same two
 * columns with the same formulas, so the two converge to the same values:
 * whichever runs second finds nothing to change, and neither undoes the
 * other.
 *
 * @example
 * ```ts
 * const job = createStorageReconcileJob({ repository: new OxiUsageRepository(db), config });
 * ```
 */
export class OxiUsageRepository implements UsageRepository {
  readonly #db: Kysely<OxiCloudDatabase>;

  constructor(db: Kysely<OxiCloudDatabase>) {
    this.#db = db;
  }

  reconcileDriveUsage(top: number): Promise<UsageReconcileResult> {
    return this.#run(
      'drive',
      top,
      sql`
        WITH actual AS (
          SELECT d.id, d.used_bytes AS before, COALESCE(s.total, 0)::bigint AS after
            FROM storage.drives d
            LEFT JOIN (SELECT f.drive_id, SUM(f.size) AS total FROM storage.files f
                        WHERE NOT f.is_trashed GROUP BY f.drive_id) s
              ON s.drive_id = d.id
           WHERE d.used_bytes IS DISTINCT FROM COALESCE(s.total, 0)
        ),
        updated AS (
          UPDATE storage.drives t SET used_bytes = a.after
            FROM actual a
           WHERE t.id = a.id AND t.used_bytes = a.before
          RETURNING t.id, a.before, a.after
        )`,
    );
  }

  reconcileUserUsage(top: number): Promise<UsageReconcileResult> {
    return this.#run(
      'user',
      top,
      sql`
        WITH envelope AS (
          SELECT g.subject_id AS user_id, SUM(d.used_bytes) AS total
            FROM storage.role_grants g
            JOIN storage.drives d ON d.id = g.resource_id AND d.kind = 'personal'
           WHERE g.subject_type = 'user' AND g.resource_type = 'drive' AND g.role = 'owner'
           GROUP BY g.subject_id
        ),
        actual AS (
          SELECT u.id, u.storage_used_bytes AS before, COALESCE(e.total, 0)::bigint AS after
            FROM auth.users u
            LEFT JOIN envelope e ON e.user_id = u.id
           WHERE NOT u.is_external
             AND u.storage_used_bytes IS DISTINCT FROM COALESCE(e.total, 0)
        ),
        updated AS (
          UPDATE auth.users t SET storage_used_bytes = a.after
            FROM actual a
           WHERE t.id = a.id AND t.storage_used_bytes = a.before
          RETURNING t.id, a.before, a.after
        )`,
    );
  }

  async #run(
    kind: UsageCorrection['kind'],
    top: number,
    ctes: RawBuilder<unknown>,
  ): Promise<UsageReconcileResult> {
    const { rows } = await sql<ReconcileRow>`${ctes}
      SELECT (SELECT count(*) FROM updated) AS corrected,
             COALESCE((
               SELECT json_agg(json_build_object('id', id, 'before', before::text, 'after', after::text)
                               ORDER BY abs(after - before) DESC, id)
                 FROM (SELECT * FROM updated ORDER BY abs(after - before) DESC, id LIMIT ${top}) l
             ), '[]'::json) AS largest`.execute(this.#db);
    const row = rows[0];
    if (!row) return { corrected: 0, largest: [] };
    return {
      corrected: bigintToNumber(row.corrected),
      largest: row.largest.map((c) => {
        const before = bigintToNumber(c.before);
        const after = bigintToNumber(c.after);
        return { id: c.id, kind, before, after, delta: after - before };
      }),
    };
  }
}
