import type { JobCapabilities, JobOutcome, Logger } from '@oxicloud/scheduler';
import { capabilitiesOf, silentLogger } from '@oxicloud/scheduler';
import { Kysely, PostgresDialect, type PostgresPool } from 'kysely';
import type { RunArgs } from './acquire-run.js';
import { isConnectionLoss } from './connection-retry.js';
import type { RecoverableTables } from './db/recoverable-runs-table.js';
import type { RunFinishedListener } from './execute-run.js';
import { type LeaseSettings, leaseSettings } from './lease/lease-settings.js';
import { isDeadLocalOwner } from './lease/node-id.js';
import { type ActiveRun, OwnRuns, type ShutdownResult } from './own-runs.js';
import { PgJobStoreFactory } from './pg-job-store-factory.js';
import { messageOf, RecoverableError } from './recoverable-error.js';
import type { RecoverableJobHandler } from './recoverable-job-handler.js';
import { RECOVERABLE_TARGET } from './run-log.js';
import { awaitRun, startRun } from './run-or-resume.js';
import { isJsonObject } from './run-record.js';
import type { RunRepository } from './run-repository.js';
import type { RunStatus } from './run-status.js';
import { type RunSummary, toRunSummary } from './run-summary.js';
import { engineSchema, engineSchemaProblem } from './schema/engine-schema.js';
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
  /**
   * Called after each terminal write, once the job's own `afterTerminal` step
   * (a check's closing) has settled: alerts, findings mails and metrics hook
   * here and read the closed state. Contained if it throws.
   */
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
  /**
   * The engine's own Postgres schema, where `migrate()` put
   * `recoverable_runs` (give both the same name). Beside a real OxiCloud use
   * a schema of the engine's own, e.g. `SIDECAR_ENGINE_SCHEMA` (`oxijobs`):
   * OxiCloud's future tables take `jobs`. Lower-case letters, digits and `_`;
   * not one of OxiCloud's schemas (see `engineSchema`). A given `repository`
   * brings its own; the engine's schema check reads this one.
   * @defaultValue `jobs`
   */
  readonly schema?: string;
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
  /** The params (with the `force` / `deep` options) the run uses: for a resumed or active run its stored ones. */
  readonly params: Record<string, unknown>;
  /**
   * What the trigger asked for that the run does not use (a resumed run keeps
   * its stored params, an active one its own): key → the value asked; `{}` when none.
   */
  readonly params_not_applied: Record<string, unknown>;
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

const JOB_NAME = /^[a-z][a-z0-9_]*$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_LIST_LIMIT = 500;
const DEFAULT_LIST_LIMIT = 50;
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

