import { DAY_MS, readIntegerEnv, SECOND_MS, type TenantEnv } from '../env.js';
import { TenantsError } from '../errors.js';

/** Environment variables of `dedup_gc`. */
export const DEDUP_GC_ENV = {
  graceSeconds: 'OXICLOUD_DEDUP_GC_GRACE_SECONDS',
  batchSize: 'OXICLOUD_DEDUP_GC_BATCH_SIZE',
  quarantineGraceDays: 'OXICLOUD_DEDUP_GC_QUARANTINE_GRACE_DAYS',
} as const;

/** Defaults of `dedup_gc`, in the units of its env vars. */
export const DEDUP_GC_DEFAULTS = {
  graceSeconds: 3600,
  batchSize: 100,
  quarantineGraceDays: 7,
} as const;

/** Validated configuration of `dedup_gc`. */
export interface DedupGcConfig {
  /** Always `null`: dedup GC runs on demand only (admin trigger, or a peer job). */
  readonly intervalMs: null;
  /** An orphan is collected once `orphaned_at` is older than this; `force` uses 0. */
  readonly graceMs: number;
  /** Blobs locked and deleted per transaction. */
  readonly batchSize: number;
  /**
   * On OxiCloud's storage domain, a quarantined object (bytes of a collected
   * blob, a saved manifest) that nothing wants is purged once it has been in
   * the quarantine this long; `force` does not shorten it. Unused on the
   * engine's own domain (its GC deletes bytes under its marking protocol).
   * @defaultValue 7 days
   */
  readonly quarantineGraceMs?: number;
}

/**
 * Reads `dedup_gc`'s configuration from the environment.
 *
 * @throws TenantsError `INVALID_CONFIG` naming the variable, the value and what is allowed.
 */
export function dedupGcConfigFromEnv(env: TenantEnv): DedupGcConfig {
  const graceSeconds = readIntegerEnv(env, DEDUP_GC_ENV.graceSeconds, {
    defaultValue: DEDUP_GC_DEFAULTS.graceSeconds,
    min: 0,
    max: 31_536_000,
    unit: 'seconds',
  });
  const batchSize = readIntegerEnv(env, DEDUP_GC_ENV.batchSize, {
    defaultValue: DEDUP_GC_DEFAULTS.batchSize,
    min: 1,
    max: 10_000,
    unit: 'blobs',
  });
  const quarantineGraceDays = readIntegerEnv(env, DEDUP_GC_ENV.quarantineGraceDays, {
    defaultValue: DEDUP_GC_DEFAULTS.quarantineGraceDays,
    min: 1,
    max: 3650,
    unit: 'days',
    note: 'how long collected bytes wait in the quarantine before they are purged',
  });
  return {
    intervalMs: null,
    graceMs: graceSeconds * SECOND_MS,
    batchSize,
    quarantineGraceMs: quarantineGraceDays * DAY_MS,
  };
}

/** Checks a config built by hand (the factory calls it). */
export function assertDedupGcConfig(config: DedupGcConfig): void {
  const { graceMs, batchSize, quarantineGraceMs } = config;
  if (!(Number.isSafeInteger(graceMs) && graceMs >= 0)) {
    throw new TenantsError(
      'INVALID_CONFIG',
      `dedup_gc graceMs=${graceMs}: expected a whole number of ms >= 0`,
    );
  }
  if (!(Number.isSafeInteger(batchSize) && batchSize >= 1)) {
    throw new TenantsError('INVALID_CONFIG', `dedup_gc batchSize=${batchSize}: expected a whole number >= 1`);
  }
  if (
    quarantineGraceMs !== undefined &&
    !(Number.isSafeInteger(quarantineGraceMs) && quarantineGraceMs >= 0)
  ) {
    throw new TenantsError(
      'INVALID_CONFIG',
      `dedup_gc quarantineGraceMs=${quarantineGraceMs}: expected a whole number of ms >= 0 (or leave it out for 7 days)`,
    );
  }
}

/** The quarantine grace of `config`, its default filled in. */
export function quarantineGraceMsOf(config: DedupGcConfig): number {
  return config.quarantineGraceMs ?? DEDUP_GC_DEFAULTS.quarantineGraceDays * DAY_MS;
}
