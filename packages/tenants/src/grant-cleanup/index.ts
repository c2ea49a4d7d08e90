/**
 * The `grant_cleanup` tenant: deletes expired role grants and audits them.
 *
 * @packageDocumentation
 */
export type { GrantCleanupConfig } from './config.js';
export {
  assertGrantCleanupConfig,
  GRANT_CLEANUP_DEFAULTS,
  GRANT_CLEANUP_ENV,
  grantCleanupConfigFromEnv,
} from './config.js';
export type { GrantCleanupJob, GrantCleanupJobOptions } from './grant-cleanup-job.js';
export {
  createGrantCleanupJob,
  GRANT_CLEANUP_AUDIT_ID_CAP,
  GRANT_CLEANUP_JOB_NAME,
} from './grant-cleanup-job.js';
