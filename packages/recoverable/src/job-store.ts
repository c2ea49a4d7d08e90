import type { RunStatus } from './run-status.js';

/** Optional progress facts a handler may report with a checkpoint. */
export interface CheckpointProgress {
  /**
   * Rows (or items) examined in this batch, added to `stats.scanned_count`.
   * Defaults to `deltaCount`.
   */
  readonly scanned?: number;
  /** An estimate of the total number of items the run will examine, when the job can give one. */
  readonly totalEstimate?: number;
  /** Job-specific counters added to `stats.<key>` (for example `failed_blobs`, `bytes_copied`). */
  readonly counters?: Readonly<Record<string, number>>;
}

/**
 * The port the engine hands a recoverable job: its only side effect on run
 * state (cursor checkpoints, cancel polling). Backed by `jobs.recoverable_runs`.
 */
export interface JobStore {
  /** The run this handler was invoked with. */
  readonly runId: string;
  /**
   * Fixed at run start; the reference "now" for grace windows, never the wall
   * clock (consistency-check.md trap 1).
   */
  readonly startedAt: Date;
  /** The run's stored params (from the trigger body); a resumed run keeps them. */
  readonly params: Readonly<Record<string, unknown>>;
  /**
   * How long a batch loop retries after the database went away
   * (`withConnectionRetry`'s `retryForMs`) before the run lands `Paused`
   * ('database unreachable'). `undefined` = the default (60 s).
   */
  readonly connectionRetryMs?: number;
  /** Reads the current status; `CancelRequested` means: return `paused` at the next safe boundary. */
  status(): Promise<RunStatus>;
  /** The last persisted cursor, or `null` on a fresh run. */
  loadCursor(): Promise<Uint8Array | null>;
  /**
   * Advances the cursor, adds `deltaCount` to `stats.count` (the primary
   * scalar, mirrored in `JobOutcome.ok.count`) and `progress.scanned ??
   * deltaCount` to `stats.scanned_count`, adds each counter, sets
   * `stats.total_estimate`, keeps a progress sample for rate/ETA, bumps
   * `last_progress_at`: one UPDATE. Call between batches (about 1000 rows or
   * 30 s, whichever first). Rejects with `INVALID_CHECKPOINT` on negative or
   * non-finite numbers and on counters named like the engine's own keys.
   */
  checkpoint(cursor: Uint8Array, deltaCount: number, progress?: CheckpointProgress): Promise<void>;
}
