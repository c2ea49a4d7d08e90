import { join } from 'node:path';
import {
  type ApplySchemaOptions,
  applySchema,
  assertSchema,
  type PackageSchema,
  packageRoot,
  RECOVERABLE_SCHEMA,
  readSchemaSteps,
  type SchemaDatabase,
  type SchemaMigrationResult,
  type SchemaOptions,
  type SchemaStatus,
  schemaStatus,
} from '@oxicloud/recoverable';
import { ConsistencyError } from './consistency-error.js';

/** The folder of this package's SQL files (`sql/` in the tarball). */
export const consistencySqlFolder: string = join(packageRoot(import.meta.url), 'sql');

/** `jobs.run_findings`, versioned under `@oxicloud/consistency`; needs `jobs.recoverable_runs` (its foreign key). */
export const CONSISTENCY_SCHEMA: PackageSchema = {
  package: '@oxicloud/consistency',
  table: 'jobs.run_findings',
  steps: readSchemaSteps(consistencySqlFolder),
  requires: { schema: RECOVERABLE_SCHEMA, version: 1 },
  error: (code, message, cause) => new ConsistencyError(code, message, { cause }),
};

/** The schema version this build of the package needs. */
export const CONSISTENCY_SCHEMA_VERSION: number = CONSISTENCY_SCHEMA.steps.length;

/**
 * Creates or upgrades `jobs.run_findings`: the package's `sql/NNN_*.sql`
 * files not yet recorded in `jobs.schema_versions`, in one transaction under
 * an advisory lock. Idempotent. Call `migrate()` of `@oxicloud/recoverable`
 * first: findings reference runs.
 *
 * @throws {ConsistencyError} `SCHEMA_MISSING` when `jobs.recoverable_runs` is not there,
 * `SCHEMA_MIGRATION_FAILED` (nothing applied) when a file fails.
 * @example
 * ```ts
 * import { migrate as migrateRuns } from '@oxicloud/recoverable';
 * import { migrate as migrateFindings } from '@oxicloud/consistency';
 * await migrateRuns(pool);
 * await migrateFindings(pool);
 * ```
 */
export function migrate(
  db: SchemaDatabase,
  options: ApplySchemaOptions = {},
): Promise<SchemaMigrationResult> {
  return applySchema(db, CONSISTENCY_SCHEMA, options);
}

/** Where the database stands against this package's schema (read only). */
export function consistencySchemaStatus(
  db: SchemaDatabase,
  options: SchemaOptions = {},
): Promise<SchemaStatus> {
  return schemaStatus(db, CONSISTENCY_SCHEMA, options);
}

/** Throws `SCHEMA_MISSING` / `SCHEMA_OUTDATED` unless `jobs.run_findings` is ready. */
export function checkConsistencySchema(db: SchemaDatabase, options: SchemaOptions = {}): Promise<void> {
  return assertSchema(db, CONSISTENCY_SCHEMA, options);
}
