import type { z } from '@hono/zod-openapi';
import type { FindingKind } from '@oxicloud/consistency';
import { type CatalogEntry, outcomeOfRun, type RunSummary } from '@oxicloud/recoverable';
import { type JobCapabilities, type JobOutcome, NO_CAPABILITIES } from '@oxicloud/scheduler';
import { AdminApiError } from '../errors.js';
import type { ClusterView, PeriodicStateView } from '../ports/cluster-view.js';
import type { FindingKindsView } from '../ports/finding-kinds.js';
import type { JobCatalogView, JobSummary, PeriodicJobs } from '../ports/job-catalog.js';
import type { JobFreshness, OverdueJob } from '../ports/job-freshness.js';
import type { RunService } from '../ports/run-service.js';
import { boundedJsonObject, fitString } from './bounded-json.js';
import { runListEntry } from './run-list-entry.js';
import type { JobKindSchema, JobSummarySchema } from './schemas.js';

/** `periodic`: a Part 1 job only; `recoverable`: a Part 2 job with runs (it may also tick on the registry). */
export type JobKind = z.infer<typeof JobKindSchema>;

/** One entry of `GET /api/admin/jobs`. */
export type JobEntryJson = z.infer<typeof JobSummarySchema>;

const ACTIVE = new Set(['Running', 'CancelRequested']);

/** A recoverable job the scheduler does not tick: on demand, nothing remembered there. */
function recoverableOnly(name: string): JobSummary {
  return {
    name,
    interval_ms: null,
    timeout_ms: null,
    next_run_at: null,
    running: false,
    running_since: null,
    last_outcome: null,
  };
}

/** A finished run as a last outcome: the bridged outcome, when it ended, how long it took. */
function lastOutcomeOfRun(run: RunSummary): JobSummary['last_outcome'] {
  const outcome = outcomeOfRun(run);
  if (outcome === null) return null;
  const at = run.completed_at ?? run.last_progress_at;
  return {
    at,
    outcome,
    ...(outcome.kind === 'err' ? { cause: 'handler' } : {}),
    elapsed_ms: Math.max(0, Date.parse(at) - Date.parse(run.started_at)),
  };
}

/**
 * How much of an outcome's `extra` the listing shows: 8 KiB of JSON, 8 levels
 * deep (`consistency_batch` nests each check's outcome there); an `err`
 * message is cut to 500 characters.
 */
export const OUTCOME_EXTRA_BUDGET = { bytes: 8 * 1024, depth: 8 } as const;

/** A last outcome as the listing shows it: `extra` bounded, an `err` message cut (the run detail has it whole). */
function boundedOutcome(outcome: JobOutcome): JobOutcome {
  if (outcome.kind === 'err') return { kind: 'err', message: fitString(outcome.message, 500, 1000).text };
  return {
    kind: 'ok',
    count: outcome.count,
    extra: boundedJsonObject(outcome.extra, OUTCOME_EXTRA_BUDGET.bytes, OUTCOME_EXTRA_BUDGET.depth).value,
  };
}

/** The listing's `finding_kinds`: a job's declared kinds as JSON (the optional fields filled with `null`). */
export function findingKindJson(kind: FindingKind): JobEntryJson['finding_kinds'][number] {
  return {
    kind: kind.kind,
    severity: kind.severity,
    meaning: kind.meaning,
    magnitude: kind.magnitude ?? null,
    repair: kind.repair ?? null,
  };
}

/** The listing's `check`: where a consistency check runs in `consistency_batch` and what its count means. */
function checkJson(capabilities: JobCapabilities): JobEntryJson['check'] {
  const check = capabilities.check;
  return check === null ? null : { order: check.order, count_meaning: check.countMeaning };
}

/**
 * The JSON of a listing entry: the catalog fields, `running_since`
 * defaulting to `null`, plus `kind`, the declared capabilities
 * (`supports_deep`, `check`), the declared `finding_kinds` and `latest_run`. A
 * recoverable job counts as running while its latest run is Running or
 * CancelRequested (a run started through the engine is not the registry's).
 */
