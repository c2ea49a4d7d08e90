import type { JobCapabilities } from '@oxicloud/scheduler';
import type { JobStore } from './job-store.js';
import type { RunOptions } from './run-options.js';
import type { RunOutcome } from './run-outcome.js';
import type { RunStatus } from './run-status.js';

/** What {@link RecoverableJobHandler.validateParams} returns. */
export type ParamsValidation =
  | { readonly ok: true; readonly params: Record<string, unknown> }
  | { readonly ok: false; readonly message: string };

/** What a job's {@link RecoverableJobHandler.afterTerminal} step is told: the run as its terminal write left it. */
export interface TerminalRun {
  readonly runId: string;
  /** `Completed`, `Paused` or `Failed`: the status just written. */
  readonly status: RunStatus;
  /** When the run began (its first attempt; a resume keeps it). */
  readonly startedAt: Date;
  /** The run's stats after the terminal write. */
  readonly stats: Readonly<Record<string, unknown>>;
  /** The run's options, as triggered. */
  readonly options: RunOptions;
}

/**
 * A long-running, cooperative, resumable scan. Sibling to the scheduler's
 * `JobHandler`, not a subtype.
 *
 * Between batches the handler MUST poll `store.status()`: `CancelRequested`
 * means return `paused` with the cursor at the next safe boundary. The
 * engine never aborts a run mid-batch and applies no timeout; `signal` fires
 * on server shutdown (and on cancel, when the run is in this process) and
 * means the same as a cancel request.
 *
 * @example
 * ```ts
 * const walk: RecoverableJobHandler = {
 *   name: 'walk_numbers',
 *   validateParams: (raw) => (typeof raw === 'object' && raw !== null
 *     ? { ok: true, params: raw as Record<string, unknown> }
 *     : { ok: false, message: 'params must be an object' }),
 *   estimateTotal: async () => 1000,
 *   async runResumable(store, signal) {
 *     const saved = await store.loadCursor();
 *     let next = saved ? new DataView(saved.buffer, saved.byteOffset).getUint32(0) : 0;
 *     while (next < 1000) {
 *       if (signal.aborted || (await store.status()) === 'CancelRequested') return paused(encode(next));
 *       next += 100; // … one batch of work …
 *       await store.checkpoint(encode(next), 100);
 *     }
 *     return completed();
 *   },
 * };
 * ```
 */
export interface RecoverableJobHandler {
  /** Stable snake_case identifier; the `job_name` column. */
  readonly name: string;
  /**
   * What the job is and supports: a consistency check (its batch order and
   * count meaning), a deep mode, the alerts it raises. Absent = none. The
   * catalog, the admin API, the CLI and `consistency_batch` read this, never
   * the name.
   */
  readonly capabilities?: Partial<JobCapabilities>;
  /**
   * Validates trigger params (tenants use zod). Called on every trigger with
   * the new params, and again on resume with the stored ones: a stored row
   * that no longer validates ends `Failed` with the message. It never sees
   * `force` / `deep`: those are the run's options (`store.options`),
   * validated once at the trigger.
   */
  validateParams?(raw: unknown): ParamsValidation;
  /**
   * Validates the params of a fresh run only (a trigger that starts a new
   * run), when the job wants a stricter rule for new input than for stored
   * runs: for example unknown keys refused. Absent → `validateParams`. A
   * resumed run is re-validated with `validateParams` only, so a stored run is
   * never blocked by a rule added later. It never sees `force` / `deep` either.
   */
  validateTriggerParams?(raw: unknown): ParamsValidation;
  /**
   * The number of items the run will examine, when cheap to estimate (for
   * example `SELECT reltuples`), or `null`. Called at the start of each run
   * and resume with the run's params and options; stored as
   * `stats.total_estimate` for progress and ETA.
   */
  estimateTotal?(params: Readonly<Record<string, unknown>>, options: RunOptions): Promise<number | null>;
  /** One run (or the rest of a paused run). Never throws by contract; a throw ends the run `Failed`. */
  runResumable(store: JobStore, signal: AbortSignal): Promise<RunOutcome>;
  /**
   * The job's closing step, when it has one: awaited after each terminal
   * write that landed (`Completed`, `Paused` or `Failed`; not after a lost
   * lease nor a terminal write that never landed), before the `job.run` line
   * and the engine's `onRunFinished` listeners, so what they read already
   * includes what this step wrote. A run is not done (`whenIdle`, shutdown)
   * until it settles. `checkJob` of `@oxicloud/consistency` closes a check
   * run's findings here.
   *
   * A throw or rejection is logged (`run.after_terminal_failed`) and changes
   * nothing about the run: its status is written already. The step is not
   * retried, so it must be idempotent and catch up by itself on what a crash
   * between the terminal write and the step left undone.
   */
  afterTerminal?(run: TerminalRun): Promise<void>;
}
