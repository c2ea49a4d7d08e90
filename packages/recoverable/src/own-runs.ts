import type { Logger } from '@oxicloud/scheduler';
import { DATABASE_UNREACHABLE } from './connection-retry.js';
import type { ExecutedRun } from './execute-run.js';
import type { RunFence } from './job-store-factory.js';
import { type LeaseSettings, leaseExpiredReason } from './lease/lease-settings.js';
import { type LeaseEnd, RunLeases } from './lease/run-leases.js';
import { messageOf } from './recoverable-error.js';
import type { HeldRun, RunHost } from './run-host.js';
import { RECOVERABLE_TARGET } from './run-log.js';
import type { RunRecord } from './run-record.js';
import type { RunRepository } from './run-repository.js';
import type { RunStatus } from './run-status.js';

/** A run this process is executing. */
export interface ActiveRun {
  readonly run_id: string;
  readonly job: string;
}

/** What `RecoverableEngine.shutdown` answers. */
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

/** Options of {@link OwnRuns}. */
export interface OwnRunsOptions {
  readonly repository: RunRepository;
  readonly settings: LeaseSettings;
  readonly logger: Logger;
  /** How often the reconnect sweep retries while the database does not answer. */
  readonly reconnectSweepIntervalMs: number;
}

/**
 * The runs one engine executes in this process, as their {@link RunHost}:
 * each run's abort controller and why it was asked to stop (its pause
 * reason), its lease (one heartbeat for all, `RunLeases`), the caller's
 * signal, and the runs whose terminal write never landed (the reconnect
 * sweep pauses them once the database is back). A stop asked here aborts the
 * handler at once; {@link requestStop} also sets `CancelRequested` in the row.
 */
export class OwnRuns implements RunHost {
  readonly #repository: RunRepository;
  readonly #log: Logger;
  readonly #settings: LeaseSettings;
  readonly #leases: RunLeases;
  readonly #active = new Map<string, TrackedRun>();
  /** Why each own run was asked to stop (its pause reason). */
  readonly #stopReasons = new Map<string, string>();
  /** Own runs no longer executed here whose terminal write never landed: the reconnect sweep pauses them. */
  readonly #unlanded = new Map<string, RunFence>();
  /** Fires once shutdown has waited: terminal writes stop retrying. */
  readonly #stopped = new AbortController();
  readonly #reconnectSweepIntervalMs: number;
  #reconnectTimer: NodeJS.Timeout | undefined;

