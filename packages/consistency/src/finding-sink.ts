import type { Inconsistency } from './inconsistency.js';

/**
 * Where a check records what it found. Composed on top of the engine's
 * `JobStore`: the engine knows nothing of findings.
 */
export interface FindingSink {
  /**
   * Upserts a finding. Idempotent on `(run_id, kind, resource_id)`: revisiting
   * the same resource after a resume records it once (its `detail` is
   * replaced by the latest one).
   *
   * @returns `true` when the finding is new in this run, `false` when it was
   * already recorded (so a replayed batch does not count it twice).
   */
  recordFinding(finding: Inconsistency): Promise<boolean>;
  /**
   * Deletes a finding recorded earlier whose resource has since left the inconsistent state.
   *
   * @returns whether a finding was deleted.
   */
  dropFinding(kind: string, resourceId: string): Promise<boolean>;
}

/** Builds the {@link FindingSink} of one run of one check. */
export type FindingSinkFactory = (run: { readonly runId: string; readonly checkName: string }) => FindingSink;
