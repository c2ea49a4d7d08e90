import type { CatalogEntry } from '@oxicloud/recoverable';
import type { JobCapabilities, JobOutcome, JobRunArgs } from '@oxicloud/scheduler';

/** The last finished run of a job, as the catalog remembers it (JSON-ready). */
export interface JobLastOutcome {
  /** ISO 8601 end of the run. */
  readonly at: string;
  readonly outcome: JobOutcome;
  /** Why an `err` outcome failed: `handler`, `timeout`, `panicked`. */
  readonly cause?: string;
  readonly elapsed_ms?: number;
  /** `tick` or `trigger`. */
  readonly source?: string;
  /** The node that ran it (the cluster's shared history). */
  readonly node?: string;
}

/**
 * One registered job, as `GET /api/admin/jobs` lists it: JSON-ready, snake_case
 * (the listing is served as it is). `JobRegistry.list()` from
 * `@oxicloud/scheduler` returns this shape.
 */
export interface JobSummary {
  /** Stable snake_case name; the `{name}` of the admin URLs. */
  readonly name: string;
  /** `null` = on demand only (never fires periodically). */
  readonly interval_ms: number | null;
  /** `null` = no timeout. */
  readonly timeout_ms: number | null;
  /** ISO 8601 next periodic tick; `null` for on-demand jobs and while the scheduler is stopped. */
  readonly next_run_at: string | null;
  /** Whether a run is in flight now. */
  readonly running: boolean;
  /** ISO 8601 start of the run in flight, else `null`. */
  readonly running_since?: string | null;
  /** `null` until the first run finishes. */
  readonly last_outcome: JobLastOutcome | null;
  /**
   * What the job declared (deep mode, a consistency check, alerts), as
   * `JobRegistry.list()` gives it. Absent = none.
   */
  readonly capabilities?: JobCapabilities;
}

/**
 * The port the admin API needs for periodic jobs: their live state and the
 * one manual dispatch. `JobRegistry` from `@oxicloud/scheduler` satisfies it
 * as it is. Which jobs exist, their kind and capabilities come from the
 * {@link JobCatalogView}.
 *
 * @example
 * ```ts
 * const app = createAdminApp({ jobs: registry, users, jwtSecret, logger });
 * ```
 */
export interface PeriodicJobs {
  /** Every registered job, in a stable order. */
  list(): readonly JobSummary[];
  /**
   * Runs `name` once now. Resolves `undefined` when no job has that name, else
   * the outcome (a run refused by exclusivity is an `ok` outcome with
   * `extra.skipped = 'already_running'`, not `undefined`).
   */
  trigger(name: string, args: JobRunArgs): Promise<JobOutcome | undefined>;
}

/**
 * The one catalog of every job, of both kinds, with its kind, cadence and
 * capabilities: `JobCatalog` of `@oxicloud/recoverable` satisfies it as it
 * is (the server hands the same one to `consistency_batch`). The listing's
 * order, every name lookup (404 `JOB_NOT_FOUND`), a job's kind (409
 * `NOT_RECOVERABLE`) and its capabilities (`supports_deep`, `check`, a
 * `deep=true` trigger refused) come from it.
 */
export interface JobCatalogView {
  /** Every job, in a stable order. */
  entries(): readonly CatalogEntry[];
  /** The entry of `name`, or `undefined`. */
  get(name: string): CatalogEntry | undefined;
}
