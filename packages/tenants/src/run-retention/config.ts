import { DAY_MS, HOUR_MS, intervalMsOrNull, readIntegerEnv, type TenantEnv } from '../env.js';
import { TenantsError } from '../errors.js';

/** Environment variables of `run_retention`. */
export const RUN_RETENTION_ENV = {
  retentionDays: 'OXICLOUD_JOB_RUN_RETENTION_DAYS',
  intervalHours: 'OXICLOUD_JOB_RUN_RETENTION_INTERVAL_HOURS',
} as const;

/** Defaults of `run_retention`, in the units of its env vars. */
export const RUN_RETENTION_DEFAULTS = { retentionDays: 90, intervalHours: 24, batchSize: 1000 } as const;

/** Validated configuration of `run_retention`. */
export interface RunRetentionConfig {
  /** Terminal runs (and fixed findings) older than this go. */
  readonly retentionMs: number;
  /** Periodic interval; `null` = on demand only (`…_INTERVAL_HOURS=0`). */
  readonly intervalMs: number | null;
  /** Runs (or findings) deleted per transaction. */
  readonly batchSize: number;
}

/**
 * Reads `run_retention`'s configuration: `OXICLOUD_JOB_RUN_RETENTION_DAYS`
 * (1..3650, default 90) and `OXICLOUD_JOB_RUN_RETENTION_INTERVAL_HOURS`
 * (0..8760, default 24; 0 = on demand only).
 *
 * @throws TenantsError `INVALID_CONFIG` naming the variable, the value and what is allowed.
 */
export function runRetentionConfigFromEnv(env: TenantEnv): RunRetentionConfig {
  const days = readIntegerEnv(env, RUN_RETENTION_ENV.retentionDays, {
    defaultValue: RUN_RETENTION_DEFAULTS.retentionDays,
    min: 1,
    max: 3650,
    unit: 'days',
  });
  const hours = readIntegerEnv(env, RUN_RETENTION_ENV.intervalHours, {
    defaultValue: RUN_RETENTION_DEFAULTS.intervalHours,
    min: 0,
    max: 24 * 365,
    unit: 'hours',
    note: '0 = no periodic run, on demand only',
  });
  return {
    retentionMs: days * DAY_MS,
    intervalMs: intervalMsOrNull(hours, HOUR_MS),
    batchSize: RUN_RETENTION_DEFAULTS.batchSize,
  };
}

/** Checks a config built by hand (the factory calls it). */
export function assertRunRetentionConfig(config: RunRetentionConfig): void {
  const { retentionMs, intervalMs, batchSize } = config;
  if (!(Number.isSafeInteger(retentionMs) && retentionMs > 0)) {
    throw new TenantsError('INVALID_CONFIG', `run_retention retentionMs=${retentionMs}: expected ms > 0`);
  }
  if (intervalMs !== null && !(Number.isSafeInteger(intervalMs) && intervalMs > 0)) {
    throw new TenantsError(
      'INVALID_CONFIG',
      `run_retention intervalMs=${intervalMs}: expected null or ms > 0`,
    );
  }
  if (!(Number.isSafeInteger(batchSize) && batchSize >= 1)) {
    throw new TenantsError(
      'INVALID_CONFIG',
      `run_retention batchSize=${batchSize}: expected a whole number >= 1`,
    );
  }
}
