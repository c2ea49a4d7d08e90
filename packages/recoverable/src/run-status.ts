/** The status column of `jobs.recoverable_runs`: one of {@link RUN_STATUSES}. */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Non-terminal statuses: at most one row per job may hold one (the partial unique index). */
export const ACTIVE_STATUSES: readonly RunStatus[] = ['Running', 'Paused', 'CancelRequested'];

/** Terminal statuses: the run is over; a trigger starts a fresh run. */
export const TERMINAL_STATUSES: readonly RunStatus[] = ['Completed', 'Failed'];

/**
 * Every status, for validation of stored rows and query parameters: the one
 * list (the admin API's `RunStatus` schema reads it; the partial index
 * `one_active_run_per_job` repeats {@link ACTIVE_STATUSES}, tied by a test).
 */
export const RUN_STATUSES = ['Running', 'Paused', 'CancelRequested', 'Completed', 'Failed'] as const;

/** `true` when `value` is one of {@link RUN_STATUSES}. */
export function isRunStatus(value: unknown): value is RunStatus {
  return typeof value === 'string' && (RUN_STATUSES as readonly string[]).includes(value);
}