/**
 * The recoverable-run engine as the server uses it: a catalog of
 * {@link RecoverableJobHandler}s, non-blocking triggers, cancel, run
 * listing, the boot sweep and graceful shutdown, on `jobs.recoverable_runs`
 * (or `recoverable_runs` of the engine schema given as `schema`).
 * A run goes the one way the standalone `runOrResume` goes (`startRun`:
 * acquire, execute, terminal write, the job's `afterTerminal`,
 * `onRunFinished`), hosted by the engine's own runs (`OwnRuns`: stop
 * signals, the lease heartbeat, pause reasons, terminal writes that never
 * landed).
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
  /** The engine schema the runs table lives in. */
  readonly #schemaName: string;
  /** Settles once the schema check passed (cleared when it fails, so the next call checks again). */
  #schemaReady: Promise<void> | undefined;
  readonly #log: Logger;
  readonly #onRunFinished: RunFinishedListener | undefined;
  readonly #jobs = new Map<string, RecoverableJobHandler>();
  /** The runs this process executes: their stop signals, leases, pause reasons and unlanded terminal writes. */
  readonly #own: OwnRuns;
  readonly #settings: LeaseSettings;
  #janitorTimer: NodeJS.Timeout | undefined;
  /** The node id written as the owner of the runs this engine executes. */
  readonly nodeId: string;
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
    const problem = options.schema === undefined ? null : engineSchemaProblem(options.schema);
    if (problem !== null) throw new TypeError(`RecoverableEngine option schema: ${problem}`);
    this.#schemaName = engineSchema(options.schema);
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
        schema: this.#schemaName,
      });
    this.#factory = factory;
    this.nodeId = factory.nodeId;
    this.#log = options.logger ?? silentLogger;
    this.#onRunFinished = options.onRunFinished;
    this.#own = new OwnRuns({
      repository: factory,
      settings: this.#settings,
      logger: this.#log,
      reconnectSweepIntervalMs: options.reconnectSweepIntervalMs ?? 2_000,
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
    if (handler.afterTerminal !== undefined && typeof handler.afterTerminal !== 'function') {
      throw new TypeError(
        `recoverable job ${handler.name}: afterTerminal must be a method (run) => Promise<void> when given`,
      );
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
    return this.#own.list();
  }

  /**
   * Starts or resumes the job's run and returns at once (steps 1–4 awaited,
   * 5–6 in the background: `startRun` on this engine's host). Idempotent:
   * while a run is active it returns that run's id and status with
   * `already_running: true`. A Paused run is resumed with its stored params
   * (new ones are ignored, even invalid ones: they refuse only a fresh
   * start). `force` and `deep` are the run's options (`store.options`),
   * validated here once; the run's details show them among its params.
   *
   * Throws `UNKNOWN_JOB`, `INVALID_PARAMS` (the validator's message) or `SHUTTING_DOWN`.
   */
  async trigger(name: string, args: RunArgs = {}): Promise<TriggerResult> {
    const job = await this.#runnable(name);
    const started = await startRun(job, this.#factory, { ...args, ...this.#runOptions() });
    return {
      run_id: started.record.runId,
      status: started.record.status,
      resumed: started.kind === 'resumed',
      already_running: started.kind === 'already_running',
      params: isJsonObject(started.record.params) ? { ...started.record.params } : {},
      params_not_applied: started.paramsNotApplied,
    };
  }

  /**
   * The awaited variant (Part 1 ticks, `consistency_batch`): the body of the
   * standalone `runOrResume` on this engine's runs (their leases, cancel,
   * shutdown). Resolves with the run's bridged `JobOutcome` once its
   * terminal write and the job's `afterTerminal` step are done; a run already
   * active → `ok(0, { skipped: 'already_running', run_id })`.
   *
   * Throws `UNKNOWN_JOB`, `INVALID_PARAMS` or `SHUTTING_DOWN`.
   */
  async runOrResume(name: string, args: EngineRunArgs = {}): Promise<JobOutcome> {
    const startedAtMs = performance.now();
    const job = await this.#runnable(name);
    return awaitRun(job, this.#factory, { ...args, ...this.#runOptions(), startedAtMs });
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
      const runId = this.#own.runOf(name);
      if (runId === undefined || !isConnectionLoss(thrown)) throw thrown;
      this.#own.stopHere(runId, 'cancel requested', true);
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
        this.#own.stopHere(runId, 'cancel requested', true);
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
    const { landed, pending } = await this.#own.shutdown(options.timeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS);
    clearInterval(this.#janitorTimer);
    this.#log.info(
      { target: RECOVERABLE_TARGET, event: 'engine.shutdown', landed, pending },
      `recoverable engine stopped: ${landed.length} run(s) landed, ${pending.length} still running`,
    );
    return { landed, pending };
  }

  /** Resolves once no run of this process is executing (tests, orderly stops). */
  whenIdle(): Promise<void> {
    return this.#own.whenIdle();
  }

  /**
   * The reconnect sweep: runs of this process that no longer execute here but
   * whose terminal write never landed → Paused at their last checkpoint
   * ('database unreachable'). Retried every `reconnectSweepIntervalMs` until
   * the database answers; returns the ids paused by this call.
   */
  sweepOwnRuns(): Promise<string[]> {
    return this.#own.sweepUnlanded();
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
   * Checks once that `recoverable_runs` exists in the engine schema at the version this build
   * needs: `SCHEMA_MISSING` / `SCHEMA_OUTDATED` say to call `migrate()`
   * instead of a raw pg error. A failed check is retried on the next call.
   */
  #schema(): Promise<void> {
    this.#schemaReady ??= checkRecoverableSchema(this.#db, { schema: this.#schemaName }).catch(
      (error: unknown) => {
        this.#schemaReady = undefined;
        throw error;
      },
    );
    return this.#schemaReady;
  }

  /** The job, once the engine can start a run of it: `UNKNOWN_JOB`, `SHUTTING_DOWN`, the schema check. */
  async #runnable(name: string): Promise<RecoverableJobHandler> {
    const job = this.#job(name);
    if (this.#closing) {
      throw new RecoverableError('SHUTTING_DOWN', `the server is shutting down; ${name} was not started`);
    }
    await this.#schema();
    return job;
  }

  /** What every run of this engine gets: its logger, its listener, its runs' host. */
  #runOptions() {
    return {
      logger: this.#log,
      host: this.#own,
      ...(this.#onRunFinished ? { onRunFinished: this.#onRunFinished } : {}),
    };
  }
}
