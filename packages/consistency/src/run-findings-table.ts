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
}

/** The part of the database schema the findings store reads and writes. */
export interface FindingsDatabase {
  'jobs.run_findings': RunFindingsTable;
}
