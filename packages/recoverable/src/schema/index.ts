export type {
  PackageSchema,
  SchemaErrorCode,
  SchemaMigrationResult,
  SchemaStatus,
  SchemaStep,
} from './package-schema.js';
export {
  applySchema,
  assertSchema,
  packageRoot,
  readSchemaSteps,
  schemaProblem,
  schemaStatus,
  VERSION_TABLE,
} from './package-schema.js';
export {
  checkRecoverableSchema,
  migrate,
  RECOVERABLE_SCHEMA,
  RECOVERABLE_SCHEMA_VERSION,
  recoverableSchemaStatus,
  recoverableSqlFolder,
} from './recoverable-schema.js';
export type { SchemaClient, SchemaDatabase, SchemaPool } from './schema-session.js';
