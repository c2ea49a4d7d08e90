/**
 * The `trash_cleanup` tenant: purges trash older than the retention.
 *
 * @packageDocumentation
 */
export type { TrashCleanupConfig } from './config.js';
export {
  assertTrashCleanupConfig,
  TRASH_CLEANUP_DEFAULTS,
  TRASH_CLEANUP_ENV,
  trashCleanupConfigFromEnv,
} from './config.js';
export type { TrashCleanupJob, TrashCleanupJobOptions } from './trash-cleanup-job.js';
export { createTrashCleanupJob, TRASH_CLEANUP_JOB_NAME } from './trash-cleanup-job.js';
