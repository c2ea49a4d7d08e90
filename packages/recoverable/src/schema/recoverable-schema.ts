import { join } from 'node:path';
import { RecoverableError } from '../recoverable-error.js';
import {
  type ApplySchemaOptions,
  applySchema,
  assertSchema,
  type PackageSchema,
  packageRoot,
  readSchemaSteps,
  type SchemaMigrationResult,
  type SchemaOptions,
  type SchemaStatus,
  schemaStatus,
} from './package-schema.js';
import type { SchemaDatabase } from './schema-session.js';

/** The folder of this package's SQL files (`sql/` in the tarball). */
export const recoverableSqlFolder: string = join(packageRoot(import.meta.url), 'sql');

/** `jobs.recoverable_runs`, versioned under `@oxicloud/recoverable`. */
export const RECOVERABLE_SCHEMA: PackageSchema = {
  package: '@oxicloud/recoverable',
  table: 'jobs.recoverable_runs',
  steps: readSchemaSteps(recoverableSqlFolder),
  error: (code, message, cause) => new RecoverableError(code, message, { cause }),
};

/** The schema version this build of the package needs. */
export const RECOVERABLE_SCHEMA_VERSION: number = RECOVERABLE_SCHEMA.steps.length;

/**
 * Creates or upgrades `jobs.recoverable_runs` (and the `jobs` schema): the
 * package's `sql/NNN_*.sql` files not yet recorded in `jobs.schema_versions`,
 * in one transaction under an advisory lock. Idempotent; call it at boot,
 * before the engine runs. Takes a pg `Pool`, a connected `Client` or a Kysely.
 *
 * @throws {RecoverableError} `SCHEMA_MIGRATION_FAILED` (nothing applied) when a file fails.
 * @example
 * ```ts
 * import { migrate } from '@oxicloud/recoverable';
 * await migrate(pool); // { package, from: 0, to: 4, applied: ['001_recoverable_runs.sql', …] }
 * ```
 */
export function migrate(
  db: SchemaDatabase,
  options: ApplySchemaOptions = {},
): Promise<SchemaMigrationResult> {
  return applySchema(db, RECOVERABLE_SCHEMA, options);
}

/** Where the database stands against this package's schema (read only). */
export function recoverableSchemaStatus(
  db: SchemaDatabase,
  options: SchemaOptions = {},
): Promise<SchemaStatus> {
  return schemaStatus(db, RECOVERABLE_SCHEMA, options);
}

/**
 * Throws `SCHEMA_MISSING` ("jobs.recoverable_runs does not exist: call
 * migrate() from @oxicloud/recoverable (see its README)") or
 * `SCHEMA_OUTDATED` (the version found and the one needed) unless the schema is ready.
 */
export function checkRecoverableSchema(db: SchemaDatabase, options: SchemaOptions = {}): Promise<void> {
  return assertSchema(db, RECOVERABLE_SCHEMA, options);
}
