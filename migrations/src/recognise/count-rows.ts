import type { MigrationClient } from '../migrate.js';
import type { Catalog } from './read-catalog.js';
import type { EngineMigrations, JobsCounts, RunCounts, SqlxMigrations, Uncounted } from './recognition.js';

/** `"name"`, as Postgres quotes an identifier. */
const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Whether `relation` can be counted: `'absent'`, `'not-readable'` or `null` (it can). */
function uncounted(catalog: Catalog, relation: string): Uncounted | null {
  const found = catalog.relations.get(relation);
  if (!found) return 'absent';
  return found.readable ? null : 'not-readable';
}

/** The schema whose `_sqlx_migrations` counts: the connection's, else `public`; `null` when neither has one. */
export function sqlxSchemaOf(catalog: Catalog): string | null {
  for (const schema of [catalog.currentSchema, 'public']) {
    if (schema !== null && catalog.relations.has(`${schema}._sqlx_migrations`)) return schema;
  }
  return null;
}

/** The rows of OxiCloud's `_sqlx_migrations` in `schema`. */
export async function countSqlxMigrations(
  client: MigrationClient,
  catalog: Catalog,
  schema: string,
): Promise<SqlxMigrations | 'not-readable'> {
  if (uncounted(catalog, `${schema}._sqlx_migrations`) !== null) return 'not-readable';
  const { rows } = await client.query(
    `SELECT pg_catalog.count(*) AS count, pg_catalog.max(version) AS latest,
            pg_catalog.count(*) FILTER (WHERE NOT success) AS failed
       FROM ${quoteIdent(schema)}._sqlx_migrations`,
  );
  const row = rows[0] ?? {};
  return {
    schema,
    count: Number(row['count'] ?? 0),
    latest: row['latest'] === null || row['latest'] === undefined ? null : Number(row['latest']),
    failed: Number(row['failed'] ?? 0),
  };
}

/**
 * The rows of the engine's bookkeeping `table` (`public.oxicloud_migrations`
 * on a database of its own, `<engine schema>.migrations` beside OxiCloud);
 * `null` when the table is not there.
 */
export async function countEngineMigrations(
  client: MigrationClient,
  catalog: Catalog,
  table = 'public.oxicloud_migrations',
): Promise<EngineMigrations | 'not-readable' | null> {
  const why = uncounted(catalog, table);
  if (why === 'absent') return null;
  if (why === 'not-readable') return why;
  const [schema, name] = table.split('.') as [string, string];
  const { rows } = await client.query(
    `SELECT pg_catalog.count(*) AS count, pg_catalog.max(name) AS latest FROM ${quoteIdent(schema)}.${quoteIdent(name)}`,
  );
  const row = rows[0] ?? {};
  return {
    count: Number(row['count'] ?? 0),
    latest: row['latest'] === null || row['latest'] === undefined ? null : String(row['latest']),
  };
}

/** The engine's runs (by status) and run findings, in the engine schema `schema`. */
export async function countJobs(
  client: MigrationClient,
  catalog: Catalog,
  schema = 'jobs',
): Promise<JobsCounts> {
  const q = quoteIdent(schema);
  return {
    runs: uncounted(catalog, `${schema}.recoverable_runs`) ?? (await countRuns(client, q)),
    runFindings:
      uncounted(catalog, `${schema}.run_findings`) ??
      Number(
        (await client.query(`SELECT pg_catalog.count(*) AS count FROM ${q}.run_findings`)).rows[0]?.[
          'count'
        ] ?? 0,
      ),
  };
}

async function countRuns(client: MigrationClient, schema: string): Promise<RunCounts> {
  const { rows } = await client.query(
    `SELECT pg_catalog.count(*) AS total,
            pg_catalog.count(*) FILTER (WHERE status = 'Running') AS running,
            pg_catalog.count(*) FILTER (WHERE status = 'Paused') AS paused
       FROM ${schema}.recoverable_runs`,
  );
  const row = rows[0] ?? {};
  return {
    total: Number(row['total'] ?? 0),
    running: Number(row['running'] ?? 0),
    paused: Number(row['paused'] ?? 0),
  };
}
