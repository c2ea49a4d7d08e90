/**
 * The Postgres schema the engine's own tables live in (runs, findings,
 * cluster state, version rows).
 *
 * The default is `jobs`, where OxiCloud's plans put these tables
 * (job-registry.md Part 2): right for a database the engine owns. Beside a
 * real OxiCloud (sidecar mode) the engine must not take `jobs`, which
 * OxiCloud's own future tables will use: it is given a schema of its own,
 * e.g. {@link SIDECAR_ENGINE_SCHEMA}. Every `Pg*` class and every `migrate()`
 * of the packages takes the name as the option `schema`.
 *
 * The packages' SQL files are written against `jobs`; {@link inEngineSchema}
 * places them in another schema when they are applied (their checksums stay
 * those of the files).
 *
 * @module
 */

/** Where the engine's tables live when no `schema` is given (OxiCloud's plans' name). */
export const DEFAULT_ENGINE_SCHEMA = 'jobs';

/** The engine's own schema beside a real OxiCloud: a name OxiCloud's plans do not use. */
export const SIDECAR_ENGINE_SCHEMA = 'oxijobs';

/**
 * Schemas the engine never takes for its own: OxiCloud's (fact sheet §1) and
 * the system's. `jobs` is not here: it is the engine's on a database it owns.
 */
export const FOREIGN_SCHEMAS: readonly string[] = [
  'public',
  'auth',
  'storage',
  'audio',
  'caldav',
  'carddav',
  'faces',
  'information_schema',
];

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Validates an engine schema name: lower-case letters, digits and `_`, not
 * starting with a digit, at most 63 characters, not `pg_*` and not one of
 * {@link FOREIGN_SCHEMAS}. Such a name needs no quoting in SQL.
 *
 * @returns the name, or `null` when it is valid; otherwise what is wrong and what is allowed.
 */
export function engineSchemaProblem(name: string): string | null {
  // A JavaScript caller may pass anything: `null` would pass the pattern as the text "null".
  if (typeof name !== 'string') {
    return `the engine schema must be a string (a schema name such as ${SIDECAR_ENGINE_SCHEMA}), got ${name === null ? 'null' : typeof name}`;
  }
  if (!SCHEMA_NAME.test(name)) {
    return `"${name}" is not a schema name the engine takes: use lower-case letters, digits and _ (not starting with a digit), at most 63 characters`;
  }
  if (name.startsWith('pg_')) return `"${name}" is reserved by Postgres (pg_*): choose another schema name`;
  if (FOREIGN_SCHEMAS.includes(name)) {
    return `"${name}" is a schema of OxiCloud or of Postgres, not one the engine may own: choose another name (e.g. ${SIDECAR_ENGINE_SCHEMA})`;
  }
  return null;
}

/**
 * The engine schema to use: `name`, or {@link DEFAULT_ENGINE_SCHEMA} when
 * it is undefined.
 *
 * @throws Error with {@link engineSchemaProblem}'s message for an invalid name.
 */
export function engineSchema(name: string | undefined = DEFAULT_ENGINE_SCHEMA): string {
  const problem = engineSchemaProblem(name);
  if (problem !== null) throw new Error(problem);
  return name;
}

/** `<schema>.<table>`: a table of the engine's, qualified (the names need no quotes). */
export function engineTable(schema: string, table: string): string {
  return `${engineSchema(schema)}.${table}`;
}

const CREATE_JOBS_SCHEMA = /^\s*CREATE\s+SCHEMA\s+IF\s+NOT\s+EXISTS\s+jobs\s*;\s*$/gim;
const JOBS_QUALIFIED = /(?<![\w."])jobs\.(?=[a-z_])/g;

/**
 * SQL written against `jobs` (a package's `sql/NNN_*.sql`, a message naming
 * `jobs.recoverable_runs`), placed in `schema`: every `jobs.<name>` becomes
 * `<schema>.<name>`, and a line `CREATE SCHEMA IF NOT EXISTS jobs;` is
 * dropped (the runner creates the schema, and leaves one a DBA created alone).
 * With the default schema the text is returned unchanged.
 */
export function inEngineSchema(sqlText: string, schema: string): string {
  if (engineSchema(schema) === DEFAULT_ENGINE_SCHEMA) return sqlText;
  return sqlText.replace(CREATE_JOBS_SCHEMA, '').replace(JOBS_QUALIFIED, `${schema}.`);
}
