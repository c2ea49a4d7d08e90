import type { JobOutcome, JobRunArgs } from '@oxicloud/scheduler';

/** The last finished run of a job, as the catalog remembers it. */
export interface JobLastOutcome {
  /** When the run finished. */
  readonly at: Date;
  readonly outcome: JobOutcome;
}

/** One registered job, as `GET /api/admin/jobs` lists it. */
export interface JobSummary {
  /** Stable snake_case name; the `{name}` of the admin URLs. */
  readonly name: string;
  /** `null` = on demand only (never fires periodically). */
  readonly intervalMs: number | null;
  /** `null` = no timeout. */
  readonly timeoutMs: number | null;
  /** Next periodic tick; `null` for on-demand jobs. */
  readonly nextRunAt: Date | null;
  /** Whether a run is in flight now. */
  readonly running: boolean;
  /** `null` until the first run finishes. */
  readonly lastOutcome: JobLastOutcome | null;
}

/**
 * The port the admin API needs for jobs: the list and the one manual
 * dispatch. The server adapts `JobRegistry` from `@oxicloud/scheduler` to it.
 *
 * @example
 * ```ts
 * const jobs: JobCatalog = {
 *   list: () => registry.list().map(toSummary),
 *   trigger: (name, args) => registry.trigger(name, args),
 * };
 * ```
 */
export interface JobCatalog {
  /** Every registered job, in a stable order. */
  list(): readonly JobSummary[];
  /**
   * Runs `name` once now. Resolves `undefined` when no job has that name, else
   * the outcome (a run refused by exclusivity is an `ok` outcome with
   * `extra.skipped = 'already_running'`, not `undefined`).
   */
  trigger(name: string, args: JobRunArgs): Promise<JobOutcome | undefined>;
}
