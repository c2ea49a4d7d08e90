/**
 * The stable error codes of the admin API. Every error response is
 * `{ error: { code, message } }` with one of these codes; clients branch on
 * `code`, humans read `message`.
 */
export const ADMIN_API_ERROR_STATUS = {
  /**
   * A query or path value failed validation (e.g. `force=maybe`, `severity=Foo`, `limit=0x10`, `kind=%00`);
   * the message lists the allowed values.
   */
  VALIDATION_FAILED: 400,
  /**
   * Trigger params refused: by the job's schema (unknown keys, bad values; the job's own message), or a
   * string with a NUL or a lone surrogate, nesting deeper than 8, `force` / `deep` not JSON booleans.
   */
  INVALID_PARAMS: 400,
  /** The request body is not valid JSON, not a JSON object, or not sent as `application/json`. */
  MALFORMED_JSON: 400,
  /** A run id that is not a UUID. */
  INVALID_RUN_ID: 400,
  /** No bearer token, or one that is invalid, expired or tampered with. */
  UNAUTHENTICATED: 401,
  /** A valid token whose user is not (or no longer) an admin, or no longer exists. */
  FORBIDDEN: 403,
  /** A finding id that is not a UUID. */
  INVALID_FINDING_ID: 400,
  /** A findings list cursor this API did not hand out (pass `next_cursor` back unchanged). */
  INVALID_CURSOR: 400,
  /** No finding (across runs) has this id. */
  FINDING_NOT_FOUND: 404,
  /** A decision the finding's state does not allow (accept a fixed finding, reopen an open one). */
  INVALID_TRANSITION: 409,
  /** No registered job has this name. */
  JOB_NOT_FOUND: 404,
  /** No repair plan has this id. */
  REPAIR_PLAN_NOT_FOUND: 404,
  /** The plan's hash is not the one sent (it changed since it was read), or its state does not allow the call. */
  REPAIR_PLAN_CONFLICT: 409,
  /** The job has no run with this id. */
  RUN_NOT_FOUND: 404,
  /** No route matches the path. */
  NOT_FOUND: 404,
  /** The route exists but not for this method (the `Allow` header lists the methods). */
  METHOD_NOT_ALLOWED: 405,
  /** Cancel found no Running, CancelRequested or Paused run of the job. */
  NO_ACTIVE_RUN: 409,
  /** A run-level action (cancel, runs, findings) on a periodic (Part 1) job, which has no runs. */
  NOT_RECOVERABLE: 409,
  /** The request body is larger than the limit (64 KiB unless configured otherwise). */
  PAYLOAD_TOO_LARGE: 413,
  /** Something unexpected; details are in the server log, never in the response. */
  INTERNAL: 500,
  /** The server is shutting down and starts no run. */
  SHUTTING_DOWN: 503,
  /** A dependency (the database) does not answer. */
  UNAVAILABLE: 503,
  /** `createAdminApp` was given options it cannot work with (thrown at creation, never answered). */
  BAD_OPTIONS: 500,
} as const;

/** Codes an {@link AdminApiError} can carry. */
export type AdminApiErrorCode = keyof typeof ADMIN_API_ERROR_STATUS;

/** The JSON body of every error response. */
export interface AdminApiErrorBody {
  readonly error: { readonly code: AdminApiErrorCode; readonly message: string };
}

/** The one error class of this package; `code` says what went wrong, `status` the HTTP status it maps to. */
export class AdminApiError extends Error {
  override readonly name = 'AdminApiError';
  readonly status: number;
  constructor(
    readonly code: AdminApiErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.status = ADMIN_API_ERROR_STATUS[code];
  }

  /** The response body for this error. */
  toBody(): AdminApiErrorBody {
    return { error: { code: this.code, message: this.message } };
  }
}
