import type { JobCapabilities, JobOutcome, Logger } from '@oxicloud/scheduler';
import { capabilitiesOf, ok, silentLogger } from '@oxicloud/scheduler';
import { Kysely, PostgresDialect, type PostgresPool } from 'kysely';
import { DATABASE_UNREACHABLE, isConnectionLoss } from './connection-retry.js';
import type { RecoverableTables } from './db/recoverable-runs-table.js';
import type { RunFence } from './job-store-factory.js';
import { type LeaseSettings, leaseExpiredReason, leaseSettings } from './lease/lease-settings.js';
import { isDeadLocalOwner } from './lease/node-id.js';
import { type LeaseEnd, RunLeases } from './lease/run-leases.js';
import { PgJobStoreFactory } from './pg-job-store-factory.js';
import { messageOf, RecoverableError } from './recoverable-error.js';
import type { RecoverableJobHandler } from './recoverable-job-handler.js';
import {
  type AcquiredRun,
  acquireRun,
  type ExecutedRun,
  executeRun,
  InvalidParams,
  logRunLine,
  logRunStart,
  prepareTrigger,
  RECOVERABLE_TARGET,
  type RunArgs,
  type RunFinishedListener,
} from './run-or-resume.js';
import type { RunRepository } from './run-repository.js';
import type { RunStatus } from './run-status.js';
import { type RunSummary, toRunSummary } from './run-summary.js';
import { checkRecoverableSchema } from './schema/recoverable-schema.js';

/** Options of {@link RecoverableEngine}. */
export interface RecoverableEngineOptions {
  /** A pg `Pool` (or anything kysely's `PostgresDialect` accepts). The engine never ends it. Give this or `db`. */
  readonly pool?: PostgresPool;
  /** A consumer's own `Kysely` instance on Postgres, instead of `pool`. The engine never destroys it. */
  // biome-ignore lint/suspicious/noExplicitAny: a consumer's Kysely has its own database type
  readonly db?: Kysely<any>;
  /** @defaultValue a logger that drops everything */
  readonly logger?: Logger;
  /**
   * Where runs are stored. @defaultValue a {@link PgJobStoreFactory} on `pool`
   * (tests may hand a port of their own)
   */
  readonly repository?: RunRepository;
  /** Called after each terminal write (alerts and findings mails hook here); contained if it throws. */
  readonly onRunFinished?: RunFinishedListener;
  /**
   * How long a batch loop retries after the database went away before the run
   * lands `Paused` ('database unreachable'); handed to every `JobStore`.
   * @defaultValue 60000
   */
  readonly connectionRetryMs?: number;
  /**
   * How often the reconnect sweep tries to pause runs of this process whose
   * terminal write never landed. @defaultValue 2000
   */
  readonly reconnectSweepIntervalMs?: number;
  /**
   * This process's node id, written as the owner of the runs it executes
   * (`jobs.recoverable_runs.owner_node`). Use `<host>:<pid>:<6 hex>` (see
   * `createNodeId`): the boot sweep reads host and pid from it.
   * @defaultValue a fresh `createNodeId()` (a given `repository` brings its own)
   */
  readonly nodeId?: string;
  /** How long a lease lasts after each renewal (database clock). @defaultValue 30000 */
  readonly leaseMs?: number;
  /** How often the leases of this engine's runs are renewed; at most half the trust window. @defaultValue 10000 */
  readonly heartbeatMs?: number;
  /** How often the janitor pauses other nodes' runs whose lease expired (after {@link RecoverableEngine.start}). @defaultValue 10000 */
  readonly janitorIntervalMs?: number;
}

/** What {@link RecoverableEngine.trigger} answers. */
export interface TriggerResult {
  readonly run_id: string;
  /** `Running` for a started or resumed run; the active run's status when one was already active. */
  readonly status: RunStatus;
  /** `true` when a Paused run was resumed (same cursor, stats and params). */
  readonly resumed: boolean;
  /** `true` when a run was already Running or CancelRequested: nothing was started. */
  readonly already_running: boolean;
}

