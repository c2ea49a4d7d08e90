import { intervalMsOrNull, readIntegerEnv, SECOND_MS, type TenantEnv } from '../env.js';
import { TenantsError } from '../errors.js';

/** Environment variables of `storage_reconcile`. */
export const STORAGE_RECONCILE_ENV = {
  intervalSeconds: 'OXICLOUD_STORAGE_USAGE_RECONCILE_INTERVAL_SECONDS',
} as const;

/** Defaults of `storage_reconcile`, in the units of its env vars. */
export const STORAGE_RECONCILE_DEFAULTS = {
  intervalSeconds: 600,
} as const;

/** Validated configuration of `storage_reconcile`. */
export interface StorageReconcileConfig {
  /** Periodic interval; `null` = on demand only (`…_INTERVAL_SECONDS=0`). */
  readonly intervalMs: number | null;
}

/**
 * Reads `storage_reconcile`'s configuration from the environment.
 *
 * @throws TenantsError `INVALID_CONFIG` naming the variable, the value and what is allowed.
 */
export function storageReconcileConfigFromEnv(env: TenantEnv): StorageReconcileConfig {
  const intervalSeconds = readIntegerEnv(env, STORAGE_RECONCILE_ENV.intervalSeconds, {
    defaultValue: STORAGE_RECONCILE_DEFAULTS.intervalSeconds,
    min: 0,
    max: 31_536_000,
    unit: 'seconds',
    note: '0 = no periodic run, on demand only',
  });
  return { intervalMs: intervalMsOrNull(intervalSeconds, SECOND_MS) };
}

/** Checks a config built by hand (the factory calls it). */
export function assertStorageReconcileConfig(config: StorageReconcileConfig): void {
  const { intervalMs } = config;
  if (intervalMs !== null && !(Number.isSafeInteger(intervalMs) && intervalMs > 0)) {
    throw new TenantsError(
      'INVALID_CONFIG',
      `storage_reconcile intervalMs=${intervalMs}: expected null or ms > 0`,
    );
  }
}
