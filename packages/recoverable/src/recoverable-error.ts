/**
 * The fixed set of error codes of the recoverable-run engine.
 *
 * - `UNKNOWN_JOB`: no recoverable job of that name is registered.
 * - `DUPLICATE_JOB`: a job of that name is already registered.
 * - `INVALID_JOB_NAME`: a job name that is not snake_case.
 * - `INVALID_PARAMS`: trigger params the job's `validateParams` rejected (or not a JSON object).
 * - `INVALID_PAGINATION`: `limit`/`offset` out of range.
 * - `INVALID_RUN_ID`: a run id that is not a UUID.
 * - `RUN_NOT_FOUND`: no run with that id for that job.
 * - `NO_ACTIVE_RUN`: cancel found no Running, CancelRequested or Paused run.
 * - `INVALID_CHECKPOINT`: a checkpoint with counts that are not finite non-negative numbers.
 * - `CHECKPOINT_LOST`: the run's stored cursor is not the one this store last wrote: a
 *   checkpoint committed without waiting for the disk was lost in a Postgres crash
 *   (the batch loop reloads the stored cursor and replays from there).
 * - `INVALID_CURSOR`: cursor bytes that are not a cursor of this walk (another job's, another version's).
 * - `SHUTTING_DOWN`: the engine is shutting down and starts no run.
 * - `LEASE_LOST`: a write of a run was refused by its fence (another node took
 *   the run over, or the janitor paused it), or this node no longer trusts its
 *   lease: the handler stops and writes nothing more.
 * - `SCHEMA_MISSING`: `jobs.recoverable_runs` does not exist (call `migrate()`).
 * - `SCHEMA_OUTDATED`: the schema is older than this build needs (call `migrate()`).
 * - `SCHEMA_MIGRATION_FAILED`: a schema file failed to apply; nothing was applied.
 */
export type RecoverableErrorCode =
  | 'UNKNOWN_JOB'
  | 'DUPLICATE_JOB'
  | 'INVALID_JOB_NAME'
  | 'INVALID_PARAMS'
  | 'INVALID_PAGINATION'
  | 'INVALID_RUN_ID'
  | 'RUN_NOT_FOUND'
  | 'NO_ACTIVE_RUN'
  | 'INVALID_CHECKPOINT'
  | 'CHECKPOINT_LOST'
  | 'INVALID_CURSOR'
  | 'SHUTTING_DOWN'
  | 'LEASE_LOST'
  | 'SCHEMA_MISSING'
  | 'SCHEMA_OUTDATED'
  | 'SCHEMA_MIGRATION_FAILED';

/** The one error class of `@oxicloud/recoverable`; branch on {@link RecoverableError.code}. */
export class RecoverableError extends Error {
  override readonly name = 'RecoverableError';
  readonly code: RecoverableErrorCode;

  constructor(code: RecoverableErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** The message of anything thrown (an `Error`'s message, else its string form). */
export function messageOf(thrown: unknown): string {
  if (thrown instanceof Error) return thrown.message || thrown.name;
  if (typeof thrown === 'string') return thrown;
  try {
    return JSON.stringify(thrown) ?? String(thrown);
  } catch {
    return String(thrown);
  }
}

/** `true` for the `LEASE_LOST` error of a fenced write (or of a lease this node no longer trusts). */
export function isLeaseLost(thrown: unknown): boolean {
  return thrown instanceof RecoverableError && thrown.code === 'LEASE_LOST';
}
