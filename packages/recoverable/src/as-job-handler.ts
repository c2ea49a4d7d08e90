import type { JobHandler, JobOutcome, JobRunArgs } from '@oxicloud/scheduler';
import type { RecoverableEngine } from './recoverable-engine.js';
import { RecoverableError } from './recoverable-error.js';

/** Options of {@link asJobHandler}. */
export interface AsJobHandlerOptions {
  /**
   * Let the engine log the `job.run` line too. Off by default: the Part 1
   * scheduler logs that line for every dispatch it makes.
   * @defaultValue false
   */
  readonly logRunLine?: boolean;
}

/**
 * Wraps a registered recoverable job as a Part 1 `JobHandler`, so the
 * scheduler can tick it (plan: Composability). Each `run` is the engine's
 * awaited `runOrResume`: a tick that finds an active run short-circuits to
 * `ok(0, { skipped: 'already_running' })`, a Paused run is resumed. The
 * scheduler's abort signal (timeout, shutdown) requests a cancel: the run
 * lands Paused with its cursor. Give the scheduler no timeout for it.
 *
 * Throws `UNKNOWN_JOB` when `name` is not registered on the engine.
 *
 * @example
 * ```ts
 * engine.register(filesConsistency);
 * registry.register(asJobHandler(engine, 'files_consistency'), 24 * 3_600_000, null);
 * ```
 */
export function asJobHandler(
  engine: RecoverableEngine,
  name: string,
  options: AsJobHandlerOptions = {},
): JobHandler {
  if (!engine.has(name)) {
    throw new RecoverableError(
      'UNKNOWN_JOB',
      `asJobHandler: register ${name} on the RecoverableEngine first`,
    );
  }
  return {
    name,
    run(args: JobRunArgs, signal: AbortSignal): Promise<JobOutcome> {
      return engine.runOrResume(name, {
        force: args.force,
        ...(args.deep === undefined ? {} : { deep: args.deep }),
        ...(args.params === undefined ? {} : { params: args.params }),
        signal,
        logRunLine: options.logRunLine ?? false,
      });
    },
  };
}
