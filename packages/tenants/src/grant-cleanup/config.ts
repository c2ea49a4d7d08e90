import { HOUR_MS, intervalMsOrNull, readIntegerEnv, SECOND_MS, type TenantEnv } from '../env.js';
import { TenantsError } from '../errors.js';

/**
 * Environment variables of `grant_cleanup`. The interval is the engine's own
 * name (`OXIJOBS_…`): `OXICLOUD_GRANT_CLEANUP_INTERVAL_HOURS` is OxiCloud's,
 * the period of OxiCloud's own grant cleanup daemon (minimum 1 h), and never
 * sets this job's. The grace and batch names are the engine's alone
 * (OxiCloud's grace is `OXICLOUD_GRANT_CLEANUP_GRACE_DAYS`).
 */
export const GRANT_CLEANUP_ENV = {
  intervalHours: 'OXIJOBS_GRANT_CLEANUP_INTERVAL_HOURS',
  graceSeconds: 'OXICLOUD_GRANT_CLEANUP_GRACE_SECONDS',
  batchSize: 'OXICLOUD_GRANT_CLEANUP_BATCH_SIZE',
} as const;

/** Defaults of `grant_cleanup`, in the units of its env vars. */
export const GRANT_CLEANUP_DEFAULTS = {
  intervalHours: 24,
  graceSeconds: 86_400,
  batchSize: 1000,
} as const;

/** Validated configuration of `grant_cleanup`. */
export interface GrantCleanupConfig {
  /** Periodic interval; `null` = on demand only (`OXIJOBS_GRANT_CLEANUP_INTERVAL_HOURS=0`). */
  readonly intervalMs: number | null;
  /** A grant is deleted once `expires_at` is older than this; `force` uses 0. */
  readonly graceMs: number;
  /** Grants deleted per statement. */
  readonly batchSize: number;
}

/**
 * Reads `grant_cleanup`'s configuration from the environment.
 *
 * @throws TenantsError `INVALID_CONFIG` naming the variable, the value and what is allowed.
 */
export function grantCleanupConfigFromEnv(env: TenantEnv): GrantCleanupConfig {
  const intervalHours = readIntegerEnv(env, GRANT_CLEANUP_ENV.intervalHours, {
    defaultValue: GRANT_CLEANUP_DEFAULTS.intervalHours,
    min: 0,
    max: 24 * 365,
    unit: 'hours',
    note: '0 = no periodic run, on demand only',
  });
  const graceSeconds = readIntegerEnv(env, GRANT_CLEANUP_ENV.graceSeconds, {
    defaultValue: GRANT_CLEANUP_DEFAULTS.graceSeconds,
    min: 0,
    max: 31_536_000,
    unit: 'seconds',
  });
  const batchSize = readIntegerEnv(env, GRANT_CLEANUP_ENV.batchSize, {
    defaultValue: GRANT_CLEANUP_DEFAULTS.batchSize,
    min: 1,
    max: 100_000,
    unit: 'rows',
  });
  return {
    intervalMs: intervalMsOrNull(intervalHours, HOUR_MS),
    graceMs: graceSeconds * SECOND_MS,
    batchSize,
  };
}

/** Checks a config built by hand (the factory calls it). */
export function assertGrantCleanupConfig(config: GrantCleanupConfig): void {
  const { intervalMs, graceMs, batchSize } = config;
  if (intervalMs !== null && !(Number.isSafeInteger(intervalMs) && intervalMs > 0)) {
    throw new TenantsError(
      'INVALID_CONFIG',
      `grant_cleanup intervalMs=${intervalMs}: expected null or ms > 0`,
    );
  }
  if (!(Number.isSafeInteger(graceMs) && graceMs >= 0)) {
    throw new TenantsError(
      'INVALID_CONFIG',
      `grant_cleanup graceMs=${graceMs}: expected a whole number of ms >= 0`,
    );
  }
  if (!(Number.isSafeInteger(batchSize) && batchSize >= 1)) {
    throw new TenantsError(
      'INVALID_CONFIG',
      `grant_cleanup batchSize=${batchSize}: expected a whole number >= 1`,
    );
  }
}
