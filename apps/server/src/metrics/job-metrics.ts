import type { RunFinishedEvent } from '@oxicloud/recoverable';
import type { JobOutcomeEvent } from '@oxicloud/scheduler';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** The outcome label of a run: ok, err, or paused (a recoverable run that landed Paused). */
export type RunOutcomeLabel = 'ok' | 'err' | 'paused';

/** What this process can say about itself at scrape time. */
export interface ProcessFacts {
  /** Jobs this process is running now. */
  running(): ReadonlyMap<string, number>;
  /** The pg pool's clients. */
  pool(): { readonly total: number; readonly idle: number; readonly waiting: number };
}

/** Run-duration buckets, seconds: from a quick sweep to a day-long deep scan. */
const DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600];

/**
 * The per-process half of the metrics: counters of what THIS process did
 * since it started (a restart resets them, as Prometheus expects of
 * `_total`), the run-duration histogram, what it runs now, its pg pool, and
 * the Node.js process defaults (event-loop lag included). The cluster facts
 * read from the database live in {@link ClusterGauges}, on the same registry.
 */
export class JobMetrics {
  readonly registry = new Registry();
  readonly #runs: Counter<'job' | 'outcome'>;
  readonly #duration: Histogram<'job'>;
  readonly #missed: Counter<'job'>;
  readonly #scanned: Counter<'job'>;
  readonly #hashed: Counter;

  readonly #jobs: string[] = [];

  constructor(facts: ProcessFacts) {
    const jobs = this.#jobs;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    // prom-client names three gauges `_total` (promtool refuses a non-counter `_total`); the
    // per-type `nodejs_active_handles`, `nodejs_active_requests`, `nodejs_active_resources` stay.
    for (const name of [
      'nodejs_active_handles_total',
      'nodejs_active_requests_total',
      'nodejs_active_resources_total',
    ]) {
      this.registry.removeSingleMetric(name);
    }
    this.#runs = new Counter({
      name: 'oxicloud_job_runs_total',
      help: 'Runs this process finished, by job and outcome (ok, err, paused)',
      labelNames: ['job', 'outcome'],
      registers,
    });
    this.#duration = new Histogram({
      name: 'oxicloud_job_run_duration_seconds',
      help: 'Wall time of the runs this process finished (a resumed run: this process part)',
      labelNames: ['job'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#missed = new Counter({
      name: 'oxicloud_job_missed_slots_total',
      help: 'Periodic ticks this process skipped because the previous run still held the job',
      labelNames: ['job'],
      registers,
    });
    this.#scanned = new Counter({
      name: 'oxicloud_run_rows_scanned_total',
      help: 'Rows or items examined by the recoverable runs this process finished (stats.scanned_count)',
      labelNames: ['job'],
      registers,
    });
    this.#hashed = new Counter({
      name: 'oxicloud_run_bytes_hashed_total',
      help: 'Bytes this process re-hashed (deep storage_consistency and manifests_consistency)',
      registers,
    });
    new Gauge({
      name: 'oxicloud_job_running',
      help: 'Runs of the job this process is executing now',
      labelNames: ['job'],
      registers,
      collect() {
        const running = facts.running();
        for (const job of jobs) this.set({ job }, running.get(job) ?? 0);
      },
    });
    const pool = (name: string, help: string, pick: (p: ReturnType<ProcessFacts['pool']>) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(pick(facts.pool()));
        },
      });
    pool('oxicloud_db_pool_clients', 'Clients the pg pool holds (idle and in use)', (p) => p.total);
    pool('oxicloud_db_pool_idle_clients', 'Idle clients in the pg pool', (p) => p.idle);
    pool('oxicloud_db_pool_waiting_requests', 'Queries waiting for a pg pool client', (p) => p.waiting);
  }

  /** The jobs to report: each shows up from the first scrape, its counters at 0. */
  addJobs(names: readonly string[]): void {
    for (const job of names) {
      if (this.#jobs.includes(job)) continue;
      this.#jobs.push(job);
      for (const outcome of ['ok', 'err'] as const) this.#runs.inc({ job, outcome }, 0);
      this.#missed.inc({ job }, 0);
      this.#scanned.inc({ job }, 0);
    }
  }

  /** A Part 1 run ended (`JobRegistry`'s `onOutcome`). */
  onJobOutcome(event: JobOutcomeEvent): void {
    this.#observe(event.job, event.outcome.kind, event.elapsedMs);
  }

  /** A recoverable run reached its terminal write (`RecoverableEngine`'s `onRunFinished`). */
  onRunFinished(event: RunFinishedEvent): void {
    const outcome: RunOutcomeLabel =
      event.status === 'Completed' ? 'ok' : event.status === 'Paused' ? 'paused' : 'err';
    this.#observe(event.job, outcome, event.elapsedMs);
    const scanned = Number(event.stats['scanned_count'] ?? 0);
    if (Number.isFinite(scanned) && scanned > 0) this.#scanned.inc({ job: event.job }, scanned);
  }

  /** A periodic tick found the job still running (`job.tick_skipped`). */
  onTickSkipped(job: string): void {
    this.#missed.inc({ job });
  }

  /** Bytes re-hashed by a deep check. */
  onBytesHashed(bytes: number): void {
    if (Number.isFinite(bytes) && bytes > 0) this.#hashed.inc(bytes);
  }

  #observe(job: string, outcome: RunOutcomeLabel, elapsedMs: number): void {
    this.#runs.inc({ job, outcome });
    this.#duration.observe({ job }, Math.max(0, elapsedMs) / 1000);
  }
}
