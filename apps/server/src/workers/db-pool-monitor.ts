import type { Logger } from '@oxicloud/scheduler';
import { ServerError } from '../server-error.js';

/** Environment variable of the pool monitor's period. */
export const DB_POOL_MONITOR_INTERVAL_ENV = 'OXICLOUD_DB_POOL_MONITOR_INTERVAL_SECONDS';
/** Default period of the pool monitor, in seconds. */
export const DB_POOL_MONITOR_DEFAULT_SECONDS = 30;
/** Log target of every pool-monitor line. */
export const DB_POOL_MONITOR_TARGET = 'oxicloud::db_pool_monitor';

/** The counters of `pg`'s Pool the monitor reads (a `pg.Pool` fits as it is). */
export interface PoolStats {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
}

/** Options of {@link startDbPoolMonitor}. */
export interface DbPoolMonitorOptions {
  readonly pool: PoolStats;
  readonly logger: Logger;
  /** Period in milliseconds; `0` disables the monitor (nothing is scheduled). */
  readonly intervalMs: number;
}

/**
 * Reads `OXICLOUD_DB_POOL_MONITOR_INTERVAL_SECONDS` (whole seconds, default
 * 30, `0` disables) and returns the period in milliseconds.
 *
 * @throws ServerError `BAD_CONFIG` naming the variable, the value and what is allowed.
 */
export function dbPoolMonitorIntervalMsFromEnv(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env[DB_POOL_MONITOR_INTERVAL_ENV];
  if (raw === undefined || raw.trim() === '') return DB_POOL_MONITOR_DEFAULT_SECONDS * 1000;
  const seconds = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isSafeInteger(seconds) || seconds > 86_400) {
    throw new ServerError(
      'BAD_CONFIG',
      `${DB_POOL_MONITOR_INTERVAL_ENV}=${JSON.stringify(raw)} is not allowed: expected a whole number of seconds ` +
        `from 0 to 86400 (0 disables the monitor); unset it for the default ${DB_POOL_MONITOR_DEFAULT_SECONDS}`,
    );
  }
  return seconds * 1000;
}

/**
 * Starts `db_pool_monitor`, a core worker that stays OUTSIDE the job
 * registry (job-registry.md: nobody would trigger "log stats now"). Every
 * `intervalMs` it logs the pool's `totalCount`, `idleCount` and
 * `waitingCount` at info level with `target: 'oxicloud::db_pool_monitor'`
 * (`event: 'db_pool.stats'`), and at warn level while clients are waiting
 * for a connection. The timer is `unref`ed: it never keeps the process
 * alive. Returns a stop function (idempotent); with `intervalMs = 0`
 * nothing is started and stop is a no-op.
 *
 * @example
 * ```ts
 * const stop = startDbPoolMonitor({ pool, logger, intervalMs: dbPoolMonitorIntervalMsFromEnv(process.env) });
 * // on shutdown:
 * stop();
 * ```
 */
export function startDbPoolMonitor(options: DbPoolMonitorOptions): () => void {
  const { pool, logger, intervalMs } = options;
  if (!Number.isSafeInteger(intervalMs) || intervalMs < 0) {
    throw new ServerError(
      'BAD_CONFIG',
      `db_pool_monitor intervalMs=${intervalMs}: expected whole ms >= 0 (0 disables)`,
    );
  }
  if (intervalMs === 0) {
    logger.info(
      { target: DB_POOL_MONITOR_TARGET, event: 'db_pool.monitor_disabled' },
      'db pool monitor disabled',
    );
    return () => undefined;
  }
  const timer = setInterval(() => {
    const fields = {
      target: DB_POOL_MONITOR_TARGET,
      event: 'db_pool.stats',
      totalCount: pool.totalCount,
      idleCount: pool.idleCount,
      waitingCount: pool.waitingCount,
    };
    if (fields.waitingCount > 0) logger.warn(fields, 'db pool has clients waiting for a connection');
    else logger.info(fields, 'db pool stats');
  }, intervalMs);
  timer.unref();
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
  };
}