/** Arguments of {@link RecoverableEngine.runOrResume}. */
export interface EngineRunArgs extends RunArgs {
  /** Aborting it requests a cancel of the run (the run lands Paused with its cursor). */
  readonly signal?: AbortSignal;
  /** Emit the `job.run` line. @defaultValue true */
  readonly logRunLine?: boolean;
}

/** What {@link RecoverableEngine.cancel} answers. */
export interface CancelResult {
  readonly run_id: string;
  /** `CancelRequested` for a running run (or one already asked); `Paused` when the active run is paused. */
  readonly status: 'CancelRequested' | 'Paused';
}

/** Paging of {@link RecoverableEngine.listRuns}. */
export interface ListRunsOptions {
  /** 1–500. @defaultValue 50 */
  readonly limit?: number;
  /** @defaultValue 0 */
  readonly offset?: number;
}

/** A run this process is executing. */
export interface ActiveRun {
  readonly run_id: string;
  readonly job: string;
}

/** What {@link RecoverableEngine.shutdown} answers. */
export interface ShutdownResult {
  /** Runs that reached a terminal write in time (normally `Paused`, with their cursor). */
  readonly landed: ReadonlyArray<ActiveRun & { readonly status: RunStatus | null }>;
  /** Runs still executing when the timeout passed; their lease expires and a janitor (or this host's next boot) pauses them. */
  readonly pending: readonly ActiveRun[];
}

interface TrackedRun {
  readonly job: string;
  readonly controller: AbortController;
  readonly done: Promise<ExecutedRun>;
  result?: ExecutedRun;
}

const JOB_NAME = /^[a-z][a-z0-9_]*$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_LIST_LIMIT = 500;
const DEFAULT_LIST_LIMIT = 50;
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

/**
 * The recoverable-run engine as the server uses it: a catalog of
 * {@link RecoverableJobHandler}s, non-blocking triggers, cancel, run
 * listing, the boot sweep and graceful shutdown, on `jobs.recoverable_runs`.
 *
 * @example
 * ```ts
 * const engine = new RecoverableEngine({ pool, logger, onRunFinished: (e) => alerts.onRunFinished(e) });
 * engine.register(storageMigration);
 * await engine.sweep();                                    // at boot, before anything triggers
 * const { run_id } = await engine.trigger('storage_migration', { params: { target: 's3' } });
 * const run = await engine.getRun('storage_migration', run_id);
 * console.log(run.status, run.progress.fraction, run.progress.eta_seconds);
 * process.on('SIGTERM', () => engine.shutdown({ timeoutMs: 20_000 }));
 * ```
 */
export class RecoverableEngine {
  readonly #factory: RunRepository;
  readonly #db: Kysely<RecoverableTables>;
  /** Settles once the schema check passed (cleared when it fails, so the next call checks again). */
  #schemaReady: Promise<void> | undefined;
  readonly #log: Logger;
  readonly #onRunFinished: RunFinishedListener | undefined;
  readonly #jobs = new Map<string, RecoverableJobHandler>();
  readonly #active = new Map<string, TrackedRun>();
  /** Why each own run was asked to stop (its pause reason). */
  readonly #stopReasons = new Map<string, string>();
  /** Own runs no longer executed here whose terminal write never landed: the reconnect sweep pauses them. */
  readonly #unlanded = new Map<string, RunFence>();
  readonly #leases: RunLeases;
  readonly #settings: LeaseSettings;
  #janitorTimer: NodeJS.Timeout | undefined;
  /** The node id written as the owner of the runs this engine executes. */
  readonly nodeId: string;
  /** Fires once shutdown has waited: terminal writes stop retrying. */
  readonly #stopped = new AbortController();
  readonly #reconnectSweepIntervalMs: number;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #closing = false;

