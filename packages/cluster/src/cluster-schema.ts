import { join } from 'node:path';
import {
  type ApplySchemaOptions,
  applySchema,
  assertSchema,
  type PackageSchema,
  packageRoot,
  readSchemaSteps,
  type SchemaDatabase,
  type SchemaMigrationResult,
  type SchemaOptions,
  type SchemaStatus,
  schemaStatus,
} from '@oxicloud/recoverable';
import { ClusterError } from './cluster-error.js';

/** The folder of this package's SQL files (`sql/` in the tarball). */
export const clusterSqlFolder: string = join(packageRoot(import.meta.url), 'sql');

/**
 * `jobs.nodes`, `jobs.periodic_state` and `jobs.periodic_runs`, versioned
 * under `@oxicloud/cluster` (no foreign key to another package's tables).
 */
export const CLUSTER_SCHEMA: PackageSchema = {
  package: '@oxicloud/cluster',
  table: 'jobs.periodic_state',
  steps: readSchemaSteps(clusterSqlFolder),
  error: (code, message, cause) => new ClusterError(code, message, { cause }),
};

/** The schema version this build of the package needs. */
export const CLUSTER_SCHEMA_VERSION: number = CLUSTER_SCHEMA.steps.length;

/**
 * Creates or upgrades the cluster tables: the package's `sql/NNN_*.sql` files
 * not yet recorded in `jobs.schema_versions`, in one transaction under an
 * advisory lock. Idempotent; takes a pg `Pool`, a connected `Client` or a Kysely.
 *
 * @throws {ClusterError} `SCHEMA_MIGRATION_FAILED` (nothing applied) when a file fails.
 * @example
 * ```ts
 * import { migrate } from '@oxicloud/cluster';
 * await migrate(pool); // { package: '@oxicloud/cluster', from: 0, to: 1, applied: ['001_cluster.sql'] }
 * ```
 */
export function migrate(
  db: SchemaDatabase,
  options: ApplySchemaOptions = {},
): Promise<SchemaMigrationResult> {
  return applySchema(db, CLUSTER_SCHEMA, options);
}

/** Where the database stands against this package's schema (read only). */
export function clusterSchemaStatus(db: SchemaDatabase, options: SchemaOptions = {}): Promise<SchemaStatus> {
  return schemaStatus(db, CLUSTER_SCHEMA, options);
}

/** Throws `SCHEMA_MISSING` / `SCHEMA_OUTDATED` unless the cluster tables are ready. */
export function checkClusterSchema(db: SchemaDatabase, options: SchemaOptions = {}): Promise<void> {
  return assertSchema(db, CLUSTER_SCHEMA, options);
}