export function jobSummaryJson(
  job: JobSummary,
  extra: {
    readonly kind?: JobKind;
    /** @defaultValue the catalog entry's own, else none */
    readonly capabilities?: JobCapabilities;
    /** The kinds the job declared. @defaultValue none */
    readonly finding_kinds?: readonly FindingKind[];
    readonly latest_run?: RunSummary | null;
    /** The newest run that ended, when `latest_run` is still active: the last outcome meanwhile. */
    readonly last_ended_run?: RunSummary | null;
    readonly overdue?: OverdueJob | null;
    /** The state every node shares (a periodic job in a cluster). */
    readonly shared?: PeriodicStateView | null;
  } = {},
): JobEntryJson {
  const latest = extra.latest_run ?? null;
  const runActive = latest !== null && ACTIVE.has(latest.status);
  const shared = extra.shared ?? null;
  // The cluster's last run (whichever node ran it) wins over this process's memory; a
  // recoverable job's last outcome is its latest finished run's, when the
  // registry remembers none (runs started through the engine are not the registry's).
  const last =
    (shared?.last_run ? lastOutcomeOfShared(shared.last_run) : null) ??
    job.last_outcome ??
    (latest ? lastOutcomeOfRun(latest) : null) ??
    (extra.last_ended_run ? lastOutcomeOfRun(extra.last_ended_run) : null);
  const capabilities = extra.capabilities ?? job.capabilities ?? NO_CAPABILITIES;
  return {
    name: job.name,
    kind: extra.kind ?? 'periodic',
    interval_ms: job.interval_ms,
    timeout_ms: job.timeout_ms,
    next_run_at: job.next_run_at,
    running: job.running || runActive || (shared?.running_on ?? null) !== null,
    running_since: job.running_since ?? (runActive ? latest.started_at : null),
    last_outcome: last
      ? {
          at: last.at,
          outcome: boundedOutcome(last.outcome),
          ...(last.cause !== undefined ? { cause: last.cause } : {}),
          ...(last.elapsed_ms !== undefined ? { elapsed_ms: last.elapsed_ms } : {}),
          ...(last.source !== undefined ? { source: last.source } : {}),
          ...(last.node !== undefined ? { node: last.node } : {}),
        }
      : null,
    supports_deep: capabilities.deep,
    check: checkJson(capabilities),
    finding_kinds: (extra.finding_kinds ?? []).map(findingKindJson),
    latest_run: latest ? runListEntry(latest) : null,
    overdue: extra.overdue
      ? {
          deep: extra.overdue.deep,
          max_age_ms: extra.overdue.max_age_ms,
          last_success_at: extra.overdue.last_success_at,
          overdue_since: extra.overdue.overdue_since,
        }
      : null,
    ...(shared !== null && job.interval_ms !== null
      ? { missed_slots: shared.missed_slots, last_slot_at: shared.last_slot_at }
      : {}),
  };
}

/** A run from the shared history as the listing's last outcome. */
function lastOutcomeOfShared(run: NonNullable<PeriodicStateView['last_run']>) {
  return {
    at: run.finished_at,
    outcome: run.outcome,
    ...(run.cause === null ? {} : { cause: run.cause }),
    elapsed_ms: run.elapsed_ms,
    source: run.source,
    node: run.node,
  };
}

/**
 * The routes' view of the jobs: the one {@link JobCatalogView} (kind,
 * cadence, capabilities of every job, of both kinds) decides every name
 * lookup, kind and capability; the {@link PeriodicJobs} port adds a periodic
 * job's live state (next tick, running, last outcome), the {@link RunService}
 * a recoverable job's runs, the {@link FindingKindsView} each job's declared
 * finding kinds.
 */
export class JobDirectory {
  readonly #catalog: JobCatalogView;
  readonly #findingKinds: FindingKindsView | undefined;
  readonly #jobs: PeriodicJobs;
  readonly #runs: RunService | undefined;
  readonly #freshness: JobFreshness | undefined;
  readonly #cluster: ClusterView | undefined;
  /** Jobs this server does not register, with why (a storage domain without their adapter). */
  readonly #unavailable: ReadonlyMap<string, string>;

