import { ClusterError } from './cluster-error.js';
import { type EngineTables, engineTables } from './engine-tables.js';
import { dateOrNull, type Queryable } from './queryable.js';

/** One run of a Part 1 job, as `jobs.periodic_runs` holds it. */
export interface PeriodicRun {
  readonly id: number;
  readonly job: string;
  /** The tick's slot (database clock); `null` for a trigger. */
  readonly slot: Date | null;
  readonly source: 'tick' | 'trigger';
  readonly node: string;
  readonly startedAt: Date;
  readonly finishedAt: Date;
  readonly outcome: 'ok' | 'err';
  /** The primary scalar of an `ok` run. */
  readonly count: number | null;
  /** `handler`, `timeout` or `panicked` for an `err` run. */
  readonly cause: string | null;
  /** The message of an `err` run. */
  readonly message: string | null;
  readonly extra: Readonly<Record<string, unknown>>;
}

/** A Part 1 job's shared state: its last slot, missed slots, who runs it, its last run. */
export interface PeriodicJobState {
  readonly job: string;
  readonly lastSlotAt: Date | null;
  readonly missedSlots: number;
  /** The node that runs it now (lease not expired), else `null`. */
  readonly runningOn: string | null;
  readonly runningSince: Date | null;
  readonly lastRun: PeriodicRun | null;
}

/** Options of {@link PgPeriodicHistory}. */
export interface PgPeriodicHistoryOptions {
  readonly pool: Queryable;
  /**
   * The Postgres schema of the cluster tables: the one
   * `migrate(db, { schema })` was given, e.g. `oxijobs` beside a real OxiCloud.
   * @defaultValue `jobs`
   */
  readonly schema?: string;
}

/** The largest page {@link PgPeriodicHistory.runs} answers. */
export const MAX_PERIODIC_RUNS_PAGE = 500;

/**
 * Reads what every node of the cluster wrote about Part 1 jobs:
 * `jobs.periodic_state` and `jobs.periodic_runs`. Bounded queries only (one
 * row per job; a page of at most {@link MAX_PERIODIC_RUNS_PAGE} runs).
 */
export class PgPeriodicHistory {
  readonly #pool: Queryable;
  readonly #tables: EngineTables;

  /** @throws {ClusterError} `INVALID_OPTIONS` for a `schema` the engine does not take. */
  constructor(options: PgPeriodicHistoryOptions) {
    this.#pool = options.pool;
    this.#tables = engineTables(options.schema);
  }

  /** Every job with a state row, with its newest run. */
  async states(): Promise<PeriodicJobState[]> {
    const { rows } = await this.#pool.query(
      `SELECT s.job, s.last_slot, s.missed_slots::text AS missed_slots,
              CASE WHEN s.lease_until >= now() THEN s.owner_node END AS running_on,
              CASE WHEN s.lease_until >= now() THEN s.running_since END AS running_since,
              r.id AS r_id, r.slot AS r_slot, r.source AS r_source, r.node AS r_node,
              r.started_at AS r_started_at, r.finished_at AS r_finished_at, r.outcome AS r_outcome,
              r.count AS r_count, r.cause AS r_cause, r.message AS r_message, r.extra AS r_extra
         FROM ${this.#tables.periodicState} s
         LEFT JOIN LATERAL (
           SELECT * FROM ${this.#tables.periodicRuns} pr WHERE pr.job = s.job ORDER BY pr.finished_at DESC, pr.id DESC LIMIT 1
         ) r ON true
        ORDER BY s.job`,
    );
    return rows.map((row) => ({
      job: String(row['job']),
      lastSlotAt: dateOrNull(row['last_slot']),
      missedSlots: Number(row['missed_slots']),
      runningOn: row['running_on'] == null ? null : String(row['running_on']),
      runningSince: dateOrNull(row['running_since']),
      lastRun: row['r_id'] == null ? null : runOf(row, 'r_'),
    }));
  }

  /** A job's runs, newest first; `offset` runs skipped. */
  async runs(
    job: string,
    options: { readonly limit: number; readonly offset?: number },
  ): Promise<PeriodicRun[]> {
    const limit = options.limit;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PERIODIC_RUNS_PAGE) {
      throw new ClusterError(
        'INVALID_OPTIONS',
        `limit must be an integer from 1 to ${MAX_PERIODIC_RUNS_PAGE}, got ${String(limit)}`,
      );
    }
    const { rows } = await this.#pool.query(
      `SELECT * FROM ${this.#tables.periodicRuns}
        WHERE job = $1
        ORDER BY id DESC LIMIT $2 OFFSET $3`,
      [job, limit, options.offset ?? 0],
    );
    return rows.map((row) => runOf(row, ''));
  }
}

function runOf(row: Record<string, unknown>, prefix: string): PeriodicRun {
  const at = (name: string) => row[`${prefix}${name}`];
  const extra = at('extra');
  return {
    id: Number(at('id')),
    job: String(at('job') ?? row['job']),
    slot: dateOrNull(at('slot')),
    source: at('source') === 'trigger' ? 'trigger' : 'tick',
    node: String(at('node')),
    startedAt: dateOrNull(at('started_at')) ?? new Date(0),
    finishedAt: dateOrNull(at('finished_at')) ?? new Date(0),
    outcome: at('outcome') === 'err' ? 'err' : 'ok',
    count: at('count') == null ? null : Number(at('count')),
    cause: at('cause') == null ? null : String(at('cause')),
    message: at('message') == null ? null : String(at('message')),
    extra: typeof extra === 'object' && extra !== null ? (extra as Record<string, unknown>) : {},
  };
}
