import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_ENGINE_SCHEMA, engineSchema, inEngineSchema } from './engine-schema.js';
import { type SchemaDatabase, type SchemaQuery, withSchemaSession } from './schema-session.js';

/** One versioned SQL file of a package's schema (`sql/NNN_name.sql`, NNN = the version). */
export interface SchemaStep {
  readonly version: number;
  /** File name, e.g. `001_recoverable_runs.sql`. */
  readonly name: string;
  readonly sql: string;
  /** SHA-256 of the SQL text, recorded when applied. */
  readonly checksum: string;
}

/** The codes the schema functions raise (each package maps them onto its own error class). */
export type SchemaErrorCode = 'SCHEMA_MISSING' | 'SCHEMA_OUTDATED' | 'SCHEMA_MIGRATION_FAILED';

/** A package's schema: its tables under `jobs`, versioned by its own rows in {@link VERSION_TABLE}. */
export interface PackageSchema {
  /** The npm name, also the key of the version rows, e.g. `@oxicloud/recoverable`. */
  readonly package: string;
  /** The table the messages name, e.g. `jobs.recoverable_runs`. */
  readonly table: string;
  /** The steps in version order; the last one's version is the version this build needs. */
  readonly steps: readonly SchemaStep[];
  /** A schema that must be applied first (its version at least `version`). */
  readonly requires?: { readonly schema: PackageSchema; readonly version: number };
  /** Builds the package's own error. */
  readonly error: (code: SchemaErrorCode, message: string, cause?: unknown) => Error;
}

/** What `migrate()` did. */
export interface SchemaMigrationResult {
  readonly package: string;
  /** The version found before (0: none recorded). */
  readonly from: number;
  /** The version now recorded. */
  readonly to: number;
  /** Files applied by this call, in order. */
  readonly applied: readonly string[];
}

/** Where a database stands against a package's schema. */
export interface SchemaStatus {
  readonly package: string;
  /** The package's table, qualified with the engine schema it was read in (e.g. `jobs.recoverable_runs`). */
  readonly table: string;
  /** The version recorded in {@link VERSION_TABLE} (0: none). */
  readonly found: number;
  /** The version this build of the package needs. */
  readonly needed: number;
  /** `true` when the package's table exists (it may predate the version rows). */
  readonly tableExists: boolean;
}

/**
 * The version rows of every `@oxicloud/*` package schema: one row per
 * (package, version) applied, in the engine's schema (this name in the
 * default one, see {@link versionTable}).
 */
export const VERSION_TABLE = 'jobs.schema_versions';

/** {@link VERSION_TABLE} in the engine schema `schema`. */
export function versionTable(schema: string = DEFAULT_ENGINE_SCHEMA): string {
  return inEngineSchema(VERSION_TABLE, schema);
}

/** Where a package's schema is applied or read. */
export interface SchemaOptions {
  /** The engine's own Postgres schema (see `engine-schema.ts`). @defaultValue `jobs` */
  readonly schema?: string;
}

/** {@link applySchema}'s options. */
export interface ApplySchemaOptions extends SchemaOptions {
  /**
   * `true`: the caller's session is inside a transaction of its own, which
   * the steps join (no BEGIN/COMMIT here; a failure aborts the caller's
   * transaction, which the caller rolls back). @defaultValue false
   */
  readonly inCallersTransaction?: boolean;
}

/** The table a package schema's messages name, in the engine schema `schema`. */
export function schemaTable(schema: PackageSchema, engine: string = DEFAULT_ENGINE_SCHEMA): string {
  return inEngineSchema(schema.table, engine);
}

/** One schema change at a time per database, across processes and packages. */
const LOCK_KEY = 7_420_113_016;
const STEP_NAME = /^(\d{3})_[a-z0-9_]+\.sql$/;

