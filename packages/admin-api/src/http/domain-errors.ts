import { AdminApiError, type AdminApiErrorCode } from '../errors.js';

/** `RecoverableError` codes answered as client errors (the rest are bugs → 500). */
const RECOVERABLE_CODES: Readonly<Record<string, AdminApiErrorCode>> = {
  UNKNOWN_JOB: 'JOB_NOT_FOUND',
  RUN_NOT_FOUND: 'RUN_NOT_FOUND',
  INVALID_PARAMS: 'INVALID_PARAMS',
  INVALID_RUN_ID: 'INVALID_RUN_ID',
  INVALID_PAGINATION: 'VALIDATION_FAILED',
  NO_ACTIVE_RUN: 'NO_ACTIVE_RUN',
  SHUTTING_DOWN: 'SHUTTING_DOWN',
};

/** `ConsistencyError` codes answered as client errors (findings across runs). */
const CONSISTENCY_CODES: Readonly<Record<string, AdminApiErrorCode>> = {
  FINDING_NOT_FOUND: 'FINDING_NOT_FOUND',
  INVALID_TRANSITION: 'INVALID_TRANSITION',
  INVALID_CURSOR: 'INVALID_CURSOR',
  INVALID_OPTIONS: 'VALIDATION_FAILED',
};

/** Node socket errors that mean the database server cannot be reached. */
const CONNECTION_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

/**
 * SQLSTATEs that mean "no usable connection": class 08 (connection
 * exception), 57P01–57P03 (shutdown, cannot connect now), 53300 (too many
 * connections).
 */
function isConnectionSqlState(code: string): boolean {
  return (
    code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300'
  );
}

/** Messages of pg / pg-pool when the connection fails or drops. */
const CONNECTION_MESSAGE =
  /timeout exceeded when trying to connect|connection terminated|connect ECONNREFUSED|Connection terminated unexpectedly|Client has encountered a connection error/i;

/**
 * `true` when `thrown` (or anything in its `cause` chain, or an
 * `AggregateError`'s members) says the database cannot be reached.
 */
export function isDatabaseUnavailable(thrown: unknown, depth = 0): boolean {
  if (depth > 8 || thrown === null || typeof thrown !== 'object') return false;
  const error = thrown as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (
    typeof error.code === 'string' &&
    (CONNECTION_ERRNOS.has(error.code) || isConnectionSqlState(error.code))
  ) {
    // Only SQLSTATE-looking or errno-looking codes count; domain codes never match these.
    return true;
  }
  if (typeof error.message === 'string' && CONNECTION_MESSAGE.test(error.message)) return true;
  if (Array.isArray(error.errors) && error.errors.some((e) => isDatabaseUnavailable(e, depth + 1)))
    return true;
  return isDatabaseUnavailable(error.cause, depth + 1);
}

/**
 * Maps errors of the domain packages to {@link AdminApiError}s: the
 * `RecoverableError` codes a client can cause (matched by name and code, so
 * a second copy of the package maps the same), and any database connection
 * failure → `UNAVAILABLE`. Anything else → `undefined` (a bug: 500).
 */
export function domainToAdminApiError(thrown: unknown): AdminApiError | undefined {
  if (thrown instanceof Error && thrown.name === 'RecoverableError') {
    const code = (thrown as Error & { code?: unknown }).code;
    const mapped = typeof code === 'string' ? RECOVERABLE_CODES[code] : undefined;
    if (mapped) return new AdminApiError(mapped, thrown.message, { cause: thrown });
  }
  if (thrown instanceof Error && thrown.name === 'ConsistencyError') {
    const code = (thrown as Error & { code?: unknown }).code;
    const mapped = typeof code === 'string' ? CONSISTENCY_CODES[code] : undefined;
    if (mapped) return new AdminApiError(mapped, thrown.message, { cause: thrown });
  }
  if (isDatabaseUnavailable(thrown)) {
    return new AdminApiError(
      'UNAVAILABLE',
      'the database does not answer; try again once GET /healthz reports it ok',
      { cause: thrown },
    );
  }
  return undefined;
}