  constructor(deps: {
    readonly catalog: JobCatalogView;
    readonly jobs: PeriodicJobs;
    readonly runs?: RunService | undefined;
    readonly freshness?: JobFreshness | undefined;
    readonly cluster?: ClusterView | undefined;
    readonly findingKinds?: FindingKindsView | undefined;
    readonly unavailable?: ReadonlyMap<string, string> | undefined;
  }) {
    this.#unavailable = deps.unavailable ?? new Map();
    this.#catalog = deps.catalog;
    this.#findingKinds = deps.findingKinds;
    this.#jobs = deps.jobs;
    this.#cluster = deps.cluster;
    this.#freshness = deps.freshness;
    this.#runs = deps.runs;
  }

  /** The run service, when recoverable jobs are wired. */
  get runs(): RunService | undefined {
    return this.#runs;
  }

  /** The finding kinds job `name` declared (`[]` without a {@link FindingKindsView}). */
  findingKinds(name: string): readonly FindingKind[] {
    return this.#findingKinds?.kindsOf(name) ?? [];
  }

  /** Every job name, in the catalog's order. */
  names(): string[] {
    return this.#catalog.entries().map((entry) => entry.name);
  }

  /** The jobs that declare a deep mode, in the catalog's order. */
  deepJobs(): string[] {
    return this.#catalog
      .entries()
      .filter((entry) => entry.capabilities.deep)
      .map((entry) => entry.name);
  }

  /** Throws `JOB_NOT_FOUND` (with the known names) unless `name` is a job; returns its catalog entry. */
  require(name: string): CatalogEntry {
    const entry = this.#catalog.get(name);
    if (entry) return entry;
    const known = this.names();
    const reason = this.#unavailable.get(name);
    if (reason !== undefined) {
      throw new AdminApiError(
        'JOB_NOT_FOUND',
        `${name} is not registered on this server: ${reason}; known jobs: ${known.length > 0 ? known.join(', ') : '(none)'}`,
      );
    }
    throw new AdminApiError(
      'JOB_NOT_FOUND',
      `no job named '${name}'; known jobs: ${known.length > 0 ? known.join(', ') : '(none)'}`,
    );
  }

  /** Throws `JOB_NOT_FOUND` or `NOT_RECOVERABLE` unless `name` is a recoverable job; returns the run service. */
  requireRecoverable(name: string, action: string): RunService {
    const entry = this.require(name);
    if (entry.kind !== 'recoverable' || !this.#runs) {
      throw new AdminApiError(
        'NOT_RECOVERABLE',
        `${name} is a periodic job: it has no runs to ${action}; only recoverable jobs (kind "recoverable" in GET /api/admin/jobs) do`,
      );
    }
    return this.#runs;
  }

  /** The listing: every job of the catalog, with each recoverable job's latest run (read in parallel). */
  async list(): Promise<JobEntryJson[]> {
    const runs = this.#runs;
    const live = new Map(this.#jobs.list().map((job) => [job.name, job]));
    // The regular cadence first: a job overdue on both shows the regular one.
    const overdue = new Map<string, OverdueJob>();
    for (const o of [...((await this.#freshness?.overdue()) ?? [])].sort(
      (a, b) => Number(b.deep) - Number(a.deep),
    )) {
      overdue.set(o.job, o);
    }
    // The shared state is a bonus: while the database is unreachable the listing
    // answers from this process's memory, as a single process does.
    const states = await this.#cluster?.periodicStates().catch(() => undefined);
    const shared = new Map(states?.map((s) => [s.job, s]) ?? []);
    return Promise.all(
      this.#catalog.entries().map(async (entry) => {
        const recoverable = entry.kind === 'recoverable' && runs !== undefined;
        const latest = recoverable ? await runs.latestRun(entry.name) : null;
        // While a run is active (one at a time), the last outcome is the run before it: runs are persisted.
        const ended =
          recoverable && latest !== null && ACTIVE.has(latest.status)
            ? ((await runs.listRuns(entry.name, { limit: 2 })).find((run) => !ACTIVE.has(run.status)) ?? null)
            : null;
        return jobSummaryJson(live.get(entry.name) ?? recoverableOnly(entry.name), {
          kind: entry.kind,
          capabilities: entry.capabilities,
          finding_kinds: this.findingKinds(entry.name),
          latest_run: latest,
          last_ended_run: ended,
          overdue: overdue.get(entry.name) ?? null,
          // The registry's jobs only: a recoverable job's runs are in its own table.
          shared: recoverable ? null : (shared.get(entry.name) ?? null),
        });
      }),
    );
  }
}
