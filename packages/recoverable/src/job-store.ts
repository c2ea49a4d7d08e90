import type { Kysely } from 'kysely';
import type { RunOptions } from './run-options.js';
import type { RunStatus } from './run-status.js';

/**
 * The transaction a checkpoint runs in, as a batch's own writes get it (a
 * kysely transaction). Its table types are the writer's business: cast it to
 * `Kysely<MyTables>`.
 */
// biome-ignore lint/complexity/noBannedTypes: a transaction over tables this package does not know
export type RunTransaction = Kysely<{}>;

/** What a batch's own writes add to the run's count and counters (for example the findings they recorded). */
export interface BatchWritesResult {
  readonly count?: number;
  readonly counters?: Readonly<Record<string, number>>;
}

/**
 * The port for "the batch's own writes": called by `checkpoint` inside the
 * checkpoint's transaction, before the cursor moves. The writes and the
 * cursor commit together or not at all: a batch replayed after a crash finds
 * nothing of its first attempt.
 */
export type BatchWrites = (tx: RunTransaction) => Promise<BatchWritesResult | undefined>;

/** Typed facts about the run a handler is running, fixed when this attempt began. */
export interface RunFacts {
  /** 1 on the run's first start, +1 on every resume. */
  readonly attempt: number;
  /** When this attempt (start or resume) began, database clock. */
  readonly attemptStartedAt: Date;
  /** The last checkpointed position when this attempt began (`null` on a fresh run). */
  readonly cursor: Uint8Array | null;
  /** The run's counters so far (`stats.<name>` a handler added), as numbers. */
  readonly counters: Readonly<Record<string, number>>;
}

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
  /** The run's own params (from the trigger body, validated by the job); a resumed run keeps them. */
  readonly params: Readonly<Record<string, unknown>>;
  /** The run's typed options (`force`, `deep`), validated once at the trigger; a resumed run keeps them. */
  readonly options: RunOptions;
  /** Typed facts about this run and attempt: no handler reads the engine's JSON layout. */
  readonly facts: RunFacts;
  /**
   * How long a batch loop retries after the database went away
   * (`withConnectionRetry`'s `retryForMs`) before the run lands `Paused`
   * ('database unreachable'). `undefined` = the default (60 s).
   */
  readonly connectionRetryMs?: number | undefined;
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
   *
   * With `writes`, the batch's own writes run first in the same transaction
   * (what they return is added to the count and counters): both commit or
   * neither does.
   */
  checkpoint(
    cursor: Uint8Array,
    deltaCount: number,
    progress?: CheckpointProgress,
    writes?: BatchWrites,
  ): Promise<void>;
}
