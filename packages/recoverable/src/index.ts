/**
 * @oxicloud/recoverable: Part 2 of the job plan, the recoverable-run engine.
 * Runs live in `jobs.recoverable_runs`: one active run per job, cursor
 * checkpoints, cooperative cancel to Paused, resume, and a boot sweep.
 *
 * @packageDocumentation
 */

export type { CheckpointProgress, JobStore } from './job-store.js';
export type { RecoverableJobHandler } from './recoverable-job-handler.js';
export type { RunOutcome } from './run-outcome.js';
export { completed, failed, paused } from './run-outcome.js';
export type { RunStatus } from './run-status.js';
export { ACTIVE_STATUSES, RUN_STATUSES } from './run-status.js';
