import type { JobCapabilities } from './job-capabilities.js';

/**
 * Per-dispatch parameters. Periodic ticks pass {@link defaultRunArgs}; admin
 * triggers may set `force` (acceleration semantics: grace windows of 0),
 * `deep` (consistency checks re-hash bytes) and `params` (a recoverable
 * run's stored parameters, validated by the job). Handlers silently ignore
 * what they do not understand.
 */
export interface JobRunArgs {
  /** Request acceleration semantics; per job (dedup_gc and grant_cleanup: grace = 0). */
  readonly force: boolean;
  /** Deep mode for consistency checks (re-hash + mime sniff). */
  readonly deep?: boolean;
  /** Run parameters from the trigger body; validated by the job that reads them. */
  readonly params?: Readonly<Record<string, unknown>>;
}

/** The arguments a periodic tick passes: nothing forced. */
export const defaultRunArgs: JobRunArgs = Object.freeze({ force: false });

/** A successful run: `count` is the job's primary scalar, `extra` its own fields. */
export interface JobOutcomeOk {
  readonly kind: 'ok';
  readonly count: number;
  readonly extra: Readonly<Record<string, unknown>>;
}

/** A failed run. The handler gives the message; the supervisor records the cause. */
export interface JobOutcomeErr {
  readonly kind: 'err';
  readonly message: string;
}

/**
 * The outcome of one run: exactly two shapes. Every reason a run can fail
 * (the handler said so, a timeout, a throw) collapses to `err`; the cause is
 * recorded beside it by the supervisor, never by the handler.
 */
export type JobOutcome = JobOutcomeOk | JobOutcomeErr;

/** Builds an ok outcome. */
export function ok(count: number, extra: Record<string, unknown> = {}): JobOutcomeOk {
  return { kind: 'ok', count, extra };
}

/** Builds an err outcome. */
export function err(message: string): JobOutcomeErr {
  return { kind: 'err', message };
}

/**
 * A named job the scheduler runs on an interval and on demand.
 *
 * @example
 * ```ts
 * const hello: JobHandler = {
 *   name: 'hello',
 *   async run(args, signal) {
 *     if (signal.aborted) return err('aborted');
 *     return ok(1, { forced: args.force });
 *   },
 * };
 * ```
 */
export interface JobHandler {
  /** Stable snake_case identifier, unique in the process: log lines, URLs and env vars key on it. */
  readonly name: string;
  /** What the job is and supports (deep mode, alerts); absent = none. */
  readonly capabilities?: Partial<JobCapabilities>;
  /**
   * One execution. `signal` fires when the supervisor's timeout trips or the
   * server shuts down: a handler must honour it (a JS promise cannot be killed).
   */
  run(args: JobRunArgs, signal: AbortSignal): Promise<JobOutcome>;
}
