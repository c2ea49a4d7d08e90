/**
 * Exit codes of `oxijobs jobs …` (also listed in `oxijobs jobs --help`).
 */
export const EXIT_CODES = {
  /** Success; with `--follow`, the run Completed (or the batch ended ok). */
  ok: 0,
  /** The API refused or failed the request, the server is unreachable, or a followed run Failed. */
  failed: 1,
  /** A bad command-line value or no admin token: nothing was sent. */
  usage: 2,
  /** With `--follow`: the run ended Paused (cancelled, or the server stopped); trigger again to resume. */
  paused: 3,
  /** Interrupted (Ctrl-C) while following; the run itself goes on. */
  interrupted: 130,
} as const;

/**
 * Codes a {@link JobsClientError} can carry.
 *
 * - `USAGE`: a command-line value or the connection settings are not allowed (exit 2).
 * - `NO_TOKEN`: no admin token was given (exit 2).
 * - `API_ERROR`: the API answered with an error envelope (`apiCode` holds its code; exit 1).
 * - `UNREACHABLE`: no connection to the server (refused, unknown host, reset; exit 1).
 * - `TIMEOUT`: the server did not answer in time (exit 1).
 * - `BAD_RESPONSE`: the answer was not the JSON the API promises (exit 1).
 * - `NOT_THE_ENGINE`: the server at the URL did not say it is `oxijobs` (its `GET /healthz`); the token was not sent (exit 1).
 */
export type JobsClientErrorCode =
  | 'USAGE'
  | 'NO_TOKEN'
  | 'API_ERROR'
  | 'UNREACHABLE'
  | 'TIMEOUT'
  | 'BAD_RESPONSE'
  | 'NOT_THE_ENGINE';

/** The one error class of the jobs client; its message is printed as one line after `oxijobs: `. */
export class JobsClientError extends Error {
  override readonly name = 'JobsClientError';
  constructor(
    readonly code: JobsClientErrorCode,
    message: string,
    options?: { cause?: unknown; status?: number; apiCode?: string },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = options?.status;
    this.apiCode = options?.apiCode;
  }

  /** HTTP status of an `API_ERROR` / `BAD_RESPONSE`. */
  readonly status: number | undefined;
  /** The API's error code of an `API_ERROR` (`UNKNOWN_JOB`, `NO_ACTIVE_RUN`, …). */
  readonly apiCode: string | undefined;

  /** The process exit code this error ends the command with. */
  get exitCode(): number {
    return this.code === 'USAGE' || this.code === 'NO_TOKEN' ? EXIT_CODES.usage : EXIT_CODES.failed;
  }
}
