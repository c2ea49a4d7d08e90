import { ServerError } from '../server-error.js';

type Env = Readonly<Record<string, string | undefined>>;

/** One cadence a job is held to: a success at least every `maxAgeMs`. */
export interface FreshnessTarget {
  readonly job: string;
  /** `true` for the deep cadence of `storage_consistency` (only deep runs count). */
  readonly deep: boolean;
  readonly maxAgeMs: number;
}

/** A job as the policy sees it: its name and its interval (`null` = on demand). */
export interface CadenceSource {
  readonly name: string;
  readonly intervalMs: number | null;
  /** Declared a consistency check (`capabilities.check`): held to a weekly cadence by default. */
  readonly check: boolean;
  /** Declared a deep mode: a check with one is also held to a deep cadence. */
  readonly deep: boolean;
}

const HOUR_MS = 3_600_000;
/** Every consistency check: a success at least weekly. */
export const CONSISTENCY_MAX_AGE_HOURS = 7 * 24;
/** A deep run of a check with a deep mode (`storage_consistency` re-hashes every blob): at least every 30 days. */
export const DEEP_STORAGE_CONSISTENCY_MAX_AGE_HOURS = 30 * 24;
/** The job whose deep runs have a cadence of their own. */
/** A job is overdue when no success came within this many times its cadence. */
export const OVERDUE_FACTOR = 1.5;

/** `OXICLOUD_JOB_<NAME>_MAX_AGE_HOURS` (or `…_DEEP_MAX_AGE_HOURS` for a deep cadence). */
export function maxAgeVariable(job: string, deep = false): string {
  return `OXICLOUD_JOB_${job.toUpperCase()}${deep ? '_DEEP' : ''}_MAX_AGE_HOURS`;
}

function readHours(env: Env, name: string, fallback: number | null): number | null {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = /^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isFinite(value) || value > 87_600) {
    throw new ServerError(
      'BAD_CONFIG',
      `${name}=${JSON.stringify(raw)} is not allowed: expected hours from 0 to 87600 (decimals allowed, ` +
        '0 = no expected cadence); unset it for the default',
    );
  }
  return value === 0 ? null : value;
}

/**
 * The cadence each job is held to. A periodic job: its interval. An
 * on-demand job: `OXICLOUD_JOB_<NAME>_MAX_AGE_HOURS` (each job declaring a
 * consistency check defaults to 7 days; `dedup_gc`, `consistency_batch`,
 * `storage_migration` and the re-extract jobs to none). The variable also
 * overrides a periodic job's interval; 0 means no cadence. A check with a
 * deep mode (`storage_consistency`) is also held to a deep cadence,
 * `OXICLOUD_JOB_<NAME>_DEEP_MAX_AGE_HOURS` (default 30 days).
 *
 * @throws ServerError `BAD_CONFIG` naming the variable and what is allowed.
 */
export function freshnessTargets(jobs: readonly CadenceSource[], env: Env): FreshnessTarget[] {
  const targets: FreshnessTarget[] = [];
  const problems: string[] = [];
  const hoursOf = (name: string, fallback: number | null): number | null => {
    try {
      return readHours(env, name, fallback);
    } catch (error) {
      problems.push((error as Error).message);
      return null;
    }
  };
  for (const job of jobs) {
    const fallback =
      job.intervalMs !== null ? job.intervalMs / HOUR_MS : job.check ? CONSISTENCY_MAX_AGE_HOURS : null;
    const hours = hoursOf(maxAgeVariable(job.name), fallback);
    if (hours !== null) targets.push({ job: job.name, deep: false, maxAgeMs: Math.round(hours * HOUR_MS) });
    if (job.check && job.deep) {
      const deep = hoursOf(maxAgeVariable(job.name, true), DEEP_STORAGE_CONSISTENCY_MAX_AGE_HOURS);
      if (deep !== null) targets.push({ job: job.name, deep: true, maxAgeMs: Math.round(deep * HOUR_MS) });
    }
  }
  if (problems.length > 0) {
    throw new ServerError('BAD_CONFIG', `invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  return targets;
}

export const FRESHNESS_CHECK_INTERVAL_ENV = 'OXICLOUD_FRESHNESS_CHECK_INTERVAL_SECONDS';
export const FRESHNESS_CHECK_DEFAULT_SECONDS = 60;

/**
 * Reads `OXICLOUD_FRESHNESS_CHECK_INTERVAL_SECONDS` (whole seconds, default
 * 60, 0 = no overdue mails) and returns milliseconds.
 *
 * @throws ServerError `BAD_CONFIG` naming the variable and what is allowed.
 */
export function freshnessCheckIntervalMsFromEnv(env: Env): number {
  const raw = env[FRESHNESS_CHECK_INTERVAL_ENV];
  if (raw === undefined || raw.trim() === '') return FRESHNESS_CHECK_DEFAULT_SECONDS * 1000;
  const seconds = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isSafeInteger(seconds) || seconds > 86_400) {
    throw new ServerError(
      'BAD_CONFIG',
      `${FRESHNESS_CHECK_INTERVAL_ENV}=${JSON.stringify(raw)} is not allowed: expected a whole number of seconds ` +
        `from 0 to 86400 (0 = no overdue mails); unset it for the default ${FRESHNESS_CHECK_DEFAULT_SECONDS}`,
    );
  }
  return seconds * 1000;
}
