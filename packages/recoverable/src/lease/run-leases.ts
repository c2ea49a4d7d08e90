import type { Logger } from '@oxicloud/scheduler';
import { isConnectionLoss } from '../connection-retry.js';
import type { RunFence } from '../job-store-factory.js';
import { messageOf } from '../recoverable-error.js';
import type { RunRepository } from '../run-repository.js';
import type { LeaseSettings } from './lease-settings.js';

/**
 * Where this node stands with one run's lease:
 * - `held`: renewed within the trust window; the run may write;
 * - `untrusted`: the trust window passed without a renewal (the database
 *   away, the process stalled): the run stops and writes nothing but its
 *   fenced landing;
 * - `lost`: a write or a renewal was refused by the fence: another node owns
 *   the run, or it was paused; nothing more is written.
 */
export type LeaseState = 'held' | 'untrusted' | 'lost';

/** One run's lease as its handler's store sees it. */
export interface LeaseGuard {
  /** The state now (the trust window is checked against the monotonic clock on every call). */
  state(): LeaseState;
  /** A fenced write landed: the lease was renewed by a request sent at `sentAt` (`performance.now()`). */
  renewed(sentAt: number): void;
  /** A write was refused by the fence. */
  lost(): void;
}

/** Why a run's lease ended for this node. */
export interface LeaseEnd {
  readonly runId: string;
  /** `fence`: a write was refused; `trust`: the trust window passed without a renewal. */
  readonly cause: 'fence' | 'trust';
  /** The last renewal failed because the database was unreachable. */
  readonly databaseUnreachable: boolean;
}

/** Options of {@link RunLeases}. */
export interface RunLeasesOptions {
  readonly repository: Pick<RunRepository, 'renewLeases'>;
  readonly settings: LeaseSettings;
  readonly logger: Logger;
  readonly logTarget: string;
  /** The lease of a run ended for this node (called once per run). */
  onEnd(end: LeaseEnd): void;
  /** A renewal found the run `CancelRequested` (a cancel sent through another node). */
  onCancelRequested(runId: string): void;
}

interface Held {
  readonly fence: RunFence;
  trustedUntil: number;
  state: LeaseState;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The leases of the runs one engine executes: one heartbeat UPDATE renews
 * them all every `heartbeatMs` (database clock: `lease_until = now() +
 * lease`); each run's trust window (`trustMs` after the last renewal was
 * sent, on this process's monotonic clock) ends its lease here even when the
 * database cannot be reached, so a partitioned node stops before another can
 * take the run over.
 */
export class RunLeases {
  readonly #options: RunLeasesOptions;
  readonly #held = new Map<string, Held>();
  #heartbeat: NodeJS.Timeout | undefined;
  #renewing: Promise<void> | undefined;
  #databaseUnreachable = false;

  constructor(options: RunLeasesOptions) {
    this.#options = options;
  }

  /** Starts tracking a run this node just acquired with a request sent at `sentAt`. */
  hold(fence: RunFence, sentAt: number): LeaseGuard {
    const held: Held = { fence, trustedUntil: 0, state: 'held', timer: undefined };
    this.#held.set(fence.runId, held);
    this.#trust(held, sentAt);
    this.#startHeartbeat();
    return {
      state: () => {
        if (held.state === 'held' && performance.now() >= held.trustedUntil) this.#end(held, 'trust');
        return held.state;
      },
      renewed: (at) => {
        if (held.state === 'held') this.#trust(held, at);
      },
      lost: () => this.#end(held, 'fence'),
    };
  }

  /** Stops tracking a run (it landed, or this node gave it up). */
  release(runId: string): void {
    const held = this.#held.get(runId);
    if (held) clearTimeout(held.timer);
    this.#held.delete(runId);
    if (this.#held.size === 0) this.#stopHeartbeat();
  }

  /** One heartbeat: renews every lease still held (one UPDATE). */
  renew(): Promise<void> {
    this.#renewing ??= this.#renewOnce().finally(() => {
      this.#renewing = undefined;
    });
    return this.#renewing;
  }

  /** Stops the heartbeat and every trust timer. */
  stop(): void {
    this.#stopHeartbeat();
    for (const held of this.#held.values()) clearTimeout(held.timer);
  }

  async #renewOnce(): Promise<void> {
    const asked = [...this.#held.values()].filter((h) => h.state === 'held');
    if (asked.length === 0) return;
    const sentAt = performance.now();
    let renewed: Array<{ runId: string; status: string }>;
    try {
      renewed = await this.#options.repository.renewLeases(asked.map((h) => h.fence));
      this.#databaseUnreachable = false;
    } catch (error) {
      this.#databaseUnreachable = isConnectionLoss(error);
      this.#options.logger.warn(
        {
          target: this.#options.logTarget,
          event: 'run.lease_renew_failed',
          runs: asked.map((h) => h.fence.runId),
          error: messageOf(error),
        },
        'could not renew the leases of this node’s runs; they stop when their trust window ends',
      );
      return;
    }
    const answered = new Map(renewed.map((r) => [r.runId, r.status]));
    for (const held of asked) {
      const status = answered.get(held.fence.runId);
      if (status === undefined) {
        // Released meanwhile (it landed): not a loss.
        if (this.#held.get(held.fence.runId) === held) this.#end(held, 'fence');
        continue;
      }
      if (held.state === 'held') this.#trust(held, sentAt);
      if (status === 'CancelRequested') this.#options.onCancelRequested(held.fence.runId);
    }
  }

  #trust(held: Held, sentAt: number): void {
    held.trustedUntil = Math.max(held.trustedUntil, sentAt + this.#options.settings.trustMs);
    this.#armTrustTimer(held);
  }

  /** One timer per run, at the end of its trust window (re-armed when a renewal moved it). */
  #armTrustTimer(held: Held): void {
    clearTimeout(held.timer);
    held.timer = setTimeout(
      () => {
        if (held.state !== 'held') return;
        if (performance.now() >= held.trustedUntil) this.#end(held, 'trust');
        else this.#armTrustTimer(held);
      },
      Math.max(0, held.trustedUntil - performance.now()),
    );
    held.timer.unref?.();
  }

  #end(held: Held, cause: 'fence' | 'trust'): void {
    if (held.state === 'lost' || (held.state === 'untrusted' && cause === 'trust')) return;
    const wasHeld = held.state === 'held';
    held.state = cause === 'fence' ? 'lost' : 'untrusted';
    clearTimeout(held.timer);
    if (wasHeld) {
      this.#options.onEnd({
        runId: held.fence.runId,
        cause,
        databaseUnreachable: this.#databaseUnreachable,
      });
    }
  }

  #startHeartbeat(): void {
    if (this.#heartbeat !== undefined) return;
    this.#heartbeat = setInterval(() => void this.renew(), this.#options.settings.heartbeatMs);
    this.#heartbeat.unref?.();
  }

  #stopHeartbeat(): void {
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }
}
