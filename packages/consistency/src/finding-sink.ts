import type { RunTransaction } from '@oxicloud/recoverable';
import type { Inconsistency } from './inconsistency.js';

/**
 * Where a check records what it found during a batch. Nothing is written at
 * once: the findings of a batch are written with the checkpoint that covers
 * them, in its transaction, so a batch replayed after a crash neither loses
 * nor double-counts a finding.
 */
export interface FindingSink {
  /**
   * Stages an upsert, idempotent on `(run_id, kind, resource_id)`: the same
   * resource found again (a later batch, the catch-up pass of a migration)
   * keeps one row, its `detail` replaced by the latest one. `countIfNew`
   * names a counter that is added to only when the finding is new to the run.
   */
  recordFinding(finding: Inconsistency, options?: { readonly countIfNew?: string }): void;
  /** Stages the delete of a finding whose resource has since left the inconsistent state. */
  dropFinding(kind: string, resourceId: string): void;
}

/** A staged drop. */
export interface FindingKey {
  readonly kind: string;
  readonly resourceId: string;
}

/** Per record and per drop, whether it changed anything: new finding, deleted finding. */
export interface FindingWriteResult {
  readonly recordedNew: readonly boolean[];
  readonly dropped: readonly boolean[];
}

/**
 * The port a run's findings are written through (`PgFindingStore` on
 * `jobs.run_findings`): one call per batch, inside the checkpoint's transaction.
 */
export interface FindingWriter {
  writeFindings(
    tx: RunTransaction,
    runId: string,
    records: readonly Inconsistency[],
    drops: readonly FindingKey[],
  ): Promise<FindingWriteResult>;
}
