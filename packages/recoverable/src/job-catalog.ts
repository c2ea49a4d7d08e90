import { type JobCapabilities, NO_CAPABILITIES } from '@oxicloud/scheduler';

/** `periodic`: a scheduler job only; `recoverable`: a job with runs (it may also tick on the scheduler). */
export type JobKind = 'periodic' | 'recoverable';

/** One job of the {@link JobCatalog}. */
export interface CatalogEntry {
  readonly name: string;
  readonly kind: JobKind;
  /** The scheduler's cadence; `null` = on demand only. */
  readonly intervalMs: number | null;
  readonly capabilities: JobCapabilities;
}

/** The scheduler's side of the catalog (a `JobRegistry`). */
export interface PeriodicJobList {
  list(): ReadonlyArray<{
    readonly name: string;
    readonly interval_ms: number | null;
    /** Absent = none declared. */
    readonly capabilities?: JobCapabilities | undefined;
  }>;
}

/** The recoverable side of the catalog (a `RecoverableEngine`). */
export interface RecoverableJobList {
  names(): readonly string[];
  capabilities(name: string): JobCapabilities;
}

/**
 * The one list of every job, of both kinds, with its kind, cadence and
 * capabilities: what the admin API lists, the CLI follows and
 * `consistency_batch` runs. A name the engine knows is `recoverable` (even
 * when the scheduler also ticks it, through `asJobHandler`), with the
 * engine's declaration. Read live: jobs registered later appear.
 *
 * @example
 * ```ts
 * const catalog = new JobCatalog(registry, engine);
 * catalog.checks().map((c) => c.name); // ['drives_consistency', …, 'storage_consistency']
 * ```
 */
export class JobCatalog {
  readonly #periodic: PeriodicJobList;
  readonly #recoverable: RecoverableJobList;

  constructor(periodic: PeriodicJobList, recoverable: RecoverableJobList) {
    this.#periodic = periodic;
    this.#recoverable = recoverable;
  }

  /** Every job: the scheduler's order, then the recoverable jobs it does not tick. */
  entries(): CatalogEntry[] {
    const recoverable = new Set(this.#recoverable.names());
    const listed = this.#periodic.list();
    const seen = new Set(listed.map((job) => job.name));
    const entries: CatalogEntry[] = listed.map((job) =>
      recoverable.has(job.name)
        ? this.#recoverableEntry(job.name, job.interval_ms)
        : {
            name: job.name,
            kind: 'periodic',
            intervalMs: job.interval_ms,
            capabilities: job.capabilities ?? NO_CAPABILITIES,
          },
    );
    for (const name of recoverable) if (!seen.has(name)) entries.push(this.#recoverableEntry(name, null));
    return entries;
  }

  /** The entry of `name`, or `undefined`. */
  get(name: string): CatalogEntry | undefined {
    return this.entries().find((entry) => entry.name === name);
  }

  /** The consistency checks, in the order `consistency_batch` runs them (their declared order, ties by name). */
  checks(): CatalogEntry[] {
    return this.entries()
      .filter((entry) => entry.capabilities.check !== null)
      .sort(
        (a, b) =>
          (a.capabilities.check?.order ?? 0) - (b.capabilities.check?.order ?? 0) ||
          (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
      );
  }

  #recoverableEntry(name: string, intervalMs: number | null): CatalogEntry {
    return { name, kind: 'recoverable', intervalMs, capabilities: this.#recoverable.capabilities(name) };
  }
}
