import type { JobCapabilities } from './job-capabilities.js';
import type { JobOutcome } from './job-handler.js';

/**
 * Why a run ended in `err`, recorded by the supervisor beside the outcome
 * (never by the handler): the handler returned `err` (`handler`), the
 * timeout tripped (`timeout`), or the handler threw / rejected / returned
 * something that is not a `JobOutcome` (`panicked`).
 */
export type RunCause = 'handler' | 'timeout' | 'panicked';

/** Who started a run: the supervisor's periodic tick or `JobRegistry.trigger`. */
export type RunSource = 'tick' | 'trigger';

/** What `JobRegistryOptions.onOutcome` receives after every run (skipped triggers excluded). */
export interface JobOutcomeEvent {
  readonly job: string;
  readonly outcome: JobOutcome;
  /** Set exactly when `outcome.kind === 'err'`. */
  readonly cause?: RunCause;
  readonly elapsedMs: number;
  /** When the run ended (the time of its `job.run` log line). */
  readonly at: Date;
  readonly startedAt: Date;
  readonly source: RunSource;
}

/** The last recorded run of a job, as `JobRegistry.list` shows it. */
export interface LastOutcome {
  /** ISO timestamp of the end of the run. */
  readonly at: string;
  readonly outcome: JobOutcome;
  readonly cause?: RunCause;
  readonly elapsed_ms: number;
  readonly source: RunSource;
}

/** One row of `JobRegistry.list`: the admin listing's shape (snake_case, JSON-ready). */
export interface JobSummary {
  readonly name: string;
  /** `null` = on-demand only (never ticks). */
  readonly interval_ms: number | null;
  readonly timeout_ms: number | null;
  /** ISO timestamp of the next tick; `null` for on-demand jobs and while the loop is not started. */
  readonly next_run_at: string | null;
  /** `null` until the first run ends. */
  readonly last_outcome: LastOutcome | null;
  readonly running: boolean;
  readonly running_since: string | null;
  /** What the job declared (`JobHandler.capabilities`, gaps filled). */
  readonly capabilities: JobCapabilities;
}
