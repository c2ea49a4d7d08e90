import type { ColumnType, Kysely } from 'kysely';

/** The columns of `jobs.recoverable_runs` as kysely sees them (this package's `sql/001_recoverable_runs.sql`, `002_run_history.sql`). */
export interface RecoverableRunsTable {
  id: string;
  job_name: string;
  status: string;
  started_at: ColumnType<Date, Date | string, Date | string>;
  last_progress_at: ColumnType<Date, Date | string, Date | string>;
  completed_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
  cursor: ColumnType<Uint8Array | null, Uint8Array | null, Uint8Array | null>;
  /** JSONB: pg parses it on read; written as a JSON string. */
  stats: ColumnType<unknown, string, string>;
  params: ColumnType<unknown, string, string>;
  error_message: string | null;
  /** 1 on start, +1 on every resume (packages/recoverable/sql/003_run_attempts.sql). */
  attempt: ColumnType<number, number | undefined, number>;
  attempt_started_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** JSONB list of `{ at, reason }`, oldest first (0008). */
  pauses: ColumnType<unknown, string | undefined, string>;
  /** BIGINT: pg returns it as a string. */
  active_ms: ColumnType<string | number, number | undefined, number>;
  running_since: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The node executing the run (its last owner once stopped); `sql/004_run_leases.sql`. */
  owner_node: ColumnType<string | null, string | null | undefined, string | null>;
  /** Database clock: the owner's lease ends here; `NULL` while the run is not executing (004). */
  lease_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

/**
 * The tables this package reads and writes, as a consumer's `Kysely` type
 * names them in the default engine schema `jobs`.
 */
export interface RecoverableTables {
  'jobs.recoverable_runs': RecoverableRunsTable;
}

/**
 * The same tables unqualified, as this package queries them: on a `Kysely`
 * placed in the engine schema with `withSchema(schema)` (see {@link inEngineRuns}).
 */
export interface EngineRunsTables {
  recoverable_runs: RecoverableRunsTable;
}

/**
 * `db` with its unqualified tables in the engine schema `schema`. A
 * transaction stays one (kysely's `Transaction.withSchema`); `db` itself is
 * left as it was, so what a job writes through it is not moved.
 */
// biome-ignore lint/suspicious/noExplicitAny: a consumer's Kysely (or transaction) has its own database type
export function inEngineRuns(db: Kysely<any>, schema: string): Kysely<EngineRunsTables> {
  return (db as Kysely<EngineRunsTables>).withSchema(schema);
}
