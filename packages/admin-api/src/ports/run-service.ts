import type {
  CancelResult,
  ListRunsOptions,
  RunArgs,
  RunSummary,
  TriggerResult,
} from '@oxicloud/recoverable';
import type { JobCapabilities } from '@oxicloud/scheduler';

/**
 * The port the admin API needs for recoverable (Part 2) jobs: start or
 * resume, cancel, and the run history. `RecoverableEngine` from
 * `@oxicloud/recoverable` satisfies it as it is.
 *
 * Errors are `RecoverableError`s (matched by `name` and `code`):
 * `UNKNOWN_JOB` → 404 `JOB_NOT_FOUND`, `RUN_NOT_FOUND` → 404,
 * `INVALID_PARAMS` / `INVALID_RUN_ID` → 400, `INVALID_PAGINATION` → 400
 * `VALIDATION_FAILED`, `NO_ACTIVE_RUN` → 409, `SHUTTING_DOWN` → 503; a
 * database connection failure → 503 `UNAVAILABLE`.
 *
 * @example
 * ```ts
 * const engine = new RecoverableEngine({ pool, logger });
 * const app = createAdminApp({ jobs: registry, runs: engine, findings: new PgFindingStore({ pool }), … });
 * ```
 */
export interface RunService {
  /** Names of the registered recoverable jobs, in a stable order. */
  names(): readonly string[];
  /** `true` when a recoverable job of this name is registered. */
  has(name: string): boolean;
  /** What the job declared (deep mode, a consistency check, alerts); only called for a name `has` knows. */
  capabilities(name: string): JobCapabilities;
  /** Starts a fresh run, resumes a Paused one (keeping its params), or returns the active one. */
  trigger(name: string, args?: RunArgs): Promise<TriggerResult>;
  /** Asks the active run to pause. */
  cancel(name: string): Promise<CancelResult>;
  /** The job's runs, newest first (limit 1–500, default 50). */
  listRuns(name: string, options?: ListRunsOptions): Promise<RunSummary[]>;
  /** One run of this job (`RUN_NOT_FOUND` also when the id is another job's run). */
  getRun(name: string, runId: string): Promise<RunSummary>;
  /** The active run, else the newest, else `null`. */
  latestRun(name: string): Promise<RunSummary | null>;
}
