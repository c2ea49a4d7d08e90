/**
 * @oxicloud/migrations: the plain SQL migrations of the storage domain and
 * the jobs schema, and a runner that applies them in order and records them.
 *
 * @packageDocumentation
 */

export type { MigrationErrorCode } from './errors.js';
export { MigrationError } from './errors.js';
export type { MigrationFile } from './files.js';
export { migrationsFolder, readMigrationFiles } from './files.js';
export type { MigrateOptions, MigrationClient, MigrationPool, MigrationResult } from './migrate.js';
export { migrate, sidecarBookkeeping } from './migrate.js';
export type { RecordedStorageDomain, StorageDomain } from './oxicloud-domain.js';
export {
  engineFiles,
  oxiCloudDomainFolder,
  oxiCloudJobsFolder,
  readOxiCloudDomainFiles,
  STORAGE_DOMAINS,
  storageDomainFiles,
} from './oxicloud-domain.js';
export type {
  CheckDescription,
  ColumnDefault,
  ColumnDescription,
  EnumDescription,
  ExtensionDescription,
  ForeignKeyDescription,
  IndexDescription,
  KeyDescription,
  OnDelete,
  OutOfScopeTable,
  SchemaDescription,
  TableDescription,
  TriggerDescription,
  TriggerEvent,
  ViewDescription,
} from './oxicloud-schema/index.js';
export {
  ANY_DEFAULT,
  diffSchema,
  OXICLOUD_SCHEMA,
  readSchema,
  schemaAssumptionProblems,
} from './oxicloud-schema/index.js';
export { PACKAGE_SCHEMAS, RETIRED_MIGRATIONS } from './package-schemas.js';
export type {
  EmptyDatabase,
  EngineDatabase,
  EngineMigrations,
  EngineOldModelDatabase,
  JobsCounts,
  OldModelMarker,
  OxiCloudDatabase,
  OxiCloudEra,
  OxiCloudFacts,
  Recognition,
  RecognitionKind,
  RunCounts,
  SqlxMigrations,
  Uncounted,
  UnknownDatabase,
} from './recognise/index.js';
export { describeRecognition, FOUND_TABLES_LISTED, recogniseDatabase } from './recognise/index.js';
export type { MigrationStatus } from './status.js';
export { migrationStatus } from './status.js';
