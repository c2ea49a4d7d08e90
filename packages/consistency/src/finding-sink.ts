import type { Inconsistency } from './inconsistency.js';

/**
 * Where a check records what it found. Composed on top of the engine's
 * `JobStore`: the engine knows nothing of findings.
 */
export interface FindingSink {
  /**
   * Upserts a finding. Idempotent on `(run_id, kind, resource_id)`: revisiting
   * the same resource after a resume records it once.
   */
  recordFinding(finding: Inconsistency): Promise<void>;
  /** Deletes a finding recorded earlier whose resource has since left the inconsistent state. */
  dropFinding(kind: string, resourceId: string): Promise<void>;
}
