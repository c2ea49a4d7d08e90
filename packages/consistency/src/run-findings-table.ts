import type { ColumnType, Generated } from 'kysely';

/** Kysely row type of `jobs.run_findings` (this package's `sql/001_run_findings.sql`). */
export interface RunFindingsTable {
  id: ColumnType<string, string | undefined, never>;
  run_id: string;
  kind: string;
  severity: string;
  resource_id: string;
  /** JSONB: read as an object, written as a JSON string. */
  detail: ColumnType<Record<string, unknown>, string, string>;
  found_at: Generated<Date>;
  /** The finding across runs this row is a sighting of (`002_findings.sql`). */
  finding_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** What this run changed about it: `new`, `reopened`, `worse`, `expired`, or `null`. */
  change: ColumnType<string | null, string | null | undefined, string | null>;
}

type Numeric = ColumnType<string | null, number | null | undefined, number | null>;

/** Kysely row type of `jobs.findings`: one finding across runs (`002_findings.sql`). */
export interface FindingsTable {
  id: ColumnType<string, string, never>;
  check_name: string;
  kind: string;
  resource_id: string;
  severity: string;
  severity_rank: number;
  highest_severity: string;
  /** NUMERIC: read as a string (pg), written as a number. */
  magnitude: Numeric;
  detail: ColumnType<Record<string, unknown>, string, string>;
  state: string;
  first_seen_run_id: string | null;
  first_seen_at: ColumnType<Date, Date | string, Date | string>;
  last_seen_run_id: string | null;
  last_seen_at: ColumnType<Date, Date | string, Date | string>;
  last_seen_boundary: ColumnType<Date, Date | string, Date | string>;
  fixed_run_id: ColumnType<string | null, string | null | undefined, string | null>;
  fixed_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  state_changed_by: ColumnType<string, string | undefined, string>;
  state_changed_at: ColumnType<Date, Date | string | undefined, Date | string>;
  comment: ColumnType<string | null, string | null | undefined, string | null>;
  accept_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  accepted_severity: ColumnType<string | null, string | null | undefined, string | null>;
  accepted_magnitude: Numeric;
}

/** Kysely row type of `jobs.finding_events`: a finding's state changes. */
export interface FindingEventsTable {
  id: Generated<string>;
  finding_id: string;
  at: Generated<Date>;
  run_id: string | null;
  actor: string;
  event: string;
  state: string;
  severity: string | null;
  magnitude: Numeric;
  comment: string | null;
}

/** Kysely row type of `jobs.finding_runs`: a findings-writing run's grace boundary and closing. */
export interface FindingRunsTable {
  run_id: string;
  check_name: string;
  started_at: ColumnType<Date, Date | string, Date | string>;
  grace_ms: ColumnType<string, number, number>;
  grace_boundary: ColumnType<Date, Date | string, Date | string>;
  kind_grace: ColumnType<Record<string, number | null>, string | undefined, string>;
  closed_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  fixed_count: ColumnType<number | null, number | null | undefined, number | null>;
}

/** Kysely row type of `jobs.run_unexamined`: resources pass 2 dropped in a run. */
export interface RunUnexaminedTable {
  run_id: string;
  kind: string;
  resource_id: string;
  reason: string;
}

/** The run columns the findings ledger reads (`jobs.recoverable_runs`, `@oxicloud/recoverable`'s). */
export interface RunsReadTable {
  id: string;
  job_name: string;
  status: string;
  started_at: Date;
  completed_at: Date | null;
}

/**
 * The part of the database schema the findings store reads and writes, as a
 * consumer's `Kysely` type names it in the default engine schema `jobs`.
 */
export interface FindingsDatabase {
  'jobs.run_findings': RunFindingsTable;
  'jobs.findings': FindingsTable;
  'jobs.finding_events': FindingEventsTable;
  'jobs.finding_runs': FindingRunsTable;
  'jobs.run_unexamined': RunUnexaminedTable;
  'jobs.recoverable_runs': RunsReadTable;
}

/**
 * The same tables unqualified, as this package queries them: on a `Kysely`
 * placed in the engine schema (`FindingTables.on`).
 */
export interface EngineFindingsTables {
  run_findings: RunFindingsTable;
  findings: FindingsTable;
  finding_events: FindingEventsTable;
  finding_runs: FindingRunsTable;
  run_unexamined: RunUnexaminedTable;
  recoverable_runs: RunsReadTable;
}
