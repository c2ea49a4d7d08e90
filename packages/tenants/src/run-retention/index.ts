export type { RunRetentionConfig } from './config.js';
export {
  assertRunRetentionConfig,
  RUN_RETENTION_DEFAULTS,
  RUN_RETENTION_ENV,
  runRetentionConfigFromEnv,
} from './config.js';
export type { RunRetentionJob, RunRetentionJobOptions } from './run-retention-job.js';
export {
  createRunRetentionJob,
  RUN_RETENTION_AUDIT_ID_CAP,
  RUN_RETENTION_JOB_NAME,
} from './run-retention-job.js';
