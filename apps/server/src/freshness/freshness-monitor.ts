import type { AlertResult, JobOverdueEvent } from '@oxicloud/alerts';
import type { Logger } from '@oxicloud/scheduler';
import { PeriodicCheck } from '../workers/periodic-check.js';
import type { FreshnessTarget } from './freshness-policy.js';
import { evaluateFreshness, type FreshnessState } from './job-freshness.js';
import type { JobFreshnessRecord, PgJobFreshnessStore } from './job-freshness-store.js';

/** The log target of the freshness lines. */
export const FRESHNESS_TARGET = 'oxicloud::freshness';

/** The alert port the monitor mails through (`JobAlerts` as it is). */
export interface OverdueAlerts {
  jobOverdue(event: JobOverdueEvent): Promise<AlertResult>;
}

/** Options of {@link FreshnessMonitor}. */
export interface FreshnessMonitorOptions {
  readonly store: PgJobFreshnessStore;
  readonly targets: readonly FreshnessTarget[];
  /** Every job name to register on this database (with or without a cadence). */
  readonly jobs: readonly string[];
  readonly alerts: OverdueAlerts;
  readonly logger: Logger;
  /** How often overdue jobs are looked for (0 = never by itself). */
  readonly checkIntervalMs: number;
  /** @defaultValue `() => new Date()` */
  readonly now?: () => Date;
}

/**
 * Freshness as a core worker (outside the job registry, like the pool
 * monitor): registers every job on the database at start, reads the
 * states for the listing and the metrics, and every `checkIntervalMs` mails
 * `job_overdue` once per overdue episode (claimed in the database, so one
 * mail for the whole cluster; a success clears the claim).
 */
export class FreshnessMonitor {
  readonly #o: FreshnessMonitorOptions;
  readonly #now: () => Date;
  readonly #periodic: PeriodicCheck;

  constructor(options: FreshnessMonitorOptions) {
    this.#o = options;
    this.#now = options.now ?? (() => new Date());
    this.#periodic = new PeriodicCheck(
      () => this.#check(),
      (error) => {
        this.#o.logger.warn(
          { target: FRESHNESS_TARGET, event: 'freshness.check_failed', error: error.message },
          'could not check job freshness',
        );
      },
    );
  }

  /** Registers the jobs (first registration time kept) and starts the periodic check. */
  async start(): Promise<void> {
    await this.#o.store.register(this.#o.jobs);
    this.#periodic.start(this.#o.checkIntervalMs);
  }

  stop(): Promise<void> {
    return this.#periodic.stop();
  }

  /** Every target's state now, from the database. */
  async states(): Promise<FreshnessState[]> {
    return (await this.snapshot()).states;
  }

  /** The rows of the database and every target's state now, from one read. */
  async snapshot(): Promise<{ records: JobFreshnessRecord[]; states: FreshnessState[] }> {
    const records = await this.#o.store.list();
    return { records, states: evaluateFreshness(this.#o.targets, records, this.#now()) };
  }

  /** One pass: mails each overdue episode not mailed yet. Never rejects; overlapping calls share one pass. */
  check(): Promise<void> {
    return this.#periodic.run();
  }

  async #check(): Promise<void> {
    for (const state of await this.states()) {
      if (!state.overdue || state.alertedAt !== null) continue;
      if (!(await this.#o.store.claimOverdueAlert(state.job, state.deep, state.lastSuccessAt))) continue;
      this.#o.logger.warn(
        {
          target: FRESHNESS_TARGET,
          event: 'job.overdue',
          job: state.job,
          deep: state.deep,
          max_age_ms: state.maxAgeMs,
          last_success_at: state.lastSuccessAt?.toISOString() ?? null,
          due_by: state.dueBy.toISOString(),
        },
        `${state.job}${state.deep ? ' (deep)' : ''} is overdue: no success since ${state.lastSuccessAt?.toISOString() ?? 'it was registered'}`,
      );
      const result = await this.#o.alerts.jobOverdue({
        job: state.job,
        deep: state.deep,
        maxAgeMs: state.maxAgeMs,
        lastSuccessAt: state.lastSuccessAt,
        firstRegisteredAt: state.firstRegisteredAt,
        overdueSince: state.dueBy,
      });
      if (result === 'failed' || result === 'no_recipients') {
        await this.#o.store.releaseOverdueAlert(state.job, state.deep);
      }
    }
  }
}
