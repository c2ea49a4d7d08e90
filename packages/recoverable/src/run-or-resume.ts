import { err, type JobOutcome, type Logger, logJobRun, ok, silentLogger } from '@oxicloud/scheduler';
import { DATABASE_UNREACHABLE, isConnectionLoss } from './connection-retry.js';
import type { JobStore } from './job-store.js';
import type { JobStoreFactory } from './job-store-factory.js';
import type { LeaseGuard } from './lease/run-leases.js';
import { messageOf, RecoverableError } from './recoverable-error.js';
import type { ParamsValidation, RecoverableJobHandler } from './recoverable-job-handler.js';
import {
  type RunOptions,
  storedJobParams,
  storedParams,
  storedRunOptions,
  triggerOptions,
} from './run-options.js';
import { completed, failed, paused, type RunOutcome } from './run-outcome.js';
import { describeCorruption, isJsonObject, type RunRecord } from './run-record.js';
import type { RunStatus } from './run-status.js';
import type { RunSummary } from './run-summary.js';
import { toHex } from './run-summary.js';

/** Log target of the `job.run` line (shared with the scheduler, as the plan's logging schema says). */
/** Log target of the engine's own lines (run start, boot sweep, hook failures). */
export const RECOVERABLE_TARGET = 'oxicloud::recoverable';

/** Trigger arguments of a recoverable run. */
export interface RunArgs {
  /**
   * Run params, validated by the job's `validateParams` (without `force` /
   * `deep` keys: those are taken as the options); ignored when a Paused run
   * is resumed.
   */
  readonly params?: Readonly<Record<string, unknown>>;
  /** The run's `force` option (acceleration semantics, per job); wins over a `force` key in `params`. */
  readonly force?: boolean;
  /** The run's `deep` option (deep mode); wins over a `deep` key in `params`. */
  readonly deep?: boolean;
}

/** What `onRunFinished` receives after each terminal write. */
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

/** A hook called after each terminal write (alerts, findings mails). A throw or rejection is logged and contained. */
export type RunFinishedListener = (event: RunFinishedEvent) => void | Promise<void>;

/** Options of {@link runOrResume}. */
export interface RunOrResumeOptions extends RunArgs {
  readonly logger?: Logger;
  /** Handed to the handler; aborting it asks the handler to pause. */
  readonly signal?: AbortSignal;
  readonly onRunFinished?: RunFinishedListener;
  /**
   * Emit the `job.run` line on `oxicloud::scheduler`. Default `true`; off when
   * the Part 1 scheduler dispatches the run and logs that line itself.
   */
  readonly logRunLine?: boolean;
}

/** The result of steps 1–4: a run this caller now drives, or the one already active. */
export type AcquiredRun =
  | { readonly kind: 'started' | 'resumed'; readonly record: RunRecord }
  | { readonly kind: 'already_running'; readonly record: RunRecord };

/** The result of steps 5–6. */
export interface ExecutedRun {
  readonly outcome: JobOutcome;
  /** The terminal status written, or `null` when the terminal write itself failed. */
  readonly status: RunStatus | null;
  readonly record: RunRecord | null;
  /** `true` when the run's lease was lost (its fence refused a write): nothing more was written. */
  readonly leaseLost?: boolean;
}

/** `true` for the `LEASE_LOST` error of a fenced write (or of a lease this node no longer trusts). */
export function isLeaseLost(thrown: unknown): boolean {
  return thrown instanceof RecoverableError && thrown.code === 'LEASE_LOST';
}

const MAX_ACQUIRE_ATTEMPTS = 5;

/** How long the terminal write is retried on errors other than a lost connection. */
const FINISH_RETRY_MS = 120_000;
const FINISH_RETRY_MAX_DELAY_MS = 5_000;

/**
 * The terminal write, retried with backoff: while the database is
 * unreachable, until it lands or `stop` fires (shutdown); on any other error
 * for up to {@link FINISH_RETRY_MS}. A run must not stay `Running` in the
 * table once Postgres is back: a trigger would answer `already_running` for
 * a run nobody drives.
 */
