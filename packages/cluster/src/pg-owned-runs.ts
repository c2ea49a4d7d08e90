import { type EngineTables, engineTables } from './engine-tables.js';
import type { Queryable } from './queryable.js';

/** A recoverable run a node owns (its lease not given back). */
export interface OwnedRun {
  readonly node: string;
  readonly runId: string;
  readonly job: string;
  readonly status: string;
}

/** Options of {@link PgOwnedRuns}. */
export interface PgOwnedRunsOptions {
  readonly pool: Queryable;
  /**
   * The Postgres schema of the engine's tables, where `@oxicloud/recoverable`
   * keeps `recoverable_runs` (its `migrate(db, { schema })`), e.g. `oxijobs`
   * beside a real OxiCloud.
   * @defaultValue `jobs`
   */
  readonly schema?: string;
}

/**
 * The recoverable runs each node owns, read from `jobs.recoverable_runs.owner_node`
 * (`<schema>.recoverable_runs` with the option `schema`) when that column
 * exists (the leases of recoverable runs add it); without it the answer is an
 * empty list. Only active runs (Running, CancelRequested), at
 * most 1000.
 */
export class PgOwnedRuns {
  readonly #pool: Queryable;
  readonly #tables: EngineTables;
  #hasColumn = false;

  /** @throws {ClusterError} `INVALID_OPTIONS` for a `schema` the engine does not take. */
  constructor(options: PgOwnedRunsOptions) {
    this.#pool = options.pool;
    this.#tables = engineTables(options.schema);
  }

  async list(): Promise<OwnedRun[]> {
    if (!this.#hasColumn) {
      const { rows } = await this.#pool.query(
        `SELECT 1 FROM information_schema.columns
          WHERE table_schema = $1 AND table_name = 'recoverable_runs' AND column_name = 'owner_node'`,
        [this.#tables.schema],
      );
      if (rows.length === 0) return [];
      this.#hasColumn = true;
    }
    const { rows } = await this.#pool.query(
      `SELECT owner_node, id::text AS id, job_name, status FROM ${this.#tables.recoverableRuns}
        WHERE owner_node IS NOT NULL AND status IN ('Running', 'CancelRequested')
        ORDER BY started_at LIMIT 1000`,
    );
    return rows.map((row) => ({
      node: String(row['owner_node']),
      runId: String(row['id']),
      job: String(row['job_name']),
      status: String(row['status']),
    }));
  }
}
