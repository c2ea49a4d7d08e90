import { MISFIRE_POLICIES, type MisfirePolicy } from '@oxicloud/scheduler';
import { ServerError } from '../server-error.js';

type Env = Readonly<Record<string, string | undefined>>;

/** How this node takes part in the cluster (every server is a node, even alone). */
export interface ClusterConfig {
  /** `OXICLOUD_NODE_HEARTBEAT_SECONDS` in ms. */
  readonly heartbeatMs: number;
  /** `OXICLOUD_NODE_PRUNE_SECONDS` in ms: a node silent this long is deleted. */
  readonly pruneAfterMs: number;
  /** `OXICLOUD_PERIODIC_LEASE_SECONDS` in ms: how long a periodic job's run is held without renewal. */
  readonly periodicLeaseMs: number;
  /** `OXICLOUD_PERIODIC_HISTORY_DAYS` in ms: periodic run history kept. */
  readonly historyRetentionMs: number;
  /** The misfire policy of a job: `OXICLOUD_JOB_<NAME>_MISFIRE`, else `skip`. */
  misfireOf(job: string): MisfirePolicy;
}

/** The defaults, in the unit of each variable. */
export const CLUSTER_CONFIG_DEFAULTS = {
  heartbeatSeconds: 5,
  pruneSeconds: 300,
  periodicLeaseSeconds: 30,
  historyDays: 30,
} as const;

function wholeNumber(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max: number,
  unit: string,
): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ServerError(
      'BAD_CONFIG',
      `${name}=${JSON.stringify(raw)} is not allowed: expected a whole number of ${unit} from ${min} to ${max}; ` +
        `unset it for the default ${fallback}`,
    );
  }
  return value;
}

/** The env name of a job's misfire policy: `OXICLOUD_JOB_<NAME>_MISFIRE`. */
export function misfireEnvName(job: string): string {
  return `OXICLOUD_JOB_${job.toUpperCase()}_MISFIRE`;
}

/**
 * Reads the cluster variables, each validated with a message naming the
 * variable, the bad value and what is allowed (ServerError `BAD_CONFIG`).
 * `OXICLOUD_JOB_<NAME>_MISFIRE` is read per job when it registers.
 */
export function clusterConfigFromEnv(env: Env): ClusterConfig {
  const heartbeatSeconds = wholeNumber(
    env,
    'OXICLOUD_NODE_HEARTBEAT_SECONDS',
    CLUSTER_CONFIG_DEFAULTS.heartbeatSeconds,
    1,
    300,
    'seconds',
  );
  const pruneSeconds = wholeNumber(
    env,
    'OXICLOUD_NODE_PRUNE_SECONDS',
    CLUSTER_CONFIG_DEFAULTS.pruneSeconds,
    2,
    604_800,
    'seconds',
  );
  if (pruneSeconds < 2 * heartbeatSeconds) {
    throw new ServerError(
      'BAD_CONFIG',
      `OXICLOUD_NODE_PRUNE_SECONDS=${pruneSeconds} is not allowed: it must be at least twice ` +
        `OXICLOUD_NODE_HEARTBEAT_SECONDS (${heartbeatSeconds}), or live nodes would be pruned`,
    );
  }
  const leaseSeconds = wholeNumber(
    env,
    'OXICLOUD_PERIODIC_LEASE_SECONDS',
    CLUSTER_CONFIG_DEFAULTS.periodicLeaseSeconds,
    2,
    86_400,
    'seconds',
  );
  const historyDays = wholeNumber(
    env,
    'OXICLOUD_PERIODIC_HISTORY_DAYS',
    CLUSTER_CONFIG_DEFAULTS.historyDays,
    1,
    3_650,
    'days',
  );
  return {
    heartbeatMs: heartbeatSeconds * 1000,
    pruneAfterMs: pruneSeconds * 1000,
    periodicLeaseMs: leaseSeconds * 1000,
    historyRetentionMs: historyDays * 86_400_000,
    misfireOf(job) {
      const name = misfireEnvName(job);
      const raw = env[name];
      if (raw === undefined || raw.trim() === '') return 'skip';
      const value = raw.trim().toLowerCase();
      if (!(MISFIRE_POLICIES as readonly string[]).includes(value)) {
        throw new ServerError(
          'BAD_CONFIG',
          `${name}=${JSON.stringify(raw)} is not allowed: expected ${MISFIRE_POLICIES.join(' or ')} ` +
            "(skip: no catch-up after slots missed while no node was up; once: one catch-up run); unset it for 'skip'",
        );
      }
      return value as MisfirePolicy;
    },
  };
}
