import { DAY_MS, HOUR_MS, intervalMsOrNull, readIntegerEnv, type TenantEnv } from '../env.js';
import { TenantsError } from '../errors.js';

/**
 * Environment variables of `trash_cleanup`. `OXICLOUD_TRASH_RETENTION_DAYS`
 * is also OxiCloud's documented name with the same meaning (trash older than
 * this many days is purged; OxiCloud itself keeps 30 days whatever it says),
 * so the engine mirrors OxiCloud's policy from its environment file; on
 * OxiCloud's storage domain a value under 30 still purges nothing younger
 * than 30 days. The other two names are the engine's alone.
 */
export const TRASH_CLEANUP_ENV = {
  intervalHours: 'OXICLOUD_TRASH_CLEANUP_INTERVAL_HOURS',
  retentionDays: 'OXICLOUD_TRASH_RETENTION_DAYS',
  batchSize: 'OXICLOUD_TRASH_CLEANUP_BATCH_SIZE',
} as const;

/** Defaults of `trash_cleanup`, in the units of its env vars. */
export const TRASH_CLEANUP_DEFAULTS = {
  intervalHours: 24,
  retentionDays: 30,
  batchSize: 500,
} as const;

/** Validated configuration of `trash_cleanup`. */
export interface TrashCleanupConfig {
  /** Periodic interval; `null` = on demand only (`OXICLOUD_TRASH_CLEANUP_INTERVAL_HOURS=0`). */
  readonly intervalMs: number | null;
  /** Trashed items older than this many days are purged. */
  readonly retentionDays: number;
  /** Trashed roots (folders) or files per transaction. */
  readonly batchSize: number;
}

/**
 * Reads `trash_cleanup`'s configuration from the environment.
 *
 * @throws TenantsError `INVALID_CONFIG` naming the variable, the value and what is allowed.
 * @example
 * ```ts
 * const config = trashCleanupConfigFromEnv(process.env);
 * ```
 */
export function trashCleanupConfigFromEnv(env: TenantEnv): TrashCleanupConfig {
  const intervalHours = readIntegerEnv(env, TRASH_CLEANUP_ENV.intervalHours, {
    defaultValue: TRASH_CLEANUP_DEFAULTS.intervalHours,
    min: 0,
    max: 24 * 365,
    unit: 'hours',
    note: '0 = no periodic run, on demand only',
  });
  const retentionDays = readIntegerEnv(env, TRASH_CLEANUP_ENV.retentionDays, {
    defaultValue: TRASH_CLEANUP_DEFAULTS.retentionDays,
    min: 0,
    max: 36_500,
    unit: 'days',
    note: '0 = purge everything in the trash',
  });
  const batchSize = readIntegerEnv(env, TRASH_CLEANUP_ENV.batchSize, {
    defaultValue: TRASH_CLEANUP_DEFAULTS.batchSize,
    min: 1,
    max: 100_000,
    unit: 'rows',
  });
  return { intervalMs: intervalMsOrNull(intervalHours, HOUR_MS), retentionDays, batchSize };
}

/** Checks a config built by hand (the factory calls it). */
export function assertTrashCleanupConfig(config: TrashCleanupConfig): void {
  const { intervalMs, retentionDays, batchSize } = config;
  if (intervalMs !== null && !(Number.isSafeInteger(intervalMs) && intervalMs > 0)) {
    throw new TenantsError(
      'INVALID_CONFIG',
      `trash_cleanup intervalMs=${intervalMs}: expected null or ms > 0`,
    );
  }
  if (!(Number.isSafeInteger(retentionDays) && retentionDays >= 0)) {
    throw new TenantsError(
      'INVALID_CONFIG',
      `trash_cleanup retentionDays=${retentionDays}: expected days >= 0`,
    );
  }
  if (!(Number.isSafeInteger(batchSize) && batchSize >= 1)) {
    throw new TenantsError(
      'INVALID_CONFIG',
      `trash_cleanup batchSize=${batchSize}: expected a whole number >= 1`,
    );
  }
}

/** Retention in milliseconds. */
export function retentionMs(config: TrashCleanupConfig): number {
  return config.retentionDays * DAY_MS;
}
