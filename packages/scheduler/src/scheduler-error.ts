/** The fixed set of codes a {@link SchedulerError} carries. */
export type SchedulerErrorCode =
  | 'DUPLICATE_JOB'
  | 'INVALID_JOB_NAME'
  | 'INVALID_INTERVAL'
  | 'INVALID_TIMEOUT'
  | 'INVALID_MISFIRE'
  | 'INVALID_READY'
  | 'ALREADY_STARTED';

/**
 * The one error class of @oxicloud/scheduler. Thrown at registration and
 * start-up only: a run never throws out of the registry (its failures become
 * `err` outcomes).
 */
export class SchedulerError extends Error {
  override readonly name = 'SchedulerError';
  readonly code: SchedulerErrorCode;

  constructor(code: SchedulerErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** The message of anything thrown (an `Error`'s message, else its text). */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === 'string' ? error : String(error);
}
