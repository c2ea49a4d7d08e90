export {
  DEFAULT_ENGINE_SCHEMA,
  engineSchema,
  engineSchemaProblem,
  engineTable,
  FOREIGN_SCHEMAS,
  inEngineSchema,
  SIDECAR_ENGINE_SCHEMA,
} from './engine-schema.js';
export type {
  ApplySchemaOptions,
  PackageSchema,
  SchemaErrorCode,
  SchemaMigrationResult,
  SchemaOptions,
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
  schemaTable,
  VERSION_TABLE,
  versionTable,
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
