/**
 * The `storage_reconcile` tenant: recomputes drive and user usage counters.
 *
 * @packageDocumentation
 */
export type { StorageReconcileConfig } from './config.js';
export {
  assertStorageReconcileConfig,
  STORAGE_RECONCILE_DEFAULTS,
  STORAGE_RECONCILE_ENV,
  storageReconcileConfigFromEnv,
} from './config.js';
export type { StorageReconcileJob, StorageReconcileJobOptions } from './storage-reconcile-job.js';
export {
  createStorageReconcileJob,
  STORAGE_RECONCILE_JOB_NAME,
  STORAGE_RECONCILE_TOP,
} from './storage-reconcile-job.js';
