import type { Queryable } from './queryable.js';

/** A recoverable run a node owns (its lease not given back). */
export interface OwnedRun {
  readonly node: string;
  readonly runId: string;
  readonly job: string;
  readonly status: string;
}

/**
 * The recoverable runs each node owns, read from `jobs.recoverable_runs.owner_node`
 * when that column exists (the leases of recoverable runs add it); without it
 * the answer is an empty list. Only active runs (Running, CancelRequested), at
 * most 1000.
 */
export class PgOwnedRuns {
  readonly #pool: Queryable;
  #hasColumn = false;

  constructor(options: { readonly pool: Queryable }) {
    this.#pool = options.pool;
  }

  async list(): Promise<OwnedRun[]> {
    if (!this.#hasColumn) {
      const { rows } = await this.#pool.query(
        `SELECT 1 FROM information_schema.columns
          WHERE table_schema = 'jobs' AND table_name = 'recoverable_runs' AND column_name = 'owner_node'`,
      );
      if (rows.length === 0) return [];
      this.#hasColumn = true;
    }
    const { rows } = await this.#pool.query(
      `SELECT owner_node, id::text AS id, job_name, status FROM jobs.recoverable_runs
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
