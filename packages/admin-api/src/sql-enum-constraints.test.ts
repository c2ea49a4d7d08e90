import { SEVERITIES } from '@oxicloud/consistency/severity';
import { ACTIVE_STATUSES, RUN_STATUSES } from '@oxicloud/recoverable';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USER_ROLES } from './ports/admin-user-lookup.js';

/**
 * The SQL that repeats an enum of the API (a partial index's `WHERE status
 * IN (…)`, a `CHECK (role IN (…))`) is read back from the migrated database
 * (`pg_indexes`, `pg_constraint`) and compared with the one TypeScript list,
 * so a status, severity or role added on one side only fails here.
 */

/** A column whose values are an enum of the API, and the one list of them. */
interface EnumColumn {
  readonly schema: string;
  readonly table: string;
  readonly column: string;
  readonly values: readonly string[];
}

const ENUM_COLUMNS: readonly EnumColumn[] = [
  { schema: 'jobs', table: 'recoverable_runs', column: 'status', values: RUN_STATUSES },
  { schema: 'jobs', table: 'run_findings', column: 'severity', values: SEVERITIES },
];
// auth.users.role is OxiCloud's enum type (auth.userrole), held to USER_ROLES below; its CHECKs constrain other columns
// together with a role (users_external_not_admin), not the role's list.

/** The SQL text that constrains a table: each index definition (with its WHERE) and each CHECK. */
interface SqlRule {
  readonly kind: 'index' | 'check';
  readonly name: string;
  readonly definition: string;
}

/** The string literals a predicate compares `column` with (`col = 'x'`, `col = ANY (ARRAY['x'::text, …])`). */
function literalsComparedWith(definition: string, column: string): string[] {
  const out: string[] = [];
  const comparison = new RegExp(
    `\\b${column}\\s*(?:=\\s*ANY\\s*\\(\\s*ARRAY\\[([^\\]]*)\\]|=\\s*('(?:[^']|'')*'))`,
    'g',
  );
  for (const match of definition.matchAll(comparison)) {
    const list = match[1] ?? match[2] ?? '';
    for (const literal of list.matchAll(/'((?:[^']|'')*)'/g))
      out.push((literal[1] ?? '').replaceAll("''", "'"));
  }
  return out;
}

describe('SQL constraints that repeat an API enum', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  async function rulesOf(schema: string, table: string): Promise<SqlRule[]> {
    const indexes = await db.pool.query<{ name: string; definition: string }>(
      'SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE schemaname = $1 AND tablename = $2',
      [schema, table],
    );
    const checks = await db.pool.query<{ name: string; definition: string }>(
      `SELECT c.conname AS name, pg_get_constraintdef(c.oid) AS definition
         FROM pg_constraint c
         JOIN pg_class t ON t.oid = c.conrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE c.contype = 'c' AND n.nspname = $1 AND t.relname = $2`,
      [schema, table],
    );
    return [
      ...indexes.rows.map((row) => ({ kind: 'index' as const, ...row })),
      ...checks.rows.map((row) => ({ kind: 'check' as const, ...row })),
    ];
  }

  it('one_active_run_per_job covers exactly the active run statuses', async () => {
    const rules = await rulesOf('jobs', 'recoverable_runs');
    const index = rules.find((rule) => rule.name === 'one_active_run_per_job');
    expect(index?.definition).toMatch(/^CREATE UNIQUE INDEX one_active_run_per_job .*\(job_name\) WHERE /);
    expect(new Set(literalsComparedWith(index?.definition ?? '', 'status'))).toEqual(
      new Set(ACTIVE_STATUSES),
    );
  });

  it("auth.users.role is OxiCloud's enum auth.userrole, whose values are exactly USER_ROLES", async () => {
    const { rows } = await db.pool.query(
      `SELECT e.enumlabel AS value
         FROM pg_attribute a
         JOIN pg_type t ON t.oid = a.atttypid
         JOIN pg_enum e ON e.enumtypid = t.oid
        WHERE a.attrelid = 'auth.users'::regclass AND a.attname = 'role'
        ORDER BY e.enumsortorder`,
    );
    expect(new Set(rows.map((r) => r.value))).toEqual(new Set(USER_ROLES));
  });

  it.each(
    ENUM_COLUMNS.map((c) => [`${c.schema}.${c.table}.${c.column}`, c] as const),
  )('%s: every value SQL names is in the list, every CHECK lists all', async (_, {
    schema,
    table,
    column,
    values,
  }) => {
    for (const rule of await rulesOf(schema, table)) {
      const literals = literalsComparedWith(rule.definition, column);
      for (const literal of literals) expect(values, `${rule.name}: ${rule.definition}`).toContain(literal);
      if (rule.kind === 'check' && literals.length > 0) {
        expect(new Set(literals), `${rule.name} must allow every value`).toEqual(new Set(values));
      }
    }
  });

  it('reads the literals of both forms Postgres prints', () => {
    expect(
      literalsComparedWith("WHERE (status = ANY (ARRAY['Running'::text, 'Paused'::text]))", 'status'),
    ).toEqual(['Running', 'Paused']);
    expect(literalsComparedWith("WHERE (status = 'Running'::text)", 'status')).toEqual(['Running']);
    expect(literalsComparedWith("CHECK ((kind = 'x'::text))", 'status')).toEqual([]);
  });
});
