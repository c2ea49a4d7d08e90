import { DAY_MS, readIntegerEnv, type TenantEnv } from '../env.js';

/** Environment variables of `grants_consistency`. */
export const GRANTS_CONSISTENCY_ENV = {
  lingerMarginDays: 'OXICLOUD_GRANTS_CONSISTENCY_LINGER_MARGIN_DAYS',
} as const;

/** Defaults of `grants_consistency`, in the units of its env vars. */
export const GRANTS_CONSISTENCY_DEFAULTS = {
  lingerMarginDays: 7,
} as const;

/** Validated configuration of `grants_consistency`. */
export interface GrantsConsistencyConfig {
  /**
   * How long past `grant_cleanup`'s grace an expired grant may still be
   * present before it is `expired_grant_lingering`.
   */
  readonly lingerMarginMs: number;
}

/**
 * Reads `grants_consistency`'s configuration from the environment
 * (`OXICLOUD_GRANTS_CONSISTENCY_LINGER_MARGIN_DAYS`, 0–365, default 7).
 *
 * @throws TenantsError `INVALID_CONFIG` naming the variable, the value and what is allowed.
 */
export function grantsConsistencyConfigFromEnv(env: TenantEnv): GrantsConsistencyConfig {
  const days = readIntegerEnv(env, GRANTS_CONSISTENCY_ENV.lingerMarginDays, {
    defaultValue: GRANTS_CONSISTENCY_DEFAULTS.lingerMarginDays,
    min: 0,
    max: 365,
    unit: 'days',
  });
  return { lingerMarginMs: days * DAY_MS };
}