  constructor(options: RecoverableEngineOptions) {
    if (!options?.pool && !options?.db) {
      throw new TypeError(
        'RecoverableEngine needs a pg pool (options.pool) or a Kysely instance (options.db)',
      );
    }
    const retry = options.connectionRetryMs;
    if (retry !== undefined && (!Number.isFinite(retry) || retry < 0)) {
      throw new TypeError(`connectionRetryMs must be a non-negative number of milliseconds, got ${retry}`);
    }
    const db: Kysely<RecoverableTables> = options.db
      ? (options.db as Kysely<RecoverableTables>)
      : new Kysely<RecoverableTables>({
          dialect: new PostgresDialect({ pool: options.pool as PostgresPool }),
        });
    this.#db = db;
    this.#settings = leaseSettings(options);
    const factory =
      options.repository ??
      new PgJobStoreFactory(db, {
        ...(retry === undefined ? {} : { connectionRetryMs: retry }),
        ...(options.nodeId === undefined ? {} : { nodeId: options.nodeId }),
        leaseMs: this.#settings.leaseMs,
      });
    this.#factory = factory;
    this.nodeId = factory.nodeId;
    this.#log = options.logger ?? silentLogger;
    this.#onRunFinished = options.onRunFinished;
    this.#reconnectSweepIntervalMs = options.reconnectSweepIntervalMs ?? 2_000;
    this.#leases = new RunLeases({
      repository: factory,
      settings: this.#settings,
      logger: this.#log,
      logTarget: RECOVERABLE_TARGET,
      onEnd: (end) => this.#leaseEnded(end),
      onCancelRequested: (runId) => {
        if (!this.#stopReasons.has(runId)) this.#stopReasons.set(runId, 'cancel requested');
        this.#active.get(runId)?.controller.abort();
      },
    });
  }

  /** The validated lease settings (lease, heartbeat, janitor interval, trust window), in milliseconds. */
  get leaseSettings(): LeaseSettings {
    return this.#settings;
  }

  /** Adds a job. Throws `INVALID_JOB_NAME` (not snake_case) or `DUPLICATE_JOB`. */
  register(handler: RecoverableJobHandler): void {
    if (typeof handler?.name !== 'string' || !JOB_NAME.test(handler.name)) {
      throw new RecoverableError(
        'INVALID_JOB_NAME',
        `recoverable job name ${JSON.stringify(handler?.name)} is not snake_case (allowed: /^[a-z][a-z0-9_]*$/)`,
      );
    }
    if (typeof handler.runResumable !== 'function') {
      throw new TypeError(`recoverable job ${handler.name} has no runResumable(store, signal) method`);
    }
    if (this.#jobs.has(handler.name)) {
      throw new RecoverableError(
        'DUPLICATE_JOB',
        `a recoverable job named ${handler.name} is already registered`,
      );
    }
    this.#jobs.set(handler.name, handler);
  }

  /** `true` when a job of this name is registered. */
  has(name: string): boolean {
    return this.#jobs.has(name);
  }

  /** The registered job names, in registration order. */
  names(): string[] {
    return [...this.#jobs.keys()];
  }

  /** What job `name` declared (gaps filled); throws `UNKNOWN_JOB` for a name not registered. */
  capabilities(name: string): JobCapabilities {
    const job = this.#jobs.get(name);
    if (!job) {
      throw new RecoverableError(
        'UNKNOWN_JOB',
        `no recoverable job named ${name}; known: ${this.names().join(', ')}`,
      );
    }
    return capabilitiesOf(job);
  }

  /** Runs this process is executing right now. */
  activeRuns(): ActiveRun[] {
    return [...this.#active].map(([run_id, t]) => ({ run_id, job: t.job }));
  }

  /**
   * Starts or resumes the job's run and returns at once (steps 1–4 awaited,
   * 5–6 in the background). Idempotent: while a run is active it returns
   * that run's id and status with `already_running: true`. A Paused run is
   * resumed with its stored params (new ones are ignored, even invalid
   * ones: they refuse only a fresh start). `force` and `deep` are the run's
   * options (`store.options`), validated here once; the run's details show them among its params.
   *
   * Throws `UNKNOWN_JOB`, `INVALID_PARAMS` (the validator's message) or `SHUTTING_DOWN`.
   */
  async trigger(name: string, args: RunArgs = {}): Promise<TriggerResult> {
    const sentAt = performance.now();
    const { job, acquired } = await this.#acquire(name, args);
    if (acquired.kind === 'already_running') {
      return {
        run_id: acquired.record.runId,
        status: acquired.record.status,
        resumed: false,
        already_running: true,
      };
    }
    void this.#execute(job, acquired, { leaseSentAt: sentAt });
    return {
      run_id: acquired.record.runId,
      status: acquired.record.status,
      resumed: acquired.kind === 'resumed',
      already_running: false,
    };
  }

  /**
   * The awaited variant (Part 1 ticks, `consistency_batch`): starts or
   * resumes the run and resolves with its bridged `JobOutcome`; a run already
   * active → `ok(0, { skipped: 'already_running', run_id })`.
   *
   * Throws `UNKNOWN_JOB`, `INVALID_PARAMS` or `SHUTTING_DOWN`.
   */
  async runOrResume(name: string, args: EngineRunArgs = {}): Promise<JobOutcome> {
    const started = performance.now();
    const { job, acquired } = await this.#acquire(name, args);
    if (acquired.kind === 'already_running') {
      const outcome = ok(0, { skipped: 'already_running', run_id: acquired.record.runId });
      if (args.logRunLine !== false) {
        logRunLine(this.#log, name, acquired.record.runId, outcome, Math.round(performance.now() - started));
      }
      return outcome;
    }
    const executed = await this.#execute(job, acquired, {
      ...(args.signal ? { signal: args.signal } : {}),
      logRunLine: args.logRunLine !== false,
      startedAtMs: started,
      leaseSentAt: started,
    });
    return executed.outcome;
  }

  /**
   * Asks the job's Running run to pause (`CancelRequested`; the handler
   * lands `Paused` at its next batch boundary). Already CancelRequested → the
   * same answer; a Paused run → returned as is with status `Paused`.
   *
   * Throws `UNKNOWN_JOB`, or `NO_ACTIVE_RUN` when the job has no active run.
   */
  async cancel(name: string): Promise<CancelResult> {
    this.#job(name);
    try {
      return await this.#cancel(name);
    } catch (thrown) {
      // The database is away: a run this process executes is stopped here, and
      // lands Paused ('cancel requested') as soon as its terminal write can land.
      const own = [...this.#active].find(([, t]) => t.job === name);
      if (!own || !isConnectionLoss(thrown)) throw thrown;
      const [runId, tracked] = own;
      this.#stopReasons.set(runId, 'cancel requested');
      tracked.controller.abort();
      this.#log.warn(
        {
          target: RECOVERABLE_TARGET,
          event: 'run.cancel_deferred',
          job: name,
          run_id: runId,
          error: messageOf(thrown),
        },
        `the database is unreachable: run ${runId} of ${name} stops now and lands Paused once the database is back`,
      );
      return { run_id: runId, status: 'CancelRequested' };
    }
  }

  async #cancel(name: string): Promise<CancelResult> {
    await this.#schema();
    for (let attempt = 0; attempt < 3; attempt++) {
      const runId = await this.#factory.requestCancel(name);
      if (runId !== null) {
        const own = this.#active.get(runId);
        if (own) {
          this.#stopReasons.set(runId, 'cancel requested');
          own.controller.abort();
        }
        return { run_id: runId, status: 'CancelRequested' };
      }
      const active = await this.#factory.activeRun(name);
      if (active === null) break;
      if (active.status === 'CancelRequested' || active.status === 'Paused') {
        return { run_id: active.runId, status: active.status };
      }
      // It turned Running between the two statements (a resume): try again.
    }
    throw new RecoverableError(
      'NO_ACTIVE_RUN',
      `${name} has no Running, CancelRequested or Paused run to cancel`,
    );
  }

  /** The job's runs, newest first. Throws `UNKNOWN_JOB` or `INVALID_PAGINATION`. */
  async listRuns(name: string, options: ListRunsOptions = {}): Promise<RunSummary[]> {
    this.#job(name);
    const limit = options.limit ?? DEFAULT_LIST_LIMIT;
    const offset = options.offset ?? 0;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
      throw new RecoverableError(
        'INVALID_PAGINATION',
        `limit must be an integer from 1 to ${MAX_LIST_LIMIT}`,
      );
    }
    if (!Number.isInteger(offset) || offset < 0) {
      throw new RecoverableError('INVALID_PAGINATION', 'offset must be a non-negative integer');
    }
    await this.#schema();
    const records = await this.#factory.listRuns(name, limit, offset);
    return records.map((r) => toRunSummary(r));
  }

  /** One run of the job. Throws `UNKNOWN_JOB`, `INVALID_RUN_ID` (not a UUID) or `RUN_NOT_FOUND`. */
  async getRun(name: string, runId: string): Promise<RunSummary> {
    this.#job(name);
    if (typeof runId !== 'string' || !UUID.test(runId)) {
      throw new RecoverableError('INVALID_RUN_ID', `run id ${JSON.stringify(runId)} is not a UUID`);
    }
    await this.#schema();
    const record = await this.#factory.getRun(name, runId.toLowerCase());
    if (!record) throw new RecoverableError('RUN_NOT_FOUND', `${name} has no run ${runId}`);
    return toRunSummary(record);
  }

  /** The job's active run if any, else its newest run, else `null` (the jobs listing's "last run"). */
  async latestRun(name: string): Promise<RunSummary | null> {
    this.#job(name);
    await this.#schema();
    const record = await this.#factory.latestRun(name);
    return record ? toRunSummary(record) : null;
  }

  /**
   * The boot sweep: Running or CancelRequested runs owned by a dead process
   * of this host (its pid not alive, or this process's own pid: an earlier
   * incarnation) or by no node (rows older than schema version 4) → Paused,
   * with 'server restart mid-run' in their pause history. Runs another live
   * node executes are left alone (their lease tells when they are lost).
   * Never resumes. Call once at boot, before anything triggers (or call
   * {@link start}). Returns the count.
   */
  async sweep(): Promise<number> {
    await this.#schema();
    const swept = await this.#factory.sweep((owner) => owner !== this.nodeId && isDeadLocalOwner(owner));
    if (swept.length > 0) {
      this.#log.warn(
        {
          target: RECOVERABLE_TARGET,
          event: 'run.boot_sweep',
          count: swept.length,
          runs: swept.map((s) => ({ job: s.jobName, run_id: s.runId })),
        },
        `boot sweep paused ${swept.length} run(s) left Running by a dead process of this host`,
      );
    }
    return swept.length;
  }

  /**
   * Boot: the {@link sweep}, then the janitor every `janitorIntervalMs` (a
   * first pass at once). Returns the count the sweep paused.
   */
  async start(): Promise<number> {
    const swept = await this.sweep();
    if (this.#janitorTimer === undefined && !this.#closing) {
      const tick = () => {
        this.pauseLostRuns().then(
          () => undefined,
          (error: unknown) =>
            this.#log.warn(
              { target: RECOVERABLE_TARGET, event: 'run.janitor_failed', error: messageOf(error) },
              'the run janitor could not look for lost runs; it tries again',
            ),
        );
      };
      tick();
      this.#janitorTimer = setInterval(tick, this.#settings.janitorIntervalMs);
      this.#janitorTimer.unref?.();
    }
    return swept;
  }

  /**
   * The janitor's pass: runs of other nodes whose lease expired (database
   * clock) → Paused with "node <id> lost mid-run", at their last checkpoint.
   * Never resumes them: a trigger does. Returns the runs paused.
   */
  async pauseLostRuns(): Promise<Array<{ run_id: string; job: string; owner_node: string | null }>> {
    await this.#schema();
    const lost = await this.#factory.pauseExpired(this.nodeId);
    const runs = lost.map((r) => ({ run_id: r.runId, job: r.jobName, owner_node: r.ownerNode }));
    if (runs.length > 0) {
      this.#log.warn(
        { target: RECOVERABLE_TARGET, event: 'run.node_lost', node: this.nodeId, count: runs.length, runs },
        `paused ${runs.length} run(s) whose node's lease expired: ${runs.map((r) => `${r.job} (node ${r.owner_node ?? 'unknown'})`).join(', ')}`,
      );
    }
    return runs;
  }

  /**
   * Graceful shutdown: stops new runs, requests cancel on this process's
   * own runs (aborts their signals and sets CancelRequested), and waits up to
   * `timeoutMs` for them to land (normally Paused with their cursor).
   */
  async shutdown(options: { timeoutMs?: number } = {}): Promise<ShutdownResult> {
    this.#closing = true;
    const timeoutMs = options.timeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
    const tracked = [...this.#active];
    await Promise.all(tracked.map(([runId]) => this.#requestStop(runId, 'server shutdown')));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(tracked.map(([, t]) => t.done)),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    // Terminal writes still waiting for the database give up; their lease expires and a janitor
    // (or this host's next boot) pauses those runs.
    this.#stopped.abort();
    clearTimeout(this.#reconnectTimer);
    clearInterval(this.#janitorTimer);
    this.#leases.stop();
    const landed: Array<ActiveRun & { status: RunStatus | null }> = [];
    const pending: ActiveRun[] = [];
    for (const [run_id, t] of tracked) {
      if (t.result) landed.push({ run_id, job: t.job, status: t.result.status });
      else pending.push({ run_id, job: t.job });
    }
    this.#log.info(
      { target: RECOVERABLE_TARGET, event: 'engine.shutdown', landed, pending },
      `recoverable engine stopped: ${landed.length} run(s) landed, ${pending.length} still running`,
    );
    return { landed, pending };
  }

  /** Resolves once no run of this process is executing (tests, orderly stops). */
  async whenIdle(): Promise<void> {
    while (this.#active.size > 0) {
      await Promise.allSettled([...this.#active.values()].map((t) => t.done));
    }
  }

  #job(name: string): RecoverableJobHandler {
    const job = this.#jobs.get(name);
    if (!job) {
      const known = this.names();
      throw new RecoverableError(
        'UNKNOWN_JOB',
        `no recoverable job named ${JSON.stringify(name)}; registered: ${known.length ? known.join(', ') : '(none)'}`,
      );
    }
    return job;
  }

  /**
   * Checks once that `jobs.recoverable_runs` exists at the version this build
   * needs: `SCHEMA_MISSING` / `SCHEMA_OUTDATED` say to call `migrate()`
   * instead of a raw pg error. A failed check is retried on the next call.
   */
  #schema(): Promise<void> {
    this.#schemaReady ??= checkRecoverableSchema(this.#db).catch((error: unknown) => {
      this.#schemaReady = undefined;
      throw error;
    });
    return this.#schemaReady;
  }

  async #acquire(
    name: string,
    args: RunArgs,
  ): Promise<{ job: RecoverableJobHandler; acquired: AcquiredRun }> {
    const job = this.#job(name);
    const prepared = prepareTrigger(job, args);
    if (this.#closing) {
      throw new RecoverableError('SHUTTING_DOWN', `the server is shutting down; ${name} was not started`);
    }
    await this.#schema();
    // Invalid params refuse only a fresh run (acquireRun throws INVALID_PARAMS then):
    // a Paused run resumes with its stored params, an active one is returned as is.
    const acquired = await acquireRun(
      name,
      this.#factory,
      prepared.ok ? prepared : new InvalidParams(prepared.message),
    );
    if (acquired.kind !== 'already_running') logRunStart(this.#log, name, acquired);
    return { job, acquired };
  }

  #execute(
    job: RecoverableJobHandler,
    acquired: AcquiredRun,
    options: { signal?: AbortSignal; logRunLine?: boolean; startedAtMs?: number; leaseSentAt: number },
  ): Promise<ExecutedRun> {
    const runId = acquired.record.runId;
    const controller = new AbortController();
    const lease = this.#leases.hold(acquired.record, options.leaseSentAt);
    const external = options.signal;
    const onExternalAbort = () => void this.#requestStop(runId, 'stopped by its caller');
    external?.addEventListener('abort', onExternalAbort, { once: true });
    const done = executeRun(job, this.#factory, acquired.record, {
      logger: this.#log,
      signal: controller.signal,
      logRunLine: options.logRunLine ?? true,
      ...(this.#onRunFinished ? { onRunFinished: this.#onRunFinished } : {}),
      ...(options.startedAtMs === undefined ? {} : { startedAtMs: options.startedAtMs }),
      stopRetrying: this.#stopped.signal,
      pauseReason: () => this.#stopReasons.get(runId),
      lease,
    }).then((result) => {
      tracked.result = result;
      if (result.status === null && !result.leaseLost && !this.#stopped.signal.aborted) {
        this.#markUnlanded(acquired.record);
      }
      return result;
    });
    const tracked: TrackedRun = { job: job.name, controller, done };
    this.#active.set(runId, tracked);
    void done.finally(() => {
      this.#leases.release(runId);
      this.#active.delete(runId);
      this.#stopReasons.delete(runId);
      external?.removeEventListener('abort', onExternalAbort);
    });
    if (external?.aborted) onExternalAbort();
    return done;
  }

  /**
   * The reconnect sweep: runs of this process that no longer execute here but
   * whose terminal write never landed → Paused at their last checkpoint
   * ('database unreachable'). Retried every `reconnectSweepIntervalMs` until
   * the database answers; returns the ids paused by this call.
   */
  async sweepOwnRuns(): Promise<string[]> {
    const ids = [...this.#unlanded.keys()];
    if (ids.length === 0) return [];
    const paused = await this.#factory.pauseRuns([...this.#unlanded.values()], DATABASE_UNREACHABLE);
    for (const id of ids) this.#unlanded.delete(id);
    if (paused.length > 0) {
      this.#log.warn(
        { target: RECOVERABLE_TARGET, event: 'run.reconnect_sweep', count: paused.length, run_ids: paused },
        `the database is back: paused ${paused.length} run(s) of this process left Running`,
      );
    }
    return paused;
  }

  #markUnlanded(run: RunFence): void {
    this.#unlanded.set(run.runId, run);
    if (this.#reconnectTimer !== undefined) return;
    const tick = () => {
      this.#reconnectTimer = undefined;
      if (this.#stopped.signal.aborted || this.#unlanded.size === 0) return;
      this.sweepOwnRuns().then(
        () => undefined,
        () => {
          this.#reconnectTimer = setTimeout(tick, this.#reconnectSweepIntervalMs);
          this.#reconnectTimer.unref?.();
        },
      );
    };
    this.#reconnectTimer = setTimeout(tick, this.#reconnectSweepIntervalMs);
    this.#reconnectTimer.unref?.();
  }

  /** A run's lease ended here: stop its handler now (it writes nothing more, or only its fenced landing). */
  #leaseEnded(end: LeaseEnd): void {
    const tracked = this.#active.get(end.runId);
    if (end.cause === 'trust') {
      const reason = end.databaseUnreachable ? DATABASE_UNREACHABLE : leaseExpiredReason(this.nodeId);
      if (!this.#stopReasons.has(end.runId)) this.#stopReasons.set(end.runId, reason);
      this.#log.warn(
        {
          target: RECOVERABLE_TARGET,
          event: 'run.lease_untrusted',
          job: tracked?.job,
          run_id: end.runId,
          node: this.nodeId,
          database_unreachable: end.databaseUnreachable,
        },
        `run ${end.runId}: no lease renewal within the trust window (${this.#settings.trustMs} ms); ` +
          'it stops now and lands Paused at its last checkpoint unless another node took it over',
      );
    }
    tracked?.controller.abort();
  }

  async #requestStop(runId: string, reason: string): Promise<void> {
    if (!this.#stopReasons.has(runId)) this.#stopReasons.set(runId, reason);
    this.#active.get(runId)?.controller.abort();
    try {
      await this.#factory.requestCancelById(runId);
    } catch (thrown) {
      this.#log.error(
        { target: RECOVERABLE_TARGET, event: 'run.cancel_failed', run_id: runId, error: messageOf(thrown) },
        `could not set CancelRequested on run ${runId}`,
      );
    }
  }
}