/** The folder holding the package's `package.json`, from a module inside it (src/… or dist/…). */
export function packageRoot(moduleUrl: string): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${fileURLToPath(moduleUrl)}`);
    dir = up;
  }
  return dir;
}

/** Reads `folder/NNN_name.sql`, in version order; versions must run 1, 2, 3… */
export function readSchemaSteps(folder: string): SchemaStep[] {
  const names = readdirSync(folder)
    .filter((n) => n.endsWith('.sql'))
    .sort();
  return names.map((name, i) => {
    const match = STEP_NAME.exec(name);
    if (!match || Number(match[1]) !== i + 1) {
      throw new Error(
        `schema file ${name} in ${folder}: expected ${String(i + 1).padStart(3, '0')}_lower_snake.sql`,
      );
    }
    const sql = readFileSync(join(folder, name), 'utf8');
    return { version: i + 1, name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
  });
}

function neededVersion(schema: PackageSchema): number {
  return schema.steps.at(-1)?.version ?? 0;
}

async function statusOn(query: SchemaQuery, schema: PackageSchema, engine: string): Promise<SchemaStatus> {
  const [row] = await query(
    'SELECT to_regclass($1) IS NOT NULL AS table_exists, to_regclass($2) IS NOT NULL AS versions_exist',
    [schemaTable(schema, engine), versionTable(engine)],
  );
  let found = 0;
  if (row?.['versions_exist'] === true) {
    const [v] = await query(
      `SELECT COALESCE(max(version), 0) AS version FROM ${versionTable(engine)} WHERE package = $1`,
      [schema.package],
    );
    found = Number(v?.['version'] ?? 0);
  }
  return {
    package: schema.package,
    table: schemaTable(schema, engine),
    found,
    needed: neededVersion(schema),
    tableExists: row?.['table_exists'] === true,
  };
}

/** Reads where the database stands (read only: no lock, nothing created). */
export function schemaStatus(
  db: SchemaDatabase,
  schema: PackageSchema,
  options: SchemaOptions = {},
): Promise<SchemaStatus> {
  const engine = engineSchema(options.schema);
  return withSchemaSession(db, (query) => statusOn(query, schema, engine));
}

/** The error for a status that is not ready, or `null` when the schema is at (or past) the needed version. */
export function schemaProblem(status: SchemaStatus, schema: PackageSchema): Error | null {
  const fix = `call migrate() from ${schema.package} (see its README)`;
  if (!status.tableExists) {
    return schema.error('SCHEMA_MISSING', `${status.table} does not exist: ${fix}`);
  }
  if (status.found < status.needed) {
    const found =
      status.found === 0 ? 'no recorded version (a schema older than version 1)' : `version ${status.found}`;
    return schema.error(
      'SCHEMA_OUTDATED',
      `${status.table} is at ${found} of the ${schema.package} schema, this build needs version ${status.needed}: ${fix}`,
    );
  }
  return null;
}

/** Throws the package's `SCHEMA_MISSING` / `SCHEMA_OUTDATED` error unless the schema is ready. */
export async function assertSchema(
  db: SchemaDatabase,
  schema: PackageSchema,
  options: SchemaOptions = {},
): Promise<void> {
  const problem = schemaProblem(await schemaStatus(db, schema, options), schema);
  if (problem) throw problem;
}

/**
 * Applies the schema's steps not yet recorded, in one transaction under an
 * advisory lock (concurrent callers wait, then find nothing to do), and records
 * each as a row of {@link VERSION_TABLE}. Every step is idempotent SQL, so a
 * database whose tables predate the version rows is adopted without change.
 * Throws `SCHEMA_MISSING` when a required schema is not applied,
 * `SCHEMA_MIGRATION_FAILED` (nothing applied) when a step fails.
 */
export function applySchema(
  db: SchemaDatabase,
  schema: PackageSchema,
  options: ApplySchemaOptions = {},
): Promise<SchemaMigrationResult> {
  const engine = engineSchema(options.schema);
  const own = options.inCallersTransaction !== true;
  return withSchemaSession(db, async (query) => {
    if (own) await query('BEGIN');
    try {
      await query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
      if (schema.requires) {
        const required = schema.requires;
        const status = await statusOn(query, required.schema, engine);
        if (!status.tableExists || status.found < required.version) {
          const found = status.tableExists ? `is at version ${status.found}` : 'does not exist';
          throw schema.error(
            'SCHEMA_MISSING',
            `${schemaTable(schema, engine)} needs ${status.table} of ${required.schema.package} at version ${required.version} or later, ` +
              `but it ${found}: call migrate() from ${required.schema.package} first (see its README)`,
          );
        }
      }
      // A schema a DBA created in advance is used as is: CREATE SCHEMA needs a right on the database.
      const [exists] = await query('SELECT 1 AS found FROM pg_namespace WHERE nspname = $1', [engine]);
      if (exists === undefined) await query(`CREATE SCHEMA ${engine}`);
      await query(`CREATE TABLE IF NOT EXISTS ${versionTable(engine)} (
          package     TEXT NOT NULL,
          version     INTEGER NOT NULL,
          name        TEXT NOT NULL,
          checksum    TEXT NOT NULL,
          applied_at  TIMESTAMPTZ NOT NULL DEFAULT NOW(),
          PRIMARY KEY (package, version)
        )`);
      const { found: from } = await statusOn(query, schema, engine);
      const applied: string[] = [];
      for (const step of schema.steps) {
        if (step.version <= from) continue;
        try {
          await query(inEngineSchema(step.sql, engine));
        } catch (cause) {
          throw schema.error(
            'SCHEMA_MIGRATION_FAILED',
            `${schema.package} schema version ${step.version} (${step.name}) failed: ${(cause as Error).message}`,
            cause,
          );
        }
        await query(
          `INSERT INTO ${versionTable(engine)} (package, version, name, checksum) VALUES ($1, $2, $3, $4)`,
          [schema.package, step.version, step.name, step.checksum],
        );
        applied.push(step.name);
      }
      if (own) await query('COMMIT');
      return { package: schema.package, from, to: Math.max(from, neededVersion(schema)), applied };
    } catch (error) {
      if (own) await query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}
