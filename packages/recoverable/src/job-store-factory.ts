import type { JobStore } from './job-store.js';
import type { RunOptions } from './run-options.js';
import type { RunOutcome } from './run-outcome.js';
import type { RunRecord } from './run-record.js';

/**
 * What fences a write of a run: its id, the attempt this node acquired and
 * the owner it wrote (a {@link RunRecord} has all three). A write matches the
 * row only while owner and attempt are unchanged and the run is Running or
 * CancelRequested.
 */
export type RunFence = Pick<RunRecord, 'runId' | 'attempt' | 'ownerNode'>;

/**
 * The port `runOrResume` drives: creates and loads run rows, binds a
 * {@link JobStore} to one, writes the terminal status. `PgJobStoreFactory`
 * implements it on `jobs.recoverable_runs`.
 */
export interface JobStoreFactory {
  /** The job's active run (Running, Paused or CancelRequested) if any, else its newest run, else `null`. */
  latestRun(jobName: string): Promise<RunRecord | null>;
  /**
   * Inserts a fresh `Running` row (`started_at = NOW()`, cursor NULL, stats
   * `{}`) with these params. Returns `null` when the one-active-run index
   * refused it: another run won the race.
   */
  insertRunning(jobName: string, params: Readonly<Record<string, unknown>>): Promise<RunRecord | null>;
  /** Flips a `Paused` row to `Running` (same cursor, stats, params). `null` when it was no longer Paused. */
  resumePaused(runId: string): Promise<RunRecord | null>;
  /** A store bound to this run; `params` are the (validated) params the handler sees, `options` its options (default none). */
  storeFor(record: RunRecord, params: Readonly<Record<string, unknown>>, options?: RunOptions): JobStore;
  /** Sets `stats.total_estimate` (fenced: `LEASE_LOST` when the fence refuses it). */
  recordTotalEstimate(run: RunFence, total: number): Promise<void>;
  /**
   * The terminal write: `Completed` (completed_at set), `Paused` (with the
   * outcome's cursor, and `{ at, reason }` appended to its pause history:
   * the outcome's reason, else `pauseReason`) or `Failed` (with the message,
   * completed_at set; the cursor is not advanced). The running segment is
   * added to `active_ms` up to now, or up to the last checkpoint when
   * `segmentEnd` is `'last_progress'` (the time after it was an outage).
   * Returns the row as written. Fenced: throws `RecoverableError`
   * `LEASE_LOST` when another node took the run over or it was paused
   * meanwhile (nothing is written).
   */
  finishRun(
    run: RunFence,
    outcome: RunOutcome,
    pauseReason?: string,
    segmentEnd?: 'now' | 'last_progress',
  ): Promise<RunRecord>;
}
