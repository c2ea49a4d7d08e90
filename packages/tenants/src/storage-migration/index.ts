/**
 * The `storage_migration` tenant: copies every blob from the backend the
 * server serves from to the other one, resumably, in hash order.
 *
 * @packageDocumentation
 */
export type {
  MigrationFailureReason,
  StorageMigrationJob,
  StorageMigrationJobOptions,
} from './storage-migration-job.js';
export {
  createStorageMigrationJob,
  MIGRATION_FAILED_KIND,
  STORAGE_MIGRATION_COUNTERS,
  STORAGE_MIGRATION_JOB_NAME,
} from './storage-migration-job.js';
export type { BlobBackendName, StorageMigrationParams } from './storage-migration-params.js';
export {
  BLOB_BACKEND_NAMES,
  STORAGE_MIGRATION_DEFAULTS,
  storageMigrationParamsSchema,
} from './storage-migration-params.js';
