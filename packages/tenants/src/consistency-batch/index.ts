/** The consistency_batch tenant: every `*_consistency` check in turn, one click; always ok, failures per check. */
export type {
  ConsistencyBatchJobOptions,
  ConsistencyBatchRunArgs,
  PerCheckEntry,
} from './consistency-batch-job.js';
export {
  CONSISTENCY_BATCH_JOB_NAME,
  createConsistencyBatchJob,
} from './consistency-batch-job.js';