  constructor(options: OwnRunsOptions) {
    this.#repository = options.repository;
    this.#log = options.logger;
    this.#settings = options.settings;
    this.#reconnectSweepIntervalMs = options.reconnectSweepIntervalMs;
    this.#leases = new RunLeases({
      repository: options.repository,
      settings: options.settings,
      logger: options.logger,
      logTarget: RECOVERABLE_TARGET,
      onEnd: (end) => this.#leaseEnded(end),
      onCancelRequested: (runId) => this.stopHere(runId, 'cancel requested'),
    });
  }

  hold(
    job: string,
    record: RunRecord,
    options: { readonly sentAt: number; readonly signal?: AbortSignal },
  ): HeldRun {
    const runId = record.runId;
    const controller = new AbortController();
    const lease = this.#leases.hold(record, options.sentAt);
    const external = options.signal;
    const onExternalAbort = () => void this.requestStop(runId, 'stopped by its caller');
    external?.addEventListener('abort', onExternalAbort, { once: true });
    let settle: (result: ExecutedRun) => void = () => undefined;
    const tracked: TrackedRun = {
      job,
      controller,
      done: new Promise<ExecutedRun>((resolve) => {
        settle = resolve;
      }),
    };
    this.#active.set(runId, tracked);
    if (external?.aborted) onExternalAbort();
    return {
      signal: controller.signal,
      lease,
      pauseReason: () => this.#stopReasons.get(runId),
      stopRetrying: this.#stopped.signal,
      release: (result) => {
        tracked.result = result;
        if (result.status === null && !result.leaseLost && !this.#stopped.signal.aborted) {
          this.#markUnlanded(record);
        }
        this.#leases.release(runId);
        this.#active.delete(runId);
        this.#stopReasons.delete(runId);
        external?.removeEventListener('abort', onExternalAbort);
        settle(result);
      },
    };
  }

  /** Runs this process is executing right now. */
  list(): ActiveRun[] {
    return [...this.#active].map(([run_id, t]) => ({ run_id, job: t.job }));
  }

  /** The id of the run of `job` this process executes, if any. */
  runOf(job: string): string | undefined {
    return [...this.#active].find(([, t]) => t.job === job)?.[0];
  }

  /**
   * Stops an own run's handler now (it lands Paused at its next boundary),
   * with `reason` as its pause reason unless it has one (`replace` overrides
   * it). `false` when this process does not execute the run.
   */
  stopHere(runId: string, reason: string, replace = false): boolean {
    const tracked = this.#active.get(runId);
    if (tracked === undefined) return false;
    if (replace || !this.#stopReasons.has(runId)) this.#stopReasons.set(runId, reason);
    tracked.controller.abort();
    return true;
  }

  /** {@link stopHere}, and `CancelRequested` in the run's row (logged when it cannot be written). */
  async requestStop(runId: string, reason: string): Promise<void> {
    this.stopHere(runId, reason);
    try {
      await this.#repository.requestCancelById(runId);
    } catch (thrown) {
      this.#log.error(
        { target: RECOVERABLE_TARGET, event: 'run.cancel_failed', run_id: runId, error: messageOf(thrown) },
        `could not set CancelRequested on run ${runId}`,
      );
    }
  }

  /** Resolves once no run of this process is executing. */
  async whenIdle(): Promise<void> {
    while (this.#active.size > 0) {
      await Promise.allSettled([...this.#active.values()].map((t) => t.done));
    }
  }

  /**
   * Asks every own run to stop ('server shutdown'), waits up to `timeoutMs`
   * for them to land, then stops retrying terminal writes and the lease
   * heartbeat. Returns what landed and what did not.
   */
  async shutdown(timeoutMs: number): Promise<ShutdownResult> {
    const tracked = [...this.#active];
    await Promise.all(tracked.map(([runId]) => this.requestStop(runId, 'server shutdown')));
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
    this.#leases.stop();
    const landed: Array<ActiveRun & { status: RunStatus | null }> = [];
    const pending: ActiveRun[] = [];
    for (const [run_id, t] of tracked) {
      if (t.result) landed.push({ run_id, job: t.job, status: t.result.status });
      else pending.push({ run_id, job: t.job });
    }
    return { landed, pending };
  }

  /**
   * The reconnect sweep: own runs that no longer execute here but whose
   * terminal write never landed → Paused at their last checkpoint
   * ('database unreachable'). Returns the ids paused by this call.
   */
  async sweepUnlanded(): Promise<string[]> {
    const ids = [...this.#unlanded.keys()];
    if (ids.length === 0) return [];
    const paused = await this.#repository.pauseRuns([...this.#unlanded.values()], DATABASE_UNREACHABLE);
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
      this.sweepUnlanded().then(
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
      const nodeId = this.#repository.nodeId;
      const reason = end.databaseUnreachable ? DATABASE_UNREACHABLE : leaseExpiredReason(nodeId);
      if (!this.#stopReasons.has(end.runId)) this.#stopReasons.set(end.runId, reason);
      this.#log.warn(
        {
          target: RECOVERABLE_TARGET,
          event: 'run.lease_untrusted',
          job: tracked?.job,
          run_id: end.runId,
          node: nodeId,
          database_unreachable: end.databaseUnreachable,
        },
        `run ${end.runId}: no lease renewal within the trust window (${this.#settings.trustMs} ms); ` +
          'it stops now and lands Paused at its last checkpoint unless another node took it over',
      );
    }
    tracked?.controller.abort();
  }
}
