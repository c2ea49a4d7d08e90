import type { UsageCorrection, UsageReconcileResult, UsageRepository } from '@oxicloud/tenants';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { bigintToNumber, type StorageDatabase } from './database.js';

interface ReconcileRow {
  corrected: string;
  largest: { id: string; before: string; after: string }[];
}

/**
 * {@link UsageRepository} on `storage.drives` / `auth.users`: each call is
 * one set-based statement. It computes the true totals, rewrites only rows
 * that differ, and returns the count plus the largest corrections. The
 * UPDATE also requires the stored value to still be the one it read, so a
 * concurrent increment is never overwritten with a stale total (that row
 * is corrected by the next run instead).
 */
export class PgUsageRepository implements UsageRepository {
  readonly #db: Kysely<StorageDatabase>;

  constructor(db: Kysely<StorageDatabase>) {
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
            LEFT JOIN (SELECT drive_id, SUM(size) AS total FROM storage.files GROUP BY drive_id) s
              ON s.drive_id = d.id
           WHERE d.used_bytes <> COALESCE(s.total, 0)
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
        WITH actual AS (
          SELECT u.id, u.storage_used_bytes AS before, COALESCE(s.total, 0)::bigint AS after
            FROM auth.users u
            LEFT JOIN (SELECT owner_id, SUM(used_bytes) AS total FROM storage.drives GROUP BY owner_id) s
              ON s.owner_id = u.id
           WHERE u.storage_used_bytes <> COALESCE(s.total, 0)
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
