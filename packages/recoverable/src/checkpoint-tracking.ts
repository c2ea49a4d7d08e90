import type { JobStore } from './job-store.js';
import type { LeaseGuard } from './lease/run-leases.js';
import { isLeaseLost, RecoverableError } from './recoverable-error.js';

/** The store a handler gets from the engine: a {@link JobStore} that remembers its last checkpoint. */
export interface TrackedStore extends JobStore {
  /** The cursor of the last checkpoint that landed, else the run's stored one. */
  lastCursor(): Uint8Array | null;
  /** The total estimate when no checkpoint has carried it yet. */
  pendingEstimate(): number | undefined;
}

/**
 * A store that remembers the cursor of its last checkpoint that landed (else
 * the run's stored one), refuses a checkpoint once the lease is not held
 * (`LEASE_LOST`), renews the lease with each one that lands, and writes the
 * run's total `estimate` with its first checkpoint (unless that checkpoint
 * brings its own `totalEstimate`).
 */
export function trackCheckpoints(
  store: JobStore,
  stored: Uint8Array | null,
  lease: LeaseGuard,
  estimate?: number,
): TrackedStore {
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
