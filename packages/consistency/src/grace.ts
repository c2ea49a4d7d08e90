import type { CheckOptions, ConsistencyCheck } from './consistency-check.js';

/** The default grace window: 1 h, as dedup GC's. */
export const DEFAULT_GRACE_WINDOW_MS = 60 * 60 * 1000;
/** The grace window of deep checks (hash verification): 24 h. */
export const DEEP_GRACE_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * The instant before which an item counts as old enough to flag:
 * `startedAt − graceMs`. ALWAYS from the run's `startedAt` (fixed when the
 * run began and kept across resumes), never from the wall clock: a six-hour
 * scan would otherwise turn items that were young at its start into "old"
 * ones half-way through and report false positives against itself (trap 1).
 *
 * Items created AFTER the boundary are young: skip them.
 */
export function graceBoundary(startedAt: Date, graceMs: number): Date {
  if (!Number.isFinite(graceMs) || graceMs < 0) {
    throw new RangeError(`a grace window is a non-negative number of milliseconds, got ${graceMs}`);
  }
  return new Date(startedAt.getTime() - graceMs);
}

/** The grace window a check uses for one run: 0 when `force` is set, else the check's own. */
export function effectiveGraceMs(
  check: Pick<ConsistencyCheck, 'graceWindowMs'>,
  options: CheckOptions,
): number {
  return options.force ? 0 : check.graceWindowMs(options);
}