async function finishWithRetry(
  factory: JobStoreFactory,
  run: RunRecord,
  outcome: RunOutcome,
  pauseReason: string | undefined,
  stop: AbortSignal | undefined,
  onRetry: (attempt: number, thrown: unknown) => void,
): Promise<RunRecord> {
  const deadline = performance.now() + FINISH_RETRY_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      // After an outage the time since the last checkpoint was not running time.
      const outage = attempt > 1 || (outcome.kind === 'paused' && outcome.reason === DATABASE_UNREACHABLE);
      return await factory.finishRun(run, outcome, pauseReason, outage ? 'last_progress' : 'now');
    } catch (thrown) {
      const delay = Math.min(FINISH_RETRY_MAX_DELAY_MS, 250 * 2 ** Math.min(attempt - 1, 20));
      const lost = isConnectionLoss(thrown);
      if (stop?.aborted || isLeaseLost(thrown) || /vanished/.test(messageOf(thrown))) throw thrown;
      if (!lost && performance.now() + delay > deadline) throw thrown;
      onRetry(attempt, thrown);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, delay);
        function done(): void {
          clearTimeout(timer);
          stop?.removeEventListener('abort', done);
          resolve();
        }
        stop?.addEventListener('abort', done, { once: true });
      });
    }
  }
}

/** Trigger arguments → the job's validated params and the run's options. */
export interface PreparedTrigger {
  readonly params: Record<string, unknown>;
  readonly options: RunOptions;
}

/**
 * Trigger arguments → what a fresh run stores: the options validated once
 * ({@link triggerOptions}: `force` / `deep` from the arguments or from the
 * params' keys of that name), then the job's `validateTriggerParams` (else
 * `validateParams`) on its own params, which never carry the options.
 */
export function prepareTrigger(
  job: RecoverableJobHandler,
  args: RunArgs,
): ({ ok: true } & PreparedTrigger) | { ok: false; message: string } {
  const split = triggerOptions(args);
  if (!split.ok) return split;
  const validated = validateWith(job, split.params, job.validateTriggerParams ?? job.validateParams);
  if (!validated.ok) return validated;
  return { ok: true, params: validated.params, options: split.options };
}

/**
 * A stored run → the params the handler sees (its own params re-validated
 * with the lenient `validateParams`: a stored run is never blocked by a rule
 * only new triggers follow) and its options.
 */
function prepareStored(
  job: RecoverableJobHandler,
  stored: Record<string, unknown>,
): ({ ok: true } & PreparedTrigger) | { ok: false; message: string } {
  const validated = validateWith(job, storedJobParams(stored), job.validateParams);
  if (!validated.ok) return validated;
  return { ok: true, params: validated.params, options: storedRunOptions(stored) };
}

function validateWith(
  job: RecoverableJobHandler,
  raw: Record<string, unknown>,
  validate: RecoverableJobHandler['validateParams'],
): { ok: true; params: Record<string, unknown> } | { ok: false; message: string } {
  if (!validate) return { ok: true, params: raw };
  let result: ParamsValidation;
  try {
    result = validate.call(job, raw);
  } catch (thrown) {
    return { ok: false, message: messageOf(thrown) };
  }
  if (result.ok && !isJsonObject(result.params)) {
    return { ok: false, message: `validateParams of ${job.name} returned params that are not an object` };
  }
  return result;
}

/**
 * Steps 1–4 of the plan. With valid trigger params the INSERT of a fresh
 * `Running` row comes first: the one-active-run index refuses it while the
 * job has an active run (Running, CancelRequested or Paused), so a fresh
 * run costs one round trip, not a read and then a write. Only when the index
 * refused it is the active run read: Paused → UPDATE to Running (stored
 * cursor, stats and params kept: the `params` given here are ignored);
 * Running/CancelRequested → `already_running`; gone meanwhile (it ended) →
 * INSERT again. Invalid trigger params read first: they refuse a fresh run
 * only, never the resume of a Paused one.
 */
export async function acquireRun(
  jobName: string,
  factory: JobStoreFactory,
  trigger: PreparedTrigger | InvalidParams,
): Promise<AcquiredRun> {
  let latest = trigger instanceof InvalidParams ? await factory.latestRun(jobName) : null;
  for (let attempt = 1; ; attempt++) {
    if (latest === null || latest.status === 'Completed' || latest.status === 'Failed') {
      // Trigger params matter only for a fresh run: a resume keeps its stored
      // params, so params that fail validation refuse only a fresh start.
      if (trigger instanceof InvalidParams) {
        throw new RecoverableError('INVALID_PARAMS', `invalid params for ${jobName}: ${trigger.message}`);
      }
      const inserted = await factory.insertRunning(jobName, storedParams(trigger.params, trigger.options));
      if (inserted) return { kind: 'started', record: inserted };
      // The one-active-run index refused it (an active run, or a racer won): read that run.
    } else if (latest.status === 'Paused') {
      const resumed = await factory.resumePaused(latest.runId);
      if (resumed) return { kind: 'resumed', record: resumed };
      // Someone else resumed (or cancelled) it first: read again.
    } else {
      return { kind: 'already_running', record: latest };
    }
    if (attempt >= MAX_ACQUIRE_ATTEMPTS) {
      throw new Error(`could not start or resume a run of ${jobName}: the active run kept changing under us`);
    }
    latest = await factory.latestRun(jobName);
  }
}

