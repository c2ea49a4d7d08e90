/**
 * Riding out a database outage: {@link isConnectionLoss} tells a lost
 * connection (Postgres stopped, restarted, unreachable) from a real failure,
 * and {@link withConnectionRetry} retries an operation with backoff while the
 * connection is lost, up to a deadline. The batch loops wrap each batch in it,
 * so a short outage is a pause in the loop, not a failed run.
 */

/** How long a batch is retried after the database went away, before the run lands `Paused`. */
export const DEFAULT_CONNECTION_RETRY_MS = 60_000;

/** The reason a run paused by an outage carries (`pause_reason`). */
export const DATABASE_UNREACHABLE = 'database unreachable';

/** Node socket errors that mean the server is not (or no longer) there. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'ENOTCONN',
]);

/**
 * 55P03 lock_not_available: a statement gave up at its `lock_timeout`
 * because another session holds or queues for a lock on the table (beside
 * OxiCloud: its migrations at boot). Like a lost connection it passes: wait
 * and repeat the batch, or land the run `Paused` at its checkpoint.
 */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * SQLSTATEs of a connection going away: class 08 (connection exception) and
 * 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now
 * (starting up or shutting down).
 */
function isConnectionSqlState(code: string): boolean {
  return (
    /^08[0-9A-Z]{3}$/.test(code) ||
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03' ||
    code === LOCK_NOT_AVAILABLE
  );
}

/** Messages of pg and pg-pool for a connection that is gone (they carry no code). */
const LOST_MESSAGES = [
  /connection terminated/i,
  /terminating connection/i,
  /server closed the connection/i,
  /client has encountered a connection error/i,
  /timeout exceeded when trying to connect/i,
  /cannot use a pool after calling end/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
  /socket hang up/i,
];

/**
 * `true` when `error` (or one of its causes, or an `AggregateError`'s parts)
 * says the connection to the database is lost or cannot be made: socket
 * errors (`ECONNREFUSED`, `ECONNRESET`, …), SQLSTATE class 08 and 57P01–57P03,
 * 55P03 (a `lock_timeout` that gave up: the wait passes the same way),
 * pg's "Connection terminated …" and pg-pool's "Cannot use a pool after
 * calling end on the pool". A query error (a constraint, a syntax error) is
 * not a connection loss.
 */
export function isConnectionLoss(error: unknown): boolean {
  const seen = new Set<unknown>();
  const visit = (e: unknown): boolean => {
    if (e === null || e === undefined || seen.has(e) || seen.size > 16) return false;
    seen.add(e);
    if (typeof e !== 'object') return typeof e === 'string' && LOST_MESSAGES.some((re) => re.test(e));
    const { code, message, cause, errors } = e as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
      errors?: unknown;
    };
    if (typeof code === 'string' && (SOCKET_CODES.has(code) || isConnectionSqlState(code))) return true;
    if (typeof message === 'string') {
      if (LOST_MESSAGES.some((re) => re.test(message))) return true;
      if (/\b(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH)\b/.test(message)) return true;
    }
    if (Array.isArray(errors) && errors.some(visit)) return true;
    return visit(cause);
  };
  return visit(error);
}

/** Options of {@link withConnectionRetry}. */
export interface ConnectionRetryOptions {
  /**
   * How long to keep retrying after the first connection loss.
   * @defaultValue {@link DEFAULT_CONNECTION_RETRY_MS}
   */
  readonly retryForMs?: number;
  /** Stops the retries at once (shutdown, cancel): the last error is thrown. */
  readonly signal?: AbortSignal;
  /** First delay; doubles each attempt. @defaultValue 250 */
  readonly initialDelayMs?: number;
  /** @defaultValue 5000 */
  readonly maxDelayMs?: number;
  /** Called before each wait, for a log line. */
  readonly onRetry?: (info: { attempt: number; error: unknown; delayMs: number; elapsedMs: number }) => void;
}

/**
 * Runs `operation`; while it rejects with a connection loss
 * ({@link isConnectionLoss}), waits (250 ms doubling to 5 s) and runs it
 * again, until `retryForMs` after the first loss. Any other error, a loss
 * past the deadline, or a loss after `signal` fired is thrown as is: the
 * caller lands the run (`Paused` with its last checkpoint for a loss). The
 * operation must be safe to repeat (a batch whose checkpoint did not land is
 * replayed, which the idempotent findings and copies allow).
 *
 * @example
 * ```ts
 * const batch = await withConnectionRetry(() => fetchAndProcess(cursor), {
 *   retryForMs: store.connectionRetryMs,
 *   signal,
 *   onRetry: ({ attempt, error }) => log.warn({ attempt, error: String(error) }, 'database away; retrying'),
 * });
 * ```
 */
export async function withConnectionRetry<T>(
  operation: () => Promise<T>,
  options: ConnectionRetryOptions = {},
): Promise<T> {
  const retryForMs = options.retryForMs ?? DEFAULT_CONNECTION_RETRY_MS;
  const initialDelayMs = options.initialDelayMs ?? 250;
  const maxDelayMs = options.maxDelayMs ?? 5_000;
  let firstLossAt: number | null = null;
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (!isConnectionLoss(error) || options.signal?.aborted) throw error;
      const now = performance.now();
      firstLossAt ??= now;
      const elapsedMs = now - firstLossAt;
      const remaining = retryForMs - elapsedMs;
      if (remaining <= 0) throw error;
      const delayMs = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(attempt - 1, 20), remaining);
      options.onRetry?.({ attempt, error, delayMs, elapsedMs: Math.round(elapsedMs) });
      await abortableSleep(delayMs, options.signal);
      if (options.signal?.aborted) throw error;
    }
  }
}

function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
