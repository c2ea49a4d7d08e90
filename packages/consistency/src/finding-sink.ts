import type { RunTransaction } from '@oxicloud/recoverable';
import type { RunCloseResult } from './close-run.js';
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

/** Who writes a batch's findings: the check (job) and the run's grace boundary. */
export interface FindingWriteContext {
  /** The job that reports them: part of each finding's fingerprint (check, kind, resource id). */
  readonly checkName: string;
  /**
   * `startedAt − grace` of the run: resources older than this were examined.
   * @defaultValue the transaction's `now()` (a job with no grace window)
   */
  readonly graceBoundary?: Date;
}

/**
 * The port a check run's findings go through (`PgFindingStore` on
 * `jobs.run_findings` and `jobs.findings`): the run's beginning, one write
 * per batch inside the checkpoint's transaction, and the closing step after
 * the run's terminal write. `checkJob` calls each at its moment.
 */
export interface FindingWriter {
  writeFindings(
    tx: RunTransaction,
    runId: string,
    records: readonly Inconsistency[],
    drops: readonly FindingKey[],
    context?: FindingWriteContext,
  ): Promise<FindingWriteResult>;
  /**
   * Optional: remembers a check run's grace boundary before its first batch
   * (idempotent: a resumed run keeps the first). A run that has it is closed
   * by the closing step once `Completed`.
   */
  beginRun?(run: CheckRunFacts): Promise<void>;
  /**
   * Optional: the closing step of a run once it is `Completed` (see
   * `closeRun`: its check's findings it examined and found consistent become
   * `fixed`). Idempotent; `not_completed` for a Paused or Failed run; `null`
   * for a run without a `beginRun` row. `checkJob` calls it from the run's
   * `afterTerminal` step, after the terminal write.
   */
  closeRun?(runId: string): Promise<RunCloseResult | null>;
  /**
   * Optional: closes the `Completed` runs of `checkName` a crash left
   * unclosed (between their terminal write and their closing step), oldest
   * first. `checkJob` calls it as each run begins.
   */
  closePendingRuns?(checkName: string): Promise<readonly RunCloseResult[]>;
}

/** What the closing step needs to know about a check run. */
export interface CheckRunFacts {
  readonly runId: string;
  readonly checkName: string;
  readonly startedAt: Date;
  /** The run's effective grace window (0 with `force`). */
  readonly graceMs: number;
  /**
   * Kinds whose grace differs from `graceMs` (ms), and `null` for kinds this
   * run does not examine (the closing step never fixes those on its word).
   */
  readonly kindGraceMs?: Readonly<Record<string, number | null>>;
}
