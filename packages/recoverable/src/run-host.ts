import type { ExecutedRun } from './execute-run.js';
import type { LeaseGuard } from './lease/run-leases.js';
import type { RunRecord } from './run-record.js';

/**
 * What keeps a run while it executes: its stop signal, its lease, why it was
 * asked to stop, and when to give up retrying its terminal write. The
 * `RecoverableEngine` is one (its `OwnRuns`: cancel, shutdown, the lease
 * heartbeat); {@link runOrResume} without one uses {@link standaloneHost}.
 */
export interface RunHost {
  /**
   * A run was just started or resumed by a request sent at `sentAt`
   * (`performance.now()`), and its handler is about to run. `signal` is the
   * caller's: aborting it asks the run to stop (it lands Paused).
   */
  hold(
    job: string,
    record: RunRecord,
    options: { readonly sentAt: number; readonly signal?: AbortSignal },
  ): HeldRun;
}

/** One run as its {@link RunHost} keeps it. */
export interface HeldRun {
  /** Handed to the handler: fires on a cancel, a shutdown, or a lease that ended here. */
  readonly signal: AbortSignal;
  /** The run's lease on this node. */
  readonly lease: LeaseGuard;
  /** Why a pause without a reason of its own happened ('cancel requested', 'server shutdown'). */
  pauseReason(): string | undefined;
  /** Fires when the terminal write should stop being retried (shutdown). */
  readonly stopRetrying?: AbortSignal;
  /** The run ended here: its terminal write and `afterTerminal` step are done (or could not be). Called once. */
  release(result: ExecutedRun): void;
}

/**
 * The host of a run outside an engine: the caller's signal, no heartbeat
 * (the lease is renewed by the fenced checkpoints only), no pause reason of
 * its own, and the terminal write retried until it lands.
 */
export const standaloneHost: RunHost = Object.freeze({
  hold(_job: string, _record: RunRecord, options: { readonly signal?: AbortSignal }): HeldRun {
    let lost = false;
    return {
      signal: options.signal ?? new AbortController().signal,
      lease: {
        state: () => (lost ? 'lost' : 'held'),
        renewed: () => undefined,
        lost: () => {
          lost = true;
        },
      },
      pauseReason: () => undefined,
      release: () => undefined,
    };
  },
});