/** Trigger params that failed validation: they refuse a fresh run, never a resume. */
export class InvalidParams {
  constructor(readonly message: string) {}
}

/**
 * The bridged outcome of a run that has ended (Completed, Paused or
 * Failed), read back from its summary: what `runOrResume` returned for it.
 * `null` while the run is active. For listings that show a recoverable job's
 * last outcome beside Part 1 jobs'.
 */
export function outcomeOfRun(run: RunSummary): JobOutcome | null {
  const count = typeof run.stats['count'] === 'number' ? run.stats['count'] : 0;
  switch (run.status) {
    case 'Completed':
      return toJobOutcome(completed(), count, run.run_id);
    case 'Paused':
      return toJobOutcome(paused(Buffer.from(run.cursor_hex ?? '', 'hex')), count, run.run_id);
    case 'Failed':
      return toJobOutcome(failed(run.error_message ?? 'run failed'), count, run.run_id);
    default:
      return null;
  }
}

/**
 * The `RunOutcome` → `JobOutcome` bridge: completed → ok(count, { completed,
 * run_id }); paused → ok(count, { paused, cursor_hex, run_id }); failed →
 * err(message). `count` is the run's accumulated `stats.count`.
 */
export function toJobOutcome(outcome: RunOutcome, count: number, runId: string): JobOutcome {
  switch (outcome.kind) {
    case 'completed':
      return ok(count, { completed: true, run_id: runId });
    case 'paused':
      return ok(count, { paused: true, cursor_hex: toHex(outcome.cursor), run_id: runId });
    case 'failed':
      return err(outcome.message);
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

/**
 * Steps 5–6 of the plan for a run acquired by {@link acquireRun}: check the
 * row, re-validate the stored params, estimate the total, run the handler
 * with a store bound to the row, write the terminal status, bridge to a
 * `JobOutcome`, log `job.run`, call `onRunFinished`. Never throws.
 */
export async function executeRun(
  job: RecoverableJobHandler,
  factory: JobStoreFactory,
  record: RunRecord,
  options: Omit<RunOrResumeOptions, keyof RunArgs> & {
    readonly startedAtMs?: number;
    /** Fires when the terminal write should stop being retried (shutdown). */
    readonly stopRetrying?: AbortSignal;
    /** Why a pause without a reason of its own happened ('cancel requested', 'server shutdown'). */
    readonly pauseReason?: () => string | undefined;
    /** The run's lease on this node (the engine's heartbeat keeps it); without one the lease is renewed by checkpoints only. */
    readonly lease?: LeaseGuard;
  } = {},
): Promise<ExecutedRun> {
  const log = options.logger ?? silentLogger;
  const startedAtMs = options.startedAtMs ?? performance.now();
  const signal = options.signal ?? new AbortController().signal;
  const runId = record.runId;
  const lease = options.lease ?? alwaysHeld();
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

  const outcome = await runHandler(job, factory, record, signal, log, lease);
  const state = lease.state();
  if (state === 'lost') return leaseLostLine('a write of this run was refused by its fence');
  // No longer trusted: the work stopped at its last checkpoint; the landing below is fenced (it lands
  // only when no other node took the run over).

  let final: RunRecord;
  try {
    final = await finishWithRetry(
      factory,
      record,
      outcome,
      options.pauseReason?.(),
      options.stopRetrying,
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
  if (options.logRunLine !== false) logRunLine(log, job.name, runId, jobOutcome, elapsedMs);
  if (options.onRunFinished) {
    const event: RunFinishedEvent = {
      job: job.name,
      run_id: runId,
      status: final.status,
      outcome: jobOutcome,
      elapsedMs,
      stats: isJsonObject(final.stats) ? final.stats : {},
      options: storedRunOptions(final.params),
    };
    try {
      await options.onRunFinished(event);
    } catch (thrown) {
      log.error(
        {
          target: RECOVERABLE_TARGET,
          event: 'run.finished_hook_failed',
          job: job.name,
          run_id: runId,
          error: messageOf(thrown),
        },
        `onRunFinished hook failed for ${job.name}`,
      );
    }
  }
  return { outcome: jobOutcome, status: final.status, record: final };
}

/** A lease nobody tracks (standalone `runOrResume`): the fence still guards every write. */
function alwaysHeld(): LeaseGuard {
  let lost = false;
  return {
    state: () => (lost ? 'lost' : 'held'),
    renewed: () => undefined,
    lost: () => {
      lost = true;
    },
  };
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
  store: ReturnType<typeof trackCheckpoints>,
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

/**
 * A store that remembers the cursor of its last checkpoint that landed (else
 * the run's stored one), and writes the run's total `estimate` with its first
 * checkpoint (unless that checkpoint brings its own `totalEstimate`).
 */
function trackCheckpoints(
  store: JobStore,
  stored: Uint8Array | null,
  lease: LeaseGuard,
  estimate?: number,
): JobStore & { lastCursor(): Uint8Array | null; pendingEstimate(): number | undefined } {
  let last = stored;
  let pending = estimate;
  const runId = store.runId;
  return {
    get runId() {
      return store.runId;
    },
    get startedAt() {
      return store.startedAt;
    },
    get params() {
      return store.params;
    },
    get options() {
      return store.options;
    },
    get facts() {
      return store.facts;
    },
    get connectionRetryMs() {
      return store.connectionRetryMs;
    },
    status: () => store.status(),
    loadCursor: () => store.loadCursor(),
    async checkpoint(cursor, deltaCount, progress, writes) {
      const state = lease.state();
      if (state !== 'held') {
        throw new RecoverableError(
          'LEASE_LOST',
          state === 'lost'
            ? `run ${runId}: this node lost its lease; the checkpoint is not written`
            : `run ${runId}: this node no longer trusts its lease (no renewal within the trust window); the checkpoint is not written`,
        );
      }
      const sentAt = performance.now();
      const withEstimate =
        pending === undefined || progress?.totalEstimate !== undefined
          ? progress
          : { ...progress, totalEstimate: pending };
      try {
        await store.checkpoint(cursor, deltaCount, withEstimate, writes);
      } catch (thrown) {
        if (isLeaseLost(thrown)) lease.lost();
        throw thrown;
      }
      lease.renewed(sentAt);
      last = cursor;
      pending = undefined;
    },
    lastCursor: () => last,
    pendingEstimate: () => pending,
  };
}

/**
 * The `job.run` line, in the scheduler's schema: `target`, `event`, `job`,
 * `outcome` (`ok` | `err`), `count`, `cause` + `error` on err, `elapsed_ms`,
 * `source`, then the outcome's `extra` flattened (`completed`, `paused`,
 * `cursor_hex`, `skipped`, `run_id`).
 */
export function logRunLine(
  log: Logger,
  job: string,
  runId: string,
  outcome: JobOutcome,
  elapsedMs: number,
  source: 'tick' | 'trigger' = 'trigger',
): void {
  logJobRun(log, { job, outcome, elapsedMs, source, runId });
}

/**
 * The plan's `run_or_resume`: validate the trigger params, then steps 1–4
 * ({@link acquireRun}) and 5–6 ({@link executeRun}), awaited.
 *
 * - a fresh or resumed run → the bridged outcome of the handler;
 * - a run already active → `ok(0, { skipped: 'already_running', run_id })`;
 * - trigger params the job rejects → `err('invalid params for <job>: …')`, no row written;
 * - the database unreachable before the run starts → `err(…)`.
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
  const startedAtMs = performance.now();
  const log = options.logger ?? silentLogger;
  const prepared = prepareTrigger(job, options);
  let acquired: AcquiredRun;
  try {
    acquired = await acquireRun(
      job.name,
      factory,
      prepared.ok ? prepared : new InvalidParams(prepared.message),
    );
  } catch (thrown) {
    if (thrown instanceof RecoverableError && thrown.code === 'INVALID_PARAMS') return err(thrown.message);
    const message = `could not start or resume a run of ${job.name}: ${messageOf(thrown)}`;
    log.error(
      { target: RECOVERABLE_TARGET, event: 'run.start_failed', job: job.name, error: message },
      message,
    );
    return err(message);
  }
  if (acquired.kind === 'already_running') {
    const outcome = ok(0, { skipped: 'already_running', run_id: acquired.record.runId });
    if (options.logRunLine !== false) {
      logRunLine(log, job.name, acquired.record.runId, outcome, Math.round(performance.now() - startedAtMs));
    }
    return outcome;
  }
  logRunStart(log, job.name, acquired);
  const executed = await executeRun(job, factory, acquired.record, { ...options, startedAtMs });
  return executed.outcome;
}

/** The engine's info line when a run starts or resumes. */
export function logRunStart(log: Logger, job: string, acquired: AcquiredRun): void {
  log.info(
    {
      target: RECOVERABLE_TARGET,
      event: acquired.kind === 'resumed' ? 'run.resumed' : 'run.started',
      job,
      run_id: acquired.record.runId,
    },
    `${job} run ${acquired.record.runId} ${acquired.kind}`,
  );
}
