/** How long a lease lasts after each renewal (database clock). */
export const DEFAULT_LEASE_MS = 30_000;
/** How often an engine renews the leases of the runs it executes. */
export const DEFAULT_HEARTBEAT_MS = 10_000;
/** How often an engine's janitor looks for runs whose lease expired. */
export const DEFAULT_JANITOR_INTERVAL_MS = 10_000;

/** The lease settings of an engine, validated. */
export interface LeaseSettings {
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly janitorIntervalMs: number;
  /**
   * How long after a renewal was sent this node still trusts its lease (its
   * own monotonic clock): the lease minus a margin (a sixth of it, at most 5 s),
   * so a partitioned node stops writing before another can take over.
   */
  readonly trustMs: number;
}

/**
 * Validates the lease settings: whole milliseconds, a lease of at least 1 s,
 * a heartbeat of at most half the trust window (so one missed renewal does
 * not lose the lease), a janitor interval of at least 100 ms.
 */
export function leaseSettings(options: {
  leaseMs?: number | undefined;
  heartbeatMs?: number | undefined;
  janitorIntervalMs?: number | undefined;
}): LeaseSettings {
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const janitorIntervalMs = options.janitorIntervalMs ?? DEFAULT_JANITOR_INTERVAL_MS;
  const whole = (name: string, value: number, min: number) => {
    if (!Number.isInteger(value) || value < min) {
      throw new TypeError(`${name} must be a whole number of milliseconds of at least ${min}, got ${value}`);
    }
  };
  whole('leaseMs', leaseMs, 1_000);
  whole('heartbeatMs', heartbeatMs, 100);
  whole('janitorIntervalMs', janitorIntervalMs, 100);
  const trustMs = leaseMs - Math.min(5_000, Math.floor(leaseMs / 6));
  if (heartbeatMs * 2 > trustMs) {
    throw new TypeError(
      `heartbeatMs (${heartbeatMs}) must be at most half of the lease's trust window (${trustMs} ms of a ${leaseMs} ms lease), ` +
        'so one missed renewal does not lose the lease: shorten the heartbeat or lengthen the lease',
    );
  }
  return { leaseMs, heartbeatMs, janitorIntervalMs, trustMs };
}

/** The pause reason a janitor writes for a run whose owner's lease expired. */
export function nodeLostReason(ownerNode: string | null): string {
  return `node ${ownerNode ?? '(unknown)'} lost mid-run`;
}

/** The pause reason of a run whose owner stopped trusting its own lease (no renewal in time, the database reachable). */
export function leaseExpiredReason(nodeId: string): string {
  return `lease of node ${nodeId} expired mid-run`;
}
