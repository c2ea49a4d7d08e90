import type { Severity } from './severity.js';

/** One finding of a consistency check. */
export interface Inconsistency {
  /** snake_case kind, stable: `missing_blob`, `orphan_blob`, `used_bytes_drift`, … */
  readonly kind: string;
  readonly severity: Severity;
  /** Opaque id of the resource the finding is about (a hash, a UUID). */
  readonly resourceId: string;
  /** Per-check details, shown to the operator. */
  readonly detail: Readonly<Record<string, unknown>>;
  /**
   * How big the problem is, in the unit the kind names (the absolute byte
   * delta of a drift, the number of files a missing blob affects); `null` or
   * absent when the kind has none. An accepted finding whose magnitude at
   * least doubles is open again.
   */
  readonly magnitude?: number | null;
}
