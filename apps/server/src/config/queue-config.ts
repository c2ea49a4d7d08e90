import { ServerError } from '../server-error.js';

type Env = Readonly<Record<string, string | undefined>>;

/** How long a queue's oldest row may stay at its head before the queue counts as stalled (0 = no alert). */
export const QUEUE_STALL_ENV = 'OXIJOBS_QUEUE_STALL_SECONDS';
/** How often OxiCloud's queues are read and a stall is mailed (0 = only at scrapes, never mailed). */
export const QUEUE_CHECK_INTERVAL_ENV = 'OXIJOBS_QUEUE_CHECK_INTERVAL_SECONDS';

/** The defaults, in seconds. */
export const QUEUE_CONFIG_DEFAULTS = {
  /** 1 h beside OxiCloud, whose drainers empty the queues every 500 ms (tree ETags) to 60 s (fact sheet §6). */
  stallSeconds: 3_600,
  checkIntervalSeconds: 60,
} as const;

/** How the server watches OxiCloud's queues (`QueueMonitor`). */
export interface QueueMonitorConfig {
  /** {@link QUEUE_STALL_ENV} in ms; `null` = no stall is judged and nothing is mailed. */
  readonly stallMs: number | null;
  /** {@link QUEUE_CHECK_INTERVAL_ENV} in ms; 0 = no check of its own (the gauges still read at each scrape). */
  readonly checkIntervalMs: number;
  /** One sentence for the boot line: what is watched and when a mail goes. */
  readonly summary: string;
}

function seconds(env: Env, name: string, max: number, problems: string[]): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value > max) {
    problems.push(
      `${name}=${JSON.stringify(raw)} is not allowed: expected a whole number of seconds from 0 to ${max} ` +
        '(0 = off); unset it for the default',
    );
    return undefined;
  }
  return value;
}

/**
 * Reads {@link QUEUE_STALL_ENV} (whole seconds, 0 to 604800 = 7 days; 0 =
 * no alert) and {@link QUEUE_CHECK_INTERVAL_ENV} (whole seconds, 0 to 86400;
 * default 60). The stall threshold defaults to 3600 beside OxiCloud
 * (`besideOxiCloud`, sidecar mode) and to none on a database of the
 * engine's own, where no OxiCloud runs to drain the queues (they only grow
 * there); set, it applies in both.
 *
 * @throws ServerError `BAD_CONFIG` naming each bad variable, its value and what is allowed.
 */
export function queueMonitorConfigFromEnv(
  env: Env,
  options: { readonly besideOxiCloud: boolean },
): QueueMonitorConfig {
  const problems: string[] = [];
  const stall = seconds(env, QUEUE_STALL_ENV, 604_800, problems);
  const check = seconds(env, QUEUE_CHECK_INTERVAL_ENV, 86_400, problems);
  if (problems.length > 0) {
    throw new ServerError('BAD_CONFIG', `invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  const stallSeconds = stall ?? (options.besideOxiCloud ? QUEUE_CONFIG_DEFAULTS.stallSeconds : 0);
  const checkSeconds = check ?? QUEUE_CONFIG_DEFAULTS.checkIntervalSeconds;
  const watched = "OxiCloud's queues (storage.tree_etag_dirty, storage.search_index_dirty) on /metrics";
  let summary: string;
  if (stallSeconds === 0) {
    summary =
      stall === undefined
        ? `${watched}; no stall alert on a database of the engine's own, where no OxiCloud drains them (${QUEUE_STALL_ENV} sets one)`
        : `${watched}; no stall alert (${QUEUE_STALL_ENV}=0)`;
  } else if (checkSeconds === 0) {
    summary = `${watched}; stalls are judged at scrapes only and never mailed (${QUEUE_CHECK_INTERVAL_ENV}=0)`;
  } else {
    summary = `${watched}; a queue_stalled mail when a queue's oldest row stays ${stallSeconds} s (${QUEUE_STALL_ENV}), checked every ${checkSeconds} s`;
  }
  return {
    stallMs: stallSeconds === 0 ? null : stallSeconds * 1000,
    checkIntervalMs: checkSeconds * 1000,
    summary,
  };
}
