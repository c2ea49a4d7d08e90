import { err, type JobOutcome, type Logger, silentLogger } from '@oxicloud/scheduler';
import { prepareStored } from './acquire-run.js';
import { type TrackedStore, trackCheckpoints } from './checkpoint-tracking.js';
import { DATABASE_UNREACHABLE, isConnectionLoss } from './connection-retry.js';
import { toJobOutcome } from './job-outcome-bridge.js';
import type { JobStoreFactory } from './job-store-factory.js';
import type { LeaseGuard } from './lease/run-leases.js';
import { isLeaseLost, messageOf } from './recoverable-error.js';
import type { RecoverableJobHandler } from './recoverable-job-handler.js';
import type { HeldRun } from './run-host.js';
import { logRunLine, RECOVERABLE_TARGET } from './run-log.js';
import { type RunOptions, storedRunOptions } from './run-options.js';
import { failed, paused, type RunOutcome } from './run-outcome.js';
import { describeCorruption, isJsonObject, type RunRecord } from './run-record.js';
import type { RunStatus } from './run-status.js';
import { writeTerminalStatus } from './terminal-write.js';

/** What `onRunFinished` receives after each terminal write (and the job's `afterTerminal` step). */
export interface RunFinishedEvent {
  readonly job: string;
  readonly run_id: string;
  /** The terminal status written: Completed, Paused or Failed. */
  readonly status: RunStatus;
  readonly outcome: JobOutcome;
  readonly elapsedMs: number;
  /** The run's stats after the terminal write. */
  readonly stats: Readonly<Record<string, unknown>>;
  /** The run's options (`force`, `deep`), as triggered. */
  readonly options: RunOptions;
}

/**
 * A hook called after each terminal write, once the job's `afterTerminal`
 * step has settled (alerts, findings mails, metrics). A throw or rejection is
 * logged and contained.
 */
export type RunFinishedListener = (event: RunFinishedEvent) => void | Promise<void>;

/** The result of steps 5–6. */
export interface ExecutedRun {
  readonly outcome: JobOutcome;
  /** The terminal status written, or `null` when the terminal write itself failed. */
  readonly status: RunStatus | null;
  readonly record: RunRecord | null;
  /** `true` when the run's lease was lost (its fence refused a write): nothing more was written. */
  readonly leaseLost?: boolean;
}

/** Options of {@link executeRun}. */
export interface ExecuteRunOptions {
  readonly logger?: Logger;
  readonly onRunFinished?: RunFinishedListener;
  /** Emit the `job.run` line. @defaultValue true */
  readonly logRunLine?: boolean;
  /** When the caller began (`performance.now()`): the `job.run` line's elapsed time counts from here. */
  readonly startedAtMs?: number;
}

/**
 * Steps 5–6 of the plan for a run acquired by `acquireRun`, kept by `held`:
 * check the row, re-validate the stored params, estimate the total, run the
 * handler with a store bound to the row, write the terminal status, await the
 * job's `afterTerminal` step, bridge to a `JobOutcome`, log `job.run`, call
 * `onRunFinished`. Never throws.
 */
export async function executeRun(
  job: RecoverableJobHandler,
  factory: JobStoreFactory,
  record: RunRecord,
  held: HeldRun,
  options: ExecuteRunOptions = {},
): Promise<ExecutedRun> {
  const log = options.logger ?? silentLogger;
  const startedAtMs = options.startedAtMs ?? performance.now();
  const runId = record.runId;
  const lease = held.lease;
  const leaseLostLine = (error: string) => {
    log.warn(
      {
        target: RECOVERABLE_TARGET,
        event: 'run.lease_lost',
        job: job.name,
        run_id: runId,
        node: record.ownerNode,
        attempt: record.attempt,
        error,
      },
      `run ${runId} of ${job.name}: this node lost its lease (attempt ${record.attempt}); it stops and writes nothing more`,
    );
    return { outcome: err(`lease lost: ${error}`), status: null, record: null, leaseLost: true };
  };

  const outcome = await runHandler(job, factory, record, held.signal, log, lease);
  if (lease.state() === 'lost') return leaseLostLine('a write of this run was refused by its fence');
  // No longer trusted: the work stopped at its last checkpoint; the landing below is fenced (it lands
  // only when no other node took the run over).

  let final: RunRecord;
  try {
    final = await writeTerminalStatus(
      factory,
      record,
      outcome,
      held.pauseReason(),
      held.stopRetrying,
      (attempt, thrown) =>
        log.warn(
          {
            target: RECOVERABLE_TARGET,
            event: 'run.finish_retry',
            job: job.name,
            run_id: runId,
            attempt,
            error: messageOf(thrown),
          },
          `could not write the terminal status of run ${runId} yet (the database?); retrying`,
        ),
    );
  } catch (thrown) {
    if (isLeaseLost(thrown)) {
      lease.lost();
      return leaseLostLine(messageOf(thrown));
    }
    const message = `could not write the terminal status of run ${runId}: ${messageOf(thrown)}`;
    log.error(
      {
        target: RECOVERABLE_TARGET,
        event: 'run.finish_failed',
        job: job.name,
        run_id: runId,
        error: message,
      },
      message,
    );
    return { outcome: err(message), status: null, record: null };
  }

  const jobOutcome = toJobOutcome(outcome, countOf(final.stats), runId);
  const elapsedMs = Math.round(performance.now() - startedAtMs);
  const stats = isJsonObject(final.stats) ? final.stats : {};
  const runOptions = storedRunOptions(final.params);
  const at = { job: job.name, runId, log };
  const afterTerminal = job.afterTerminal;
  if (afterTerminal) {
    await contained(at, 'run.after_terminal_failed', 'afterTerminal', () =>
      afterTerminal.call(job, {
        runId,
        status: final.status,
        startedAt: final.startedAt,
        stats,
        options: runOptions,
      }),
    );
  }
  if (options.logRunLine !== false) logRunLine(log, job.name, runId, jobOutcome, elapsedMs);
  const listener = options.onRunFinished;
  if (listener) {
    const event: RunFinishedEvent = {
      job: job.name,
      run_id: runId,
      status: final.status,
      outcome: jobOutcome,
      elapsedMs,
      stats,
      options: runOptions,
    };
    await contained(at, 'run.finished_hook_failed', 'onRunFinished hook', () => listener(event));
  }
  return { outcome: jobOutcome, status: final.status, record: final };
}

