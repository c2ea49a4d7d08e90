/** The status column of `jobs.recoverable_runs`. */
export type RunStatus = 'Running' | 'Paused' | 'CancelRequested' | 'Completed' | 'Failed';

/** Non-terminal statuses: at most one row per job may hold one (the partial unique index). */
export const ACTIVE_STATUSES: readonly RunStatus[] = ['Running', 'Paused', 'CancelRequested'];

/** Every status, for validation of stored rows and query parameters. */
export const RUN_STATUSES: readonly RunStatus[] = [
  'Running',
  'Paused',
  'CancelRequested',
  'Completed',
  'Failed',
];
