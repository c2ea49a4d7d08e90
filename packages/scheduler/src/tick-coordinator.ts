import type { JobOutcome } from './job-handler.js';

/**
 * What a periodic job does about slots that passed while no process of the
 * cluster was up: `skip` (no catch-up; the next slot runs as usual) or `once`
 * (one catch-up run as soon as a process comes up after missed slots).
 * Missed slots are counted either way.
 */
export type MisfirePolicy = 'skip' | 'once';

/** The misfire policies, in the order the docs list them. */
export const MISFIRE_POLICIES: readonly MisfirePolicy[] = ['skip', 'once'];

/** A periodic job as the coordinator sees it. */
export interface CoordinatedJob {
  readonly name: string;
  /** `null` = on demand only (it still needs run exclusivity). */
  readonly intervalMs: number | null;
  readonly misfire: MisfirePolicy;
}

/** The answer to a slot claim: exactly one caller per (job, slot) gets `won: true`. */
export interface SlotClaim {
  readonly won: boolean;
  /** The slot (start of the interval, on the coordinator's clock) the claim was for. */
  readonly slot: Date;
  /** Slots between the previous claimed one and this one that nobody claimed (0 when none or the first). */
  readonly missed: number;
}

/** The answer to a request for a job's run exclusivity. */
export type RunPermit =
  | { readonly acquired: true }
  | {
      readonly acquired: false;
      /** The node that holds the job's run. */
      readonly owner: string;
      /** When that run started. */
      readonly since: Date | null;
    };

/** One finished run of a Part 1 job, as the coordinator records it. */
export interface PeriodicRunRecord {
  readonly job: string;
  /** The slot of a tick; `null` for a trigger (or a tick without a coordinated slot). */
  readonly slot: Date | null;
  readonly source: 'tick' | 'trigger';
  readonly startedAt: Date;
  readonly finishedAt: Date;
  readonly outcome: JobOutcome;
  /** `handler`, `timeout` or `panicked`, for an `err` outcome. */
  readonly cause?: string;
}

/**
 * The port through which {@link JobRegistry} shares its ticks and its run
 * exclusivity with the other processes of a cluster. The scheduler owns the
 * port and knows nothing of what implements it (`@oxicloud/cluster`
 * implements it on Postgres). Without one, the registry behaves as a single
 * process: its own clock, its own in-memory permit, nothing persisted.
 *
 * The rules an implementation keeps:
 * - **One winner per slot.** {@link TickCoordinator.claimSlot} computes the
 *   current slot on its own clock (`floor(now / interval) × interval`) and
 *   answers `won: true` to exactly one caller per (job, slot), cluster-wide.
 * - **One run per job.** {@link TickCoordinator.acquire} grants the run to one
 *   owner at a time, for a lease that {@link TickCoordinator.renew} extends
 *   while the run goes on; an expired lease is free again.
 * - Nothing here throws for a lost race; a throw means the coordinator is
 *   unreachable (the registry logs it and skips the tick or refuses the trigger).
 */
export interface TickCoordinator {
  /** The id of this process in the cluster (named by a refused trigger elsewhere). */
  readonly nodeId: string;
  /** Called once by `start()` with every registered job, before the first claim. */
  prepare(jobs: readonly CoordinatedJob[]): Promise<void>;
  /**
   * When (local epoch ms) the job should next wake to claim a slot: just
   * after the start of the coordinator's next slot after `localNowMs`.
   */
  nextWakeAt(intervalMs: number, localNowMs: number): number;
  /** Claims the slot the coordinator's clock is in now. */
  claimSlot(job: string, intervalMs: number): Promise<SlotClaim>;
  /**
   * At start-up, for a `once` job: claims the current slot when at least one
   * slot before it went unclaimed (and the job ran before), so the caller runs
   * one catch-up. `won: false` when nothing was missed or another node caught up.
   */
  claimCatchUp(job: string, intervalMs: number): Promise<SlotClaim>;
  /** Takes the job's run exclusivity for this node. */
  acquire(job: string): Promise<RunPermit>;
  /** Extends this node's lease on the job's run; `false` when it no longer holds it. */
  renew(job: string): Promise<boolean>;
  /** Gives up this node's hold on the job's run (no-op when it holds none). */
  release(job: string): Promise<void>;
  /** Records a finished run (history that every node reads). */
  record(run: PeriodicRunRecord): Promise<void>;
  /** How often {@link TickCoordinator.renew} is due while a run goes on, in ms. */
  readonly renewEveryMs: number;
}