/** Awaits a hook after the terminal write; a throw or rejection is logged as `event`, never passed on. */
async function contained(
  at: { readonly job: string; readonly runId: string; readonly log: Logger },
  event: string,
  what: string,
  hook: () => void | Promise<void>,
): Promise<void> {
  try {
    await hook();
  } catch (thrown) {
    at.log.error(
      { target: RECOVERABLE_TARGET, event, job: at.job, run_id: at.runId, error: messageOf(thrown) },
      `${what} failed for ${at.job} (run ${at.runId}); the run's status is written`,
    );
  }
}

function isRunOutcome(value: unknown): value is RunOutcome {
  if (!isJsonObject(value)) return false;
  switch (value['kind']) {
    case 'completed':
      return true;
    case 'paused':
      return value['cursor'] instanceof Uint8Array;
    case 'failed':
      return typeof value['message'] === 'string';
    default:
      return false;
  }
}

function countOf(stats: unknown): number {
  if (!isJsonObject(stats)) return 0;
  const count = stats['count'];
  return typeof count === 'number' && Number.isFinite(count) ? count : 0;
}

async function runHandler(
  job: RecoverableJobHandler,
  factory: JobStoreFactory,
  record: RunRecord,
  signal: AbortSignal,
  log: Logger,
  lease: LeaseGuard,
): Promise<RunOutcome> {
  const corruption = describeCorruption(record);
  if (corruption !== null) {
    return failed(`run ${record.runId} of ${job.name} has a corrupted row: ${corruption}`);
  }
  const prepared = prepareStored(job, record.params as Record<string, unknown>);
  if (!prepared.ok) {
    return failed(`stored params of run ${record.runId} are not valid for ${job.name}: ${prepared.message}`);
  }
  // The estimate rides on the run's first checkpoint (one statement fewer per run); a run that
  // ends without one writes it on its own before the terminal write.
  let estimate: number | undefined;
  if (job.estimateTotal) {
    try {
      const total = await job.estimateTotal(prepared.params, prepared.options);
      if (typeof total === 'number' && Number.isFinite(total) && total >= 0) estimate = total;
    } catch (thrown) {
      log.warn(
        {
          target: RECOVERABLE_TARGET,
          event: 'run.estimate_failed',
          job: job.name,
          run_id: record.runId,
          error: messageOf(thrown),
        },
        `could not estimate the total of ${job.name}; progress has no ETA`,
      );
    }
  }
  if (lease.state() === 'lost') return failed(`run ${record.runId}: lease lost before the handler started`);
  const store = trackCheckpoints(
    factory.storeFor(record, prepared.params, prepared.options),
    record.cursor,
    lease,
    estimate,
  );
  const outcome = await runTracked(job, store, record, signal, log);
  const unwritten = store.pendingEstimate();
  if (unwritten !== undefined && lease.state() === 'held') {
    try {
      await factory.recordTotalEstimate(record, unwritten);
    } catch (thrown) {
      // A fence that refuses it refuses the terminal write too, which says so; any other error only costs the ETA.
      if (isLeaseLost(thrown)) lease.lost();
    }
  }
  // The lease is no longer trusted: whatever the handler said, the run stops at its last checkpoint that landed.
  if (lease.state() === 'untrusted' && outcome.kind !== 'completed') {
    return paused(store.lastCursor() ?? new Uint8Array(0));
  }
  return outcome;
}

async function runTracked(
  job: RecoverableJobHandler,
  store: TrackedStore,
  record: RunRecord,
  signal: AbortSignal,
  log: Logger,
): Promise<RunOutcome> {
  try {
    const outcome: unknown = await job.runResumable(store, signal);
    if (!isRunOutcome(outcome)) {
      return failed(`${job.name} returned something that is not a RunOutcome: ${JSON.stringify(outcome)}`);
    }
    // Paused by an outage: at the last checkpoint that landed, whatever the
    // loop believed; the reason is the cancel's or shutdown's when one stopped the retries.
    if (outcome.kind === 'paused' && outcome.reason === DATABASE_UNREACHABLE) {
      const cursor = store.lastCursor() ?? new Uint8Array(0);
      return signal.aborted ? paused(cursor) : paused(cursor, DATABASE_UNREACHABLE);
    }
    return outcome;
  } catch (thrown) {
    // A lost connection is not a failure of the run: it pauses at its last
    // checkpoint ('database unreachable', or the cancel/shutdown that stopped the retries).
    if (isConnectionLoss(thrown)) {
      log.warn(
        {
          target: RECOVERABLE_TARGET,
          event: 'run.database_unreachable',
          job: job.name,
          run_id: record.runId,
          error: messageOf(thrown),
        },
        `${job.name} run ${record.runId} lost the database; pausing at its last checkpoint`,
      );
      const cursor = store.lastCursor() ?? new Uint8Array(0);
      return signal.aborted ? paused(cursor) : paused(cursor, DATABASE_UNREACHABLE);
    }
    return failed(messageOf(thrown));
  }
}
