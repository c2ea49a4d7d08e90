import { engineSchema, type RecoverableEngine } from '@oxicloud/recoverable';
import type { JobRegistry } from '@oxicloud/scheduler';
import type pg from 'pg';
import type { FreshnessMonitor } from '../freshness/freshness-monitor.js';
import { ClusterGauges, type OpenFindings } from './cluster-gauges.js';
import { JobMetrics } from './job-metrics.js';
import type { MetricsSource } from './metrics-listener.js';
import { type QueueFacts, QueueGauges } from './queue-gauges.js';

/**
 * The server's metrics: {@link JobMetrics} (this process) fed by the
 * registry and engine hooks, and {@link ClusterGauges} (the database) and
 * {@link QueueGauges} (OxiCloud's queues) read at each scrape. `attach` is
 * called once the jobs are registered.
 */
export class ServerMetrics implements MetricsSource {
  readonly jobs: JobMetrics;
  #cluster: ClusterGauges | null = null;
  #queues: QueueGauges | null = null;
  #registry: JobRegistry | null = null;
  #engine: RecoverableEngine | null = null;
  readonly #schema: string;

  /**
   * @param options.schema The Postgres schema of the engine's tables (what
   * {@link ClusterGauges} reads), e.g. `oxijobs` beside a real OxiCloud;
   * default `jobs`.
   * @throws Error for a `schema` the engine does not take.
   */
  constructor(
    readonly pool: pg.Pool,
    options: { readonly schema?: string } = {},
  ) {
    this.#schema = engineSchema(options.schema);
    this.jobs = new JobMetrics({
      running: () => {
        const running = new Map<string, number>();
        for (const job of this.#registry?.list() ?? []) if (job.running) running.set(job.name, 1);
        for (const run of this.#engine?.activeRuns() ?? [])
          running.set(run.job, (running.get(run.job) ?? 0) + 1);
        return running;
      },
      pool: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    });
  }

  get contentType(): string {
    return this.jobs.registry.contentType;
  }

  /** Binds the registered jobs and the freshness facts. */
  attach(deps: {
    readonly registry: JobRegistry;
    readonly engine: RecoverableEngine;
    readonly freshness: FreshnessMonitor;
    /** The findings lifecycle (`PgFindingLedger`): the open findings gauge. */
    readonly findings: OpenFindings;
    /** OxiCloud's queues (`QueueMonitor`): the queue gauges; none without it. */
    readonly queues?: QueueFacts;
  }): void {
    this.#registry = deps.registry;
    this.#engine = deps.engine;
    const names = [...deps.registry.list().map((j) => j.name), ...deps.engine.names()];
    this.jobs.addJobs(names);
    this.#cluster = new ClusterGauges({
      registry: this.jobs.registry,
      pool: this.pool,
      freshness: deps.freshness,
      findings: deps.findings,
      jobs: names,
      schema: this.#schema,
    });
    if (deps.queues !== undefined) {
      this.#queues = new QueueGauges({ registry: this.jobs.registry, queues: deps.queues });
    }
  }

  /** The Prometheus text: the cluster and queue gauges read fresh from the database, then every metric. */
  async render(): Promise<string> {
    await Promise.all([this.#cluster?.refresh(), this.#queues?.refresh()]);
    return this.jobs.registry.metrics();
  }
}
