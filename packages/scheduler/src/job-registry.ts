import { recordAndRelease, renewWhileRunning } from './coordinated-run.js';
import { capabilitiesOf } from './job-capabilities.js';
import type { JobHandler, JobOutcome, JobRunArgs } from './job-handler.js';
import { defaultRunArgs, err, ok } from './job-handler.js';
import { type RegisterOptions, validateRegistration } from './job-registration.js';
import { logJobRun, SCHEDULER_TARGET } from './job-run-line.js';
import type { JobOutcomeEvent, JobSummary, LastOutcome, RunSource } from './job-summary.js';
import type { Logger } from './logger.js';
import { LoopSleeps, MAX_DELAY_MS } from './loop-sleeps.js';
import { messageOf, SchedulerError } from './scheduler-error.js';
import { superviseRun } from './supervised-run.js';
import type { MisfirePolicy, TickCoordinator } from './tick-coordinator.js';

export interface JobRegistryOptions {
  /** Where `job.run`, `job.tick_skipped` and the start-up line go. */
  readonly logger: Logger;
  /**
   * Called after every run (tick or trigger) with its outcome; alerts hook in
   * here. Anything it throws or rejects with is logged and contained.
   */
  readonly onOutcome?: (event: JobOutcomeEvent) => void | Promise<void>;
  /** The clock for schedules, timestamps and elapsed times. @defaultValue `() => new Date()` */
  readonly now?: () => Date;
  /**
   * How long {@link JobRegistry.stop} waits for running handlers after
   * aborting their signals. @defaultValue 10_000
   */
  readonly stopGraceMs?: number;
  /**
   * Shares ticks and run exclusivity with the other processes on the same
   * database (`PgTickCoordinator` of `@oxicloud/cluster`): slots from the
   * coordinator's clock, one winner per slot, one run per job cluster-wide,
   * every run recorded. Without one the registry is a single process (its
   * own clock and in-memory permit, nothing persisted).
   */
  readonly coordinator?: TickCoordinator;
}

/** The outcome a trigger gets while the same job is already running. */
export const ALREADY_RUNNING_SKIP = 'already_running';

interface RegisteredJob {
  readonly handler: JobHandler;
  readonly intervalMs: number | null;
  readonly timeoutMs: number | null;
  readonly misfire: MisfirePolicy;
  /** `RegisterOptions.ready`: `null` when this process can run the job now, else why not. */
  readonly ready: (() => Promise<string | null>) | undefined;
  /** Epoch ms of the next tick; only set for periodic jobs while the loop runs. */
  nextRunAt: number | null;
  last: LastOutcome | null;
  /** The single in-flight permit: non-null while a run holds it. */
  current: { readonly since: number; readonly controller: AbortController } | null;
}

/**
 * The catalogue of named jobs and their single supervisor loop (Part 1 of
 * the job plan).
 *
 * **Exclusivity.** Each job has one in-flight permit. A tick that finds it
 * held is skipped (never queued): it logs `job.tick_skipped` with
 * `running_for_ms` and `next_run_at` advances by one interval. A trigger that
 * finds it held returns `ok(0, { skipped: 'already_running' })` at once.
 *
 * **Dispatch.** One loop sleeps until the earliest `next_run_at`, then
 * dispatches that job. It awaits the run, but only until the next job (this
 * one included) is due: two jobs due at the same instant run one after the
 * other, while a run that outlives its interval keeps its permit and runs on
 * in the background so the loop reaches the next tick on time and reports the
 * overrun as `job.tick_skipped` instead of stalling silently.
 *
 * **Timeout and containment.** With a timeout, the handler's `AbortSignal`
 * fires when it trips, the run ends as `err('job <name> timed out after N ms')`
 * with cause `timeout`, and the permit is released at that moment even if the
 * handler ignores the signal. A throw, a rejection or a non-outcome return
 * ends as `err(message)` with cause `panicked`; the loop carries on.
 *
 * Every run writes one `job.run` info line and calls `onOutcome`.
 *
 * @example
 * ```ts
 * import { JobRegistry, ok } from '@oxicloud/scheduler';
 *
 * const registry = new JobRegistry({ logger });
 * registry.register({ name: 'trash_cleanup', run: async () => ok(3) }, 24 * 3600_000, null);
 * registry.start();
 * await registry.trigger('trash_cleanup', { force: true }); // → { kind: 'ok', count: 3, extra: {} }
 * await registry.stop();
 * ```
 */
