import { err, type JobOutcome, type Logger, ok, silentLogger } from '@oxicloud/scheduler';
import { type AcquiredRun, acquireRun, InvalidParams, prepareTrigger, type RunArgs } from './acquire-run.js';
import { type ExecutedRun, executeRun, type RunFinishedListener } from './execute-run.js';
import type { JobStoreFactory } from './job-store-factory.js';
import { paramsNotApplied } from './params-not-applied.js';
import { messageOf, RecoverableError } from './recoverable-error.js';
import type { RecoverableJobHandler } from './recoverable-job-handler.js';
import { type RunHost, standaloneHost } from './run-host.js';
import { logRunLine, logRunStart, RECOVERABLE_TARGET } from './run-log.js';

/** Options of {@link runOrResume}. */
export interface RunOrResumeOptions extends RunArgs {
  readonly logger?: Logger;
  /** Handed to the handler; aborting it asks the handler to pause. */
  readonly signal?: AbortSignal;
  /** Called after each terminal write, once the job's `afterTerminal` step has settled. */
  readonly onRunFinished?: RunFinishedListener;
  /**
   * Emit the `job.run` line on `oxicloud::scheduler`. Default `true`; off when
   * the Part 1 scheduler dispatches the run and logs that line itself.
   */
  readonly logRunLine?: boolean;
}

/** {@link RunOrResumeOptions} with what the engine adds: the host its runs execute on. */
export interface DriveOptions extends RunOrResumeOptions {
  /**
   * What keeps the run while it executes (its stop signal, its lease, why it
   * was asked to stop): the engine's `OwnRuns`.
   * @defaultValue {@link standaloneHost}: the caller's `signal`, the lease renewed by the fenced checkpoints only
   */
  readonly host?: RunHost;
  /** When the caller began (`performance.now()`), for the `job.run` line's elapsed time. */
  readonly startedAtMs?: number;
}

/** What {@link startRun} answers: the run already active, or the one now executing (`done` settles at its end). */
export type StartedRun = (
  | (AcquiredRun & { readonly kind: 'already_running' })
  | (AcquiredRun & { readonly kind: 'started' | 'resumed'; readonly done: Promise<ExecutedRun> })
) & {
  /**
   * What the trigger asked for that the run does not use ({@link paramsNotApplied}):
   * a resumed run keeps its stored params, an active one its own; `{}` for a fresh run.
   */
  readonly paramsNotApplied: Record<string, unknown>;
};

/**
 * Steps 1–4 awaited ({@link acquireRun}), then steps 5–6 ({@link executeRun})
 * started on `options.host` and returned as `done` (never rejects). The one
 * way a recoverable run starts: {@link runOrResume} awaits `done`, the
 * engine's non-blocking `trigger` does not.
 *
 * Throws `INVALID_PARAMS` (trigger params the job rejects, when a fresh run
 * would start) or whatever the database threw while acquiring.
 */
export async function startRun(
  job: RecoverableJobHandler,
  factory: JobStoreFactory,
  options: DriveOptions = {},
): Promise<StartedRun> {
  const log = options.logger ?? silentLogger;
  const prepared = prepareTrigger(job, options);
  const sentAt = performance.now();
  // Invalid params refuse only a fresh run (acquireRun throws INVALID_PARAMS then):
  // a Paused run resumes with its stored params, an active one is returned as is.
  const acquired = await acquireRun(
    job.name,
    factory,
    prepared.ok ? prepared : new InvalidParams(prepared.message),
  );
  const notApplied = acquired.kind === 'started' ? {} : paramsNotApplied(options, acquired.record.params);
  if (acquired.kind === 'already_running') return { ...acquired, paramsNotApplied: notApplied };
  logRunStart(log, job.name, acquired, notApplied);
  const held = (options.host ?? standaloneHost).hold(job.name, acquired.record, {
    sentAt,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const done = executeRun(job, factory, acquired.record, held, {
    logger: log,
    ...(options.onRunFinished ? { onRunFinished: options.onRunFinished } : {}),
    logRunLine: options.logRunLine !== false,
    startedAtMs: options.startedAtMs ?? sentAt,
  })
    .then(
      (result) => result,
      // executeRun never throws by contract; should it, the run still ends here.
      (thrown: unknown): ExecutedRun => ({
        outcome: err(`run ${acquired.record.runId} of ${job.name} ended abnormally: ${messageOf(thrown)}`),
        status: null,
        record: null,
      }),
    )
    .then((result) => {
      held.release(result);
      return result;
    });
  return { kind: acquired.kind, record: acquired.record, done, paramsNotApplied: notApplied };
}

/**
 * Steps 1–6 awaited ({@link startRun}, then its `done`): the bridged outcome
 * of a fresh or resumed run, or `ok(0, { skipped: 'already_running', run_id })`
 * (with its `job.run` line) for a run already active. The one body of
 * {@link runOrResume} and of the engine's `runOrResume`; unlike the first it
 * throws what acquiring threw (`INVALID_PARAMS`, the database's error), as
 * the engine's contract says.
 */
export async function awaitRun(
  job: RecoverableJobHandler,
  factory: JobStoreFactory,
  options: DriveOptions = {},
): Promise<JobOutcome> {
  const startedAtMs = options.startedAtMs ?? performance.now();
  const started = await startRun(job, factory, { ...options, startedAtMs });
  if (started.kind === 'already_running') {
    const outcome = ok(0, { skipped: 'already_running', run_id: started.record.runId });
    if (options.logRunLine !== false) {
      logRunLine(
        options.logger ?? silentLogger,
        job.name,
        started.record.runId,
        outcome,
        Math.round(performance.now() - startedAtMs),
      );
    }
    return outcome;
  }
  return (await started.done).outcome;
}

/**
 * The plan's `run_or_resume`: validate the trigger params, then steps 1–4
 * ({@link acquireRun}) and 5–6 ({@link executeRun}), awaited. The engine's
 * `runOrResume` is the same body ({@link awaitRun}) on the engine's runs.
 * Never throws:
 *
 * - a fresh or resumed run → the bridged outcome of the handler (after its
 *   terminal write and the job's `afterTerminal` step);
 * - a run already active → `ok(0, { skipped: 'already_running', run_id })`;
 * - trigger params the job rejects → `err('invalid params for <job>: …')`, no row written;
 * - the database unreachable before the run starts → `err('could not start or resume a run of <job>: …')`.
 *
 * @example
 * ```ts
 * const factory = new PgJobStoreFactory(new Kysely({ dialect: new PostgresDialect({ pool }) }));
 * const outcome = await runOrResume(storageMigration, factory, { params: { target: 's3' }, logger });
 * if (outcome.kind === 'ok' && outcome.extra['paused']) console.log('paused at', outcome.extra['cursor_hex']);
 * ```
 */
export async function runOrResume(
  job: RecoverableJobHandler,
  factory: JobStoreFactory,
  options: RunOrResumeOptions = {},
): Promise<JobOutcome> {
  try {
    return await awaitRun(job, factory, options);
  } catch (thrown) {
    if (thrown instanceof RecoverableError && thrown.code === 'INVALID_PARAMS') return err(thrown.message);
    const message = `could not start or resume a run of ${job.name}: ${messageOf(thrown)}`;
    (options.logger ?? silentLogger).error(
      { target: RECOVERABLE_TARGET, event: 'run.start_failed', job: job.name, error: message },
      message,
    );
    return err(message);
  }
}
