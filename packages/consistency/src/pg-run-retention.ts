import { type Kysely, sql } from 'kysely';
import { type FindingTables, findingTables, kyselyOf, type PgConsistencyOptions } from './finding-tables.js';

/** What one pruning batch deleted. */
export interface PrunedRuns {
  /** The runs deleted, with their job. */
  readonly runs: readonly { readonly runId: string; readonly job: string }[];
}

/**
 * Retention on the run tables (the SQL side of `run_retention` in
 * `@oxicloud/tenants`): each call is ONE statement, so ONE transaction: a
 * kill -9 leaves every batch wholly done or wholly not.
 *
 * @example
 * ```ts
 * const retention = new PgRunRetention({ pool });
 * const { runs } = await retention.pruneRuns(cutoff, 1000);
 * ```
 */
export class PgRunRetention {
  // biome-ignore lint/suspicious/noExplicitAny: a consumer's Kysely has its own database type
  readonly #db: Kysely<any>;
  readonly #t: FindingTables;

  /**
   * `pool` or your own `db`, and the engine `schema` (the one given to
   * `migrate()`; @defaultValue `jobs`): see {@link PgConsistencyOptions}.
   *
   * @throws Error when `schema` is not a schema name the engine takes (see `engineSchema`).
   */
  constructor(options: PgConsistencyOptions) {
    this.#t = findingTables(options.schema);
    this.#db = kyselyOf(options);
  }

  /**
   * Deletes up to `limit` terminal runs (`Completed`, `Failed`) that ended
   * before `cutoff`, oldest first, with their per-run findings, grace
   * boundary and pass-2 drops (`ON DELETE CASCADE`). Never deleted: each
   * job's latest `Completed` run (whatever its age), an active run
   * (`Running`, `Paused`, `CancelRequested`), and a run that a finding not
   * `fixed` still names as first or last seen.
   */
  async pruneRuns(cutoff: Date, limit: number): Promise<PrunedRuns> {
    const { rows } = await sql<{ id: string; job_name: string }>`
      WITH latest AS (
        SELECT DISTINCT ON (job_name) id FROM ${this.#t.runs}
         WHERE status = 'Completed'
         ORDER BY job_name, completed_at DESC NULLS LAST, id DESC
      ), victims AS (
        SELECT r.id FROM ${this.#t.runs} r
         WHERE r.status IN ('Completed', 'Failed')
           AND COALESCE(r.completed_at, r.last_progress_at) < ${cutoff}
           AND r.id NOT IN (SELECT id FROM latest)
           AND NOT EXISTS (SELECT 1 FROM ${this.#t.findings} f WHERE f.state <> 'fixed' AND f.first_seen_run_id = r.id)
           AND NOT EXISTS (SELECT 1 FROM ${this.#t.findings} f WHERE f.state <> 'fixed' AND f.last_seen_run_id = r.id)
         ORDER BY r.started_at, r.id
         LIMIT ${limit}
         FOR UPDATE OF r SKIP LOCKED
      )
      DELETE FROM ${this.#t.runs} r USING victims v WHERE r.id = v.id
      RETURNING r.id, r.job_name`.execute(this.#db);
    return { runs: rows.map((r) => ({ runId: r.id, job: r.job_name })) };
  }

  /** Deletes up to `limit` `fixed` findings fixed before `cutoff` (their events go with them). */
  async pruneFixedFindings(cutoff: Date, limit: number): Promise<number> {
    const { rows } = await sql<{ id: string }>`
      DELETE FROM ${this.#t.findings} WHERE id IN (
        SELECT id FROM ${this.#t.findings}
         WHERE state = 'fixed' AND fixed_at < ${cutoff}
         ORDER BY fixed_at, id LIMIT ${limit}
         FOR UPDATE SKIP LOCKED)
      RETURNING id`.execute(this.#db);
    return rows.length;
  }
}