export class JobRegistry {
  readonly #logger: Logger;
  readonly #onOutcome: ((event: JobOutcomeEvent) => void | Promise<void>) | undefined;
  readonly #now: () => Date;
  readonly #stopGraceMs: number;
  readonly #coordinator: TickCoordinator | undefined;
  readonly #jobs = new Map<string, RegisteredJob>();
  /** Handler promises not yet settled (including ones that outlived their timeout). */
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #sleeps = new LoopSleeps();
  #running = false;
  #loop: Promise<void> | null = null;

  constructor(options: JobRegistryOptions) {
    this.#logger = options.logger;
    this.#onOutcome = options.onOutcome;
    this.#now = options.now ?? (() => new Date());
    const grace = options.stopGraceMs ?? 10_000;
    if (!Number.isFinite(grace) || grace < 0) {
      throw new SchedulerError(
        'INVALID_TIMEOUT',
        `stopGraceMs must be a finite number of milliseconds >= 0, got ${String(grace)}`,
      );
    }
    this.#stopGraceMs = grace;
    this.#coordinator = options.coordinator;
  }

  /**
   * Adds a job. `intervalMs = null` makes it on-demand only (trigger, never a
   * tick); `timeoutMs = null` lets a run take as long as it takes.
   *
   * @throws SchedulerError `INVALID_JOB_NAME` (not snake_case), `DUPLICATE_JOB`,
   *   `INVALID_INTERVAL` / `INVALID_TIMEOUT` (not a finite number > 0).
   */
  register(
    handler: JobHandler,
    intervalMs: number | null,
    timeoutMs: number | null,
    options: RegisterOptions = {},
  ): void {
    const { name, misfire, ready } = validateRegistration(handler, intervalMs, timeoutMs, options, (n) =>
      this.#jobs.has(n),
    );
    const job: RegisteredJob = {
      handler,
      intervalMs,
      timeoutMs,
      misfire,
      ready,
      nextRunAt: null,
      last: null,
      current: null,
    };
    if (this.#running && intervalMs !== null) job.nextRunAt = this.#firstWake(intervalMs, this.#clock());
    this.#jobs.set(name, job);
    this.#wake();
  }

  /** Whether a job of that name is registered. */
  has(name: string): boolean {
    return this.#jobs.has(name);
  }

  /** One job's summary, or `undefined` when no job has that name. */
  get(name: string): JobSummary | undefined {
    const job = this.#jobs.get(name);
    return job === undefined ? undefined : summarise(job);
  }

  /** Every job's summary, in registration order. */
  list(): JobSummary[] {
    return [...this.#jobs.values()].map(summarise);
  }

  /**
   * Runs a job now, outside the tick loop, with the same timeout,
   * containment, exclusivity and log line as a tick.
   *
   * @returns `undefined` when no job has that name; `ok(0, { skipped:
   *   'already_running' })` at once when the job is running; else the run's outcome.
   */
  async trigger(name: string, args: JobRunArgs = defaultRunArgs): Promise<JobOutcome | undefined> {
    const job = this.#jobs.get(name);
    if (job === undefined) return undefined;
    const coordinator = this.#coordinator;
    // Asked first, and only for a job that has it: from the in-flight check to the dispatch nothing
    // awaits, so two triggers never both pass it.
    if (job.ready !== undefined) {
      const notReady = await this.#notReady(job);
      if (notReady !== null) {
        this.#logger.warn(
          { target: SCHEDULER_TARGET, event: 'job.trigger_declined', job: name, reason: notReady },
          `${name}: not run on this node: ${notReady}`,
        );
        return err(`${name} was not run: ${notReady}`);
      }
    }
    if (job.current !== null) {
      this.#logger.debug(
        { target: SCHEDULER_TARGET, event: 'job.trigger_skipped', job: name },
        `${name} is already running — trigger skipped`,
      );
      return ok(0, {
        skipped: ALREADY_RUNNING_SKIP,
        ...(coordinator === undefined ? {} : { node: coordinator.nodeId }),
      });
    }
    if (coordinator === undefined) return this.#dispatch(job, args, 'trigger', null);
    let permit: Awaited<ReturnType<TickCoordinator['acquire']>>;
    try {
      permit = await coordinator.acquire(name);
    } catch (error) {
      this.#logger.warn(
        { target: SCHEDULER_TARGET, event: 'job.acquire_failed', job: name, error: messageOf(error) },
        `${name}: could not take the job's run from the coordinator — trigger refused`,
      );
      return err(`could not take the run of ${name} (the coordinator is unreachable): ${messageOf(error)}`);
    }
    if (!permit.acquired) {
      this.#logger.debug(
        { target: SCHEDULER_TARGET, event: 'job.trigger_skipped', job: name, node: permit.owner },
        `${name} is already running on node ${permit.owner} — trigger skipped`,
      );
      return ok(0, {
        skipped: ALREADY_RUNNING_SKIP,
        node: permit.owner,
        ...(permit.since === null ? {} : { since: permit.since.toISOString() }),
      });
    }
    return this.#dispatch(job, args, 'trigger', null);
  }

  /**
   * Starts the supervisor loop. Periodic jobs first tick one interval from
   * now (no backfill). The `scheduler.started` line counts this registry's
   * (periodic) jobs, plus the jobs of other kinds `options.alsoListed` names
   * (`{ recoverable: 10 }`), so it agrees with a listing of every job.
   *
   * @throws SchedulerError `ALREADY_STARTED` when the loop is running.
   */
  start(options: { readonly alsoListed?: Readonly<Record<string, number>> } = {}): void {
    if (this.#running) throw new SchedulerError('ALREADY_STARTED', 'the scheduler is already started');
    this.#running = true;
    const now = this.#clock();
    for (const job of this.#jobs.values()) {
      job.nextRunAt = job.intervalMs === null ? null : this.#firstWake(job.intervalMs, now);
    }
    const periodic = this.#jobs.size;
    const others = Object.entries(options.alsoListed ?? {});
    const total = others.reduce((sum, [, count]) => sum + count, periodic);
    this.#logger.info(
      {
        target: SCHEDULER_TARGET,
        event: 'scheduler.started',
        jobs: periodic,
        ...Object.fromEntries(others),
        ...(others.length > 0 ? { total } : {}),
      },
      `scheduler started, ${periodic} periodic job(s) registered${
        others.length > 0
          ? ` (${others.map(([kind, count]) => `and ${count} ${kind}`).join(', ')}: ${total} job(s) in all)`
          : ''
      }`,
    );
    this.#loop = this.#coordinator === undefined ? this.#runLoop() : this.#prepareThenLoop(this.#coordinator);
  }

  /** The first tick: one interval from now alone, the start of the coordinator's next slot in a cluster. */
  #firstWake(intervalMs: number, now: number): number {
    return this.#coordinator === undefined ? now + intervalMs : this.#coordinator.nextWakeAt(intervalMs, now);
  }

  /** Tells the coordinator the jobs, runs the catch-up of `once` jobs that missed slots, then loops. */
  async #prepareThenLoop(coordinator: TickCoordinator): Promise<void> {
    try {
      await coordinator.prepare(
        [...this.#jobs.values()].map((job) => ({
          name: job.handler.name,
          intervalMs: job.intervalMs,
          misfire: job.misfire,
        })),
      );
      for (const job of this.#jobs.values()) {
        if (!this.#running || job.misfire !== 'once' || job.intervalMs === null) continue;
        // A node that cannot run the job leaves the catch-up to one that can.
        if ((await this.#notReady(job)) !== null) continue;
        const claim = await coordinator.claimCatchUp(job.handler.name, job.intervalMs);
        if (!claim.won) continue;
        this.#logger.info(
          {
            target: SCHEDULER_TARGET,
            event: 'job.catch_up',
            job: job.handler.name,
            missed_slots: claim.missed,
            slot: claim.slot.toISOString(),
          },
          `${job.handler.name} missed ${claim.missed} slot(s) while no node was up — one catch-up run (misfire 'once')`,
        );
        void this.#runClaimed(job, claim.slot);
      }
    } catch (error) {
      this.#logger.warn(
        { target: SCHEDULER_TARGET, event: 'scheduler.coordinator_failed', error: messageOf(error) },
        'the tick coordinator could not be prepared — ticks go on, catch-up runs skipped',
      );
    }
    await this.#runLoop();
  }

  /** Whether the supervisor loop is running. */
  get started(): boolean {
    return this.#running;
  }

  /**
   * Stops the loop, aborts the signals of running handlers and waits until
   * they have settled or `stopGraceMs` has passed. Triggers keep working after
   * stop; ticks do not.
   */
  async stop(): Promise<void> {
    this.#running = false;
    for (const job of this.#jobs.values()) {
      job.nextRunAt = null;
      job.current?.controller.abort(new Error('scheduler stopping'));
    }
    this.#wake();
    const loop = this.#loop ?? Promise.resolve();
    this.#loop = null;
    const pending = [...this.#inFlight];
    const grace = this.#sleep(this.#stopGraceMs, false);
    const settled = Promise.all([loop, ...pending]).then(() => true);
    const allSettled = await Promise.race([settled, grace.done.then(() => false)]);
    grace.cancel();
    if (!allSettled) {
      this.#logger.warn(
        { target: SCHEDULER_TARGET, event: 'scheduler.stop_timeout', still_running: this.#inFlight.size },
        `scheduler stopped with ${this.#inFlight.size} handler(s) still running after ${this.#stopGraceMs} ms`,
      );
    }
  }

  #clock(): number {
    return this.#now().getTime();
  }

  async #runLoop(): Promise<void> {
    while (this.#running) {
      try {
        await this.#step();
      } catch (error) {
        // Nothing in #step is expected to throw; keep the loop alive regardless.
        this.#logger.error(
          { target: SCHEDULER_TARGET, event: 'scheduler.loop_error', error: messageOf(error) },
          'scheduler loop error — continuing',
        );
        const pause = this.#sleep(1_000);
        await pause.done;
      }
    }
  }

  /** One pass: sleep until the earliest due job, then tick it (skip or dispatch). */
  async #step(): Promise<void> {
    const next = this.#pickNext();
    if (next === undefined || next.nextRunAt === null) {
      await this.#sleep(MAX_DELAY_MS).done;
      return;
    }
    const now = this.#clock();
    if (next.nextRunAt > now) {
      // Woken early by register()/stop() → the caller re-picks.
      await this.#sleep(next.nextRunAt - now).done;
      return;
    }
    const interval = next.intervalMs ?? MAX_DELAY_MS;
    if (this.#coordinator === undefined) {
      // Advance by whole intervals past now: one interval when on time, never a backlog.
      next.nextRunAt += (Math.floor((now - next.nextRunAt) / interval) + 1) * interval;
    } else {
      // The start of the coordinator's next slot: every node wakes in every slot.
      next.nextRunAt = Math.max(this.#coordinator.nextWakeAt(interval, now), now + 1);
    }
    const name = next.handler.name;
    if (next.current !== null) {
      this.#logger.warn(
        {
          target: SCHEDULER_TARGET,
          event: 'job.tick_skipped',
          job: name,
          interval_ms: interval,
          running_for_ms: now - next.current.since,
        },
        `${name} still running past its interval — tick skipped`,
      );
      return;
    }
    const run = this.#tick(next);
    // Jobs already due wait behind this run (sequential dispatch); a deadline
    // still in the future (this job's own next tick included) ends the wait.
    const following = this.#pickNext(now);
    const wait = this.#sleep(
      following?.nextRunAt == null ? MAX_DELAY_MS : following.nextRunAt - this.#clock(),
    );
    await Promise.race([run, wait.done]);
    wait.cancel();
  }

  /**
   * The periodic job with the earliest `next_run_at` (ties: registration
   * order), only among those due after `after` when it is given.
   */
  #pickNext(after = Number.NEGATIVE_INFINITY): RegisteredJob | undefined {
    let best: RegisteredJob | undefined;
    for (const job of this.#jobs.values()) {
      if (job.nextRunAt === null || job.nextRunAt <= after) continue;
      if (best === undefined || best.nextRunAt === null || job.nextRunAt < best.nextRunAt) best = job;
    }
    return best;
  }

  /** A due tick: nothing when this process is not ready for the job (in a cluster, the slot is left to another node). */
  #tick(job: RegisteredJob): Promise<unknown> {
    const go = () =>
      this.#coordinator === undefined
        ? this.#dispatch(job, defaultRunArgs, 'tick', null)
        : this.#claimAndRun(job, this.#coordinator);
    if (job.ready === undefined) return go();
    return (async () => {
      const notReady = await this.#notReady(job);
      if (notReady !== null) {
        this.#logger.warn(
          { target: SCHEDULER_TARGET, event: 'job.tick_declined', job: job.handler.name, reason: notReady },
          `${job.handler.name}: tick not taken on this node: ${notReady}`,
        );
        return;
      }
      // The readiness check awaited: the run may have started meanwhile (a trigger).
      if (job.current === null) await go();
    })();
  }

  /** The job's `ready` answer; a `ready` that throws is its own reason. */
  async #notReady(job: RegisteredJob): Promise<string | null> {
    if (job.ready === undefined) return null;
    try {
      return await job.ready();
    } catch (error) {
      return `its readiness check failed: ${messageOf(error)}`;
    }
  }

  /** A tick in a cluster: claim the slot (one winner), then the run; only the winner of both runs it. */
  async #claimAndRun(job: RegisteredJob, coordinator: TickCoordinator): Promise<void> {
    const name = job.handler.name;
    let claim: Awaited<ReturnType<TickCoordinator['claimSlot']>>;
    try {
      claim = await coordinator.claimSlot(name, job.intervalMs ?? MAX_DELAY_MS);
    } catch (error) {
      this.#logger.warn(
        { target: SCHEDULER_TARGET, event: 'job.claim_failed', job: name, error: messageOf(error) },
        `${name}: could not claim the tick from the coordinator — tick skipped`,
      );
      return;
    }
    if (!claim.won) {
      this.#logger.debug(
        { target: SCHEDULER_TARGET, event: 'job.tick_taken', job: name, slot: claim.slot.toISOString() },
        `${name}: another node took the slot ${claim.slot.toISOString()}`,
      );
      return;
    }
    if (claim.missed > 0) {
      this.#logger.info(
        { target: SCHEDULER_TARGET, event: 'job.slots_missed', job: name, missed_slots: claim.missed },
        `${name}: ${claim.missed} slot(s) before this one were missed (misfire '${job.misfire}')`,
      );
    }
    await this.#runClaimed(job, claim.slot);
  }

  /** Runs a claimed slot when the job's run is free here and cluster-wide; else logs `job.tick_skipped`. */
  async #runClaimed(job: RegisteredJob, slot: Date): Promise<void> {
    const coordinator = this.#coordinator;
    const name = job.handler.name;
    if (coordinator === undefined || job.current !== null) return;
    let permit: Awaited<ReturnType<TickCoordinator['acquire']>>;
    try {
      permit = await coordinator.acquire(name);
    } catch (error) {
      this.#logger.warn(
        { target: SCHEDULER_TARGET, event: 'job.acquire_failed', job: name, error: messageOf(error) },
        `${name}: could not take the job's run from the coordinator — tick skipped`,
      );
      return;
    }
    if (!permit.acquired) {
      this.#logger.warn(
        {
          target: SCHEDULER_TARGET,
          event: 'job.tick_skipped',
          job: name,
          interval_ms: job.intervalMs,
          node: permit.owner,
          running_for_ms: permit.since === null ? null : this.#clock() - permit.since.getTime(),
        },
        `${name} still running on node ${permit.owner} — tick skipped`,
      );
      return;
    }
    await this.#dispatch(job, defaultRunArgs, 'tick', slot);
  }

  /**
   * Runs the handler under the job's permit. With a coordinator the caller
   * has acquired the job's run: the lease is renewed while it runs, and the
   * run is recorded, then released, when it ends.
   */
  async #dispatch(
    job: RegisteredJob,
    args: JobRunArgs,
    source: RunSource,
    slot: Date | null,
  ): Promise<JobOutcome> {
    const name = job.handler.name;
    const controller = new AbortController();
    const started = this.#clock();
    job.current = { since: started, controller };
    const coordinator = this.#coordinator;
    const stopRenewing =
      coordinator === undefined ? undefined : renewWhileRunning(coordinator, name, this.#logger);
    const { outcome, cause } = await superviseRun(job.handler, args, {
      controller,
      timeoutMs: job.timeoutMs,
      inFlight: this.#inFlight,
    });
    stopRenewing?.();
    const ended = this.#clock();
    const elapsedMs = Math.max(0, ended - started);
    const at = new Date(ended);
    if (coordinator !== undefined) {
      await recordAndRelease(
        coordinator,
        {
          job: name,
          slot,
          source,
          startedAt: new Date(started),
          finishedAt: at,
          outcome,
          ...(cause === undefined ? {} : { cause }),
        },
        this.#logger,
      );
    }
    job.current = null;
    job.last = {
      at: at.toISOString(),
      outcome,
      ...(cause === undefined ? {} : { cause }),
      elapsed_ms: elapsedMs,
      source,
    };
    logJobRun(this.#logger, { job: name, outcome, cause, elapsedMs, source });
    this.#notify({
      job: name,
      outcome,
      ...(cause === undefined ? {} : { cause }),
      elapsedMs,
      at,
      startedAt: new Date(started),
      source,
    });
    return outcome;
  }

  #notify(event: JobOutcomeEvent): void {
    const callback = this.#onOutcome;
    if (callback === undefined) return;
    const report = (error: unknown) =>
      this.#logger.warn(
        { target: SCHEDULER_TARGET, event: 'job.on_outcome_failed', job: event.job, error: messageOf(error) },
        `onOutcome callback failed for job ${event.job}`,
      );
    try {
      const result = callback(event);
      if (result !== undefined && typeof (result as Promise<void>).then === 'function') {
        (result as Promise<void>).then(undefined, report);
      }
    } catch (error) {
      report(error);
    }
  }

  #sleep(ms: number, wakeable = true) {
    return this.#sleeps.sleep(ms, wakeable);
  }

  #wake(): void {
    this.#sleeps.wake();
  }
}

function summarise(job: RegisteredJob): JobSummary {
  return {
    name: job.handler.name,
    interval_ms: job.intervalMs,
    timeout_ms: job.timeoutMs,
    next_run_at: job.nextRunAt === null ? null : new Date(job.nextRunAt).toISOString(),
    last_outcome: job.last,
    running: job.current !== null,
    running_since: job.current === null ? null : new Date(job.current.since).toISOString(),
    capabilities: capabilitiesOf(job.handler),
  };
}
