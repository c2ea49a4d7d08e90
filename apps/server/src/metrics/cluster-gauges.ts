import { engineSchema, engineTable } from '@oxicloud/recoverable';
import type pg from 'pg';
import { Gauge, type Registry } from 'prom-client';
import type { FreshnessState } from '../freshness/job-freshness.js';
import type { JobFreshnessRecord } from '../freshness/job-freshness-store.js';

/** Where the cluster facts come from: the freshness rows and states (`FreshnessMonitor`). */
export interface FreshnessFacts {
  snapshot(): Promise<{ records: JobFreshnessRecord[]; states: FreshnessState[] }>;
}

const seconds = (at: Date) => at.getTime() / 1000;

/** Where the open findings come from: the findings lifecycle (`PgFindingLedger.openCounts`). */
export interface OpenFindings {
  openCounts(): Promise<ReadonlyArray<{ check: string; kind: string; severity: string; count: number }>>;
}

interface RunCountRow {
  job_name: string;
  status: string;
  n: string;
}

/**
 * The cluster half of the metrics: facts read from the database at each
 * scrape, so every node reports the same value and pruning old runs never
 * looks like a counter reset. All gauges: last run / last success /
 * registration times, freshness (cadence, overdue), the open findings (the
 * findings lifecycle: what no run or repair fixed and no operator decided),
 * and the runs in the history by status.
 */
export class ClusterGauges {
  readonly #pool: pg.Pool;
  readonly #freshness: FreshnessFacts;
  readonly #openFindings: OpenFindings;
  readonly #jobs: ReadonlySet<string>;
  readonly #recoverableRuns: string;
  readonly #lastSuccess: Gauge<'job'>;
  readonly #lastDeepSuccess: Gauge<'job'>;
  readonly #lastRun: Gauge<'job'>;
  readonly #registered: Gauge<'job'>;
  readonly #maxAge: Gauge<'job' | 'mode'>;
  readonly #overdue: Gauge<'job' | 'mode'>;
  readonly #findings: Gauge<'check' | 'kind' | 'severity'>;
  readonly #history: Gauge<'job' | 'status'>;

  constructor(deps: {
    readonly registry: Registry;
    readonly pool: pg.Pool;
    readonly freshness: FreshnessFacts;
    readonly findings: OpenFindings;
    readonly jobs: readonly string[];
    /**
     * The Postgres schema of the engine's tables (`recoverable_runs`), e.g.
     * `oxijobs` beside a real OxiCloud. Validated by `engineSchema()` of
     * `@oxicloud/recoverable`.
     * @defaultValue `jobs`
     */
    readonly schema?: string;
  }) {
    this.#pool = deps.pool;
    this.#recoverableRuns = engineTable(engineSchema(deps.schema), 'recoverable_runs');
    this.#freshness = deps.freshness;
    this.#openFindings = deps.findings;
    this.#jobs = new Set(deps.jobs);
    const registers = [deps.registry];
    const gauge = <L extends string>(name: string, help: string, labelNames: L[]) =>
      new Gauge<L>({ name, help, labelNames, registers });
    this.#lastSuccess = gauge(
      'oxicloud_job_last_success_timestamp_seconds',
      'End of the last successful run of the job on this database (absent: never)',
      ['job'],
    );
    this.#lastDeepSuccess = gauge(
      'oxicloud_job_last_deep_success_timestamp_seconds',
      'End of the last successful deep run of the job (storage_consistency; absent: never)',
      ['job'],
    );
    this.#lastRun = gauge(
      'oxicloud_job_last_run_timestamp_seconds',
      'End of the last run of the job on this database, whatever its outcome (absent: never)',
      ['job'],
    );
    this.#registered = gauge(
      'oxicloud_job_registered_timestamp_seconds',
      'When the job was first registered on this database (the age of a job that never succeeded counts from it)',
      ['job'],
    );
    this.#maxAge = gauge(
      'oxicloud_job_max_age_seconds',
      'Expected cadence: a success is due at least this often (mode regular or deep)',
      ['job', 'mode'],
    );
    this.#overdue = gauge(
      'oxicloud_job_overdue',
      '1 when the job has no success within 1.5 times its expected cadence, else 0',
      ['job', 'mode'],
    );
    this.#findings = gauge(
      'oxicloud_findings_open',
      'Open findings of each consistency check (state open or reopened: not fixed by a run or a repair, not accepted), by kind and severity',
      ['check', 'kind', 'severity'],
    );
    this.#history = gauge(
      'oxicloud_job_runs_recorded',
      'Recoverable runs kept in the run history, by job and status',
      ['job', 'status'],
    );
  }

  /** Reads the facts and sets every gauge (series that vanished are dropped). */
  async refresh(): Promise<void> {
    const [{ records, states }, findings, history] = await Promise.all([
      this.#freshness.snapshot(),
      this.#openFindings.openCounts(),
      this.#pool.query<RunCountRow>(
        `SELECT job_name, status, count(*) AS n FROM ${this.#recoverableRuns} GROUP BY job_name, status`,
      ),
    ]);
    for (const g of [this.#lastSuccess, this.#lastDeepSuccess, this.#lastRun, this.#registered]) g.reset();
    for (const r of records) {
      if (!this.#jobs.has(r.job)) continue;
      this.#registered.set({ job: r.job }, seconds(r.firstRegisteredAt));
      if (r.lastRunAt) this.#lastRun.set({ job: r.job }, seconds(r.lastRunAt));
      if (r.lastSuccessAt) this.#lastSuccess.set({ job: r.job }, seconds(r.lastSuccessAt));
      if (r.lastDeepSuccessAt) this.#lastDeepSuccess.set({ job: r.job }, seconds(r.lastDeepSuccessAt));
    }
    this.#maxAge.reset();
    this.#overdue.reset();
    for (const s of states) {
      const labels = { job: s.job, mode: s.deep ? 'deep' : 'regular' };
      this.#maxAge.set(labels, s.maxAgeMs / 1000);
      this.#overdue.set(labels, s.overdue ? 1 : 0);
    }
    this.#findings.reset();
    for (const row of findings) {
      this.#findings.set({ check: row.check, kind: row.kind, severity: row.severity }, row.count);
    }
    this.#history.reset();
    for (const row of history.rows) {
      if (this.#jobs.has(row.job_name))
        this.#history.set({ job: row.job_name, status: row.status }, Number(row.n));
    }
  }
}
