import { type Logger, silentLogger } from '@oxicloud/scheduler';
import { DATABASE_UNREACHABLE, isConnectionLoss, withConnectionRetry } from '../connection-retry.js';
import type { BatchWrites, JobStore } from '../job-store.js';
import { RecoverableError } from '../recoverable-error.js';
import { completed, failed, paused, type RunOutcome } from '../run-outcome.js';
import { BATCH_LIMITS } from './batch-params.js';
import { cursorHex } from './cursor-codecs.js';

/** Longest time one batch runs before it checkpoints: about 1000 rows or 30 s, whichever first. */
export const MAX_BATCH_MS = 30_000;

/** What one batch of a {@link BatchLoop} did. */
export interface BatchResult {
  /**
   * The position after this batch (a resume continues strictly after it), or
   * `null` when nothing finished (no checkpoint is written).
   */
  readonly cursor: Uint8Array | null;
  /** `true` when the whole space (every phase) has been walked. */
  readonly done: boolean;
  /** Rows or items examined (added to the run's `scanned`). */
  readonly scanned: number;
  /** Added to the run's primary count. @defaultValue 0 */
  readonly count?: number;
  /** Added to the run's named counters. */
  readonly counters?: Readonly<Record<string, number>>;
  /**
   * The batch's own writes (findings, …): run inside the checkpoint's
   * transaction, before the cursor moves, so they commit together or not at
   * all. Whatever they return is added to the count and counters.
   */
  readonly writes?: BatchWrites;
  /** Called once the checkpoint committed (log lines about what was written). */
  readonly committed?: () => void;
  /** For the debug line: items worth a closer look in this batch. */
  readonly anomalies?: number;
}

/** What a batch is handed besides the cursor. */
export interface BatchContext {
  /** Rows to fetch at most (adaptive: halves after a slow batch, grows back to `batch_size`). */
  readonly limit: number;
  /** Fires on shutdown or cancel: stop starting new work, finish what is in flight. */
  readonly signal: AbortSignal;
  /** `performance.now()` after which the batch should stop starting new items. */
  readonly deadline: number;
}

/** Options of {@link runBatches}. */
export interface BatchLoop {
  /** Job name, for log lines and failure messages. */
  readonly name: string;
  readonly store: JobStore;
  /** Fires on server shutdown: handled like a cancel request (return `paused`). */
  readonly signal: AbortSignal;
  /** One batch after `cursor` (`null` = from the very beginning). */
  batch(cursor: Uint8Array | null, context: BatchContext): Promise<BatchResult>;
  /** @defaultValue 1000 */
  readonly batchSize?: number | undefined;
  /** Sleep between batches, to leave room for live traffic. @defaultValue 0 */
  readonly throttleMs?: number | undefined;
  /**
   * A batch that took longer than this halves the next batch's size (down to
   * 1 row); fast batches grow back to `batchSize`. @defaultValue 30000
   */
  readonly maxBatchMs?: number | undefined;
  /**
   * Where to start: `null` = from the beginning. @defaultValue the run's last
   * checkpointed position (`store.facts.cursor`)
   */
  readonly from?: Uint8Array | null;
  /** The cursor of a pause before anything was checkpointed. @defaultValue an empty array */
  readonly emptyCursor?: Uint8Array;
  /** Cursor as words, for the failure message (`after blob hash …`). @defaultValue `after cursor <hex>` */
  describeCursor?(cursor: Uint8Array): string;
  /** For one debug line per batch and the failure line. */
  readonly logger?: Logger | undefined;
  /** Log target of those lines. @defaultValue 'oxicloud::recoverable' */
  readonly logTarget?: string;
}

/**
 * The one batch loop every recoverable job runs:
 *
 * 1. Start at the run's last checkpointed position (`store.facts.cursor`).
 * 2. Run one batch (fetch, process) after it.
 * 3. Checkpoint: the batch's own writes, then cursor and counters, in one
 *    transaction (one UPDATE when the batch has no writes of its own).
 * 4. `done` → `completed`. Otherwise: adapt the batch size, then `paused`
 *    with the cursor when the signal fired or the status (returned by the
 *    checkpoint's UPDATE: no extra round trip) is no longer `Running`; sleep
 *    `throttleMs`; next batch.
 *
 * Replay rule: a batch that did not checkpoint (a throw, a crash, kill -9)
 * left nothing behind, its writes included, and runs again after a resume.
 *
 * Checkpoints do not wait for the disk (`PgJobStore.checkpoint`:
 * `synchronous_commit = off` on the checkpoint's transaction, not on the run
 * start or the terminal write). A Postgres crash may lose the last few; each
 * lost one took its batch's writes with it, so the run is as if those batches
 * never ran. The loop then continues from the STORED cursor, not its own:
 * after a lost connection the retried step reloads it (`store.loadCursor()`),
 * and a checkpoint that finds another cursor stored than the one it last
 * wrote (`CHECKPOINT_LOST`: Postgres crashed and came back between two
 * statements, unseen) reloads it and replays from there.
 *
 * A lost database connection is not a failure: the batch with its checkpoint
 * (and the status poll) is retried with backoff (`withConnectionRetry`, for
 * `store.connectionRetryMs`; a retried batch replays, its uncommitted writes
 * having rolled back), then the run returns `paused` at its last checkpointed
 * position with reason 'database unreachable'.
 *
 * A checkpoint refused by the run's fence (`LEASE_LOST`: another node took
 * the run over) stops the loop at once: nothing more is written.
 *
 * Never throws: anything unexpected becomes `failed` naming the last
 * checkpointed position.
 */
export async function runBatches(loop: BatchLoop): Promise<RunOutcome> {
  const { store, signal, name } = loop;
  const logger = loop.logger ?? silentLogger;
  const target = loop.logTarget ?? 'oxicloud::recoverable';
  const batchSize = loop.batchSize ?? BATCH_LIMITS.batchSize.defaultValue;
  const maxBatchMs = loop.maxBatchMs ?? MAX_BATCH_MS;
  const throttleMs = loop.throttleMs ?? BATCH_LIMITS.throttleMs.defaultValue;
  const stored = loop.from === undefined ? store.facts.cursor : loop.from;
  let cursor: Uint8Array | null = stored !== null && stored.length > 0 ? stored : null;
  const pausedHere = (): RunOutcome => paused(cursor ?? loop.emptyCursor ?? new Uint8Array(0));
  let limit = batchSize;
  // After a lost connection or a lost checkpoint the stored cursor is the truth (see above).
  let reloadCursor = false;
  const reload = async (): Promise<void> => {
    if (!reloadCursor) return;
    const loaded = await store.loadCursor();
    const stored = loaded !== null && loaded.length > 0 ? loaded : null;
    if (cursorHex(stored) !== cursorHex(cursor)) {
      logger.warn(
        {
          target,
          event: 'recoverable.checkpoint_lost',
          job: name,
          run_id: store.runId,
          cursor_hex: cursorHex(cursor),
          stored_cursor_hex: cursorHex(stored),
        },
        `${name}: the last checkpoint(s) did not survive (Postgres crashed); replaying from the stored cursor`,
      );
    }
    cursor = stored;
    reloadCursor = false;
  };
  // A lost connection retries the step; a retried batch replays (its writes rolled back with the checkpoint).
  const retry = <R>(step: () => Promise<R>): Promise<R> =>
    withConnectionRetry(step, {
      retryForMs: store.connectionRetryMs,
      signal,
      onRetry: ({ attempt, error, delayMs }) => {
        reloadCursor = true;
        logger.warn(
          {
            target,
            event: 'recoverable.batch_retry',
            job: name,
            run_id: store.runId,
            attempt,
            delay_ms: delayMs,
            error: error instanceof Error ? error.message : String(error),
          },
          `${name}: the database is unreachable; retrying the batch`,
        );
      },
    });
  try {
    for (;;) {
      if (signal.aborted) return pausedHere();
      const step = await retry(async () => {
        await reload();
        const startedAt = performance.now();
        const result = await loop.batch(cursor, { limit, signal, deadline: startedAt + maxBatchMs });
        const elapsedMs = performance.now() - startedAt;
        if (result.cursor !== null) {
          try {
            await store.checkpoint(
              result.cursor,
              result.count ?? 0,
              { scanned: result.scanned, ...(result.counters ? { counters: result.counters } : {}) },
              result.writes,
            );
          } catch (error) {
            if (!(error instanceof RecoverableError && error.code === 'CHECKPOINT_LOST')) throw error;
            reloadCursor = true; // logged by reload()
            return null;
          }
        }
        return { result, elapsedMs };
      });
      if (step === null) continue;
      const { result, elapsedMs } = step;
      if (result.cursor !== null) {
        cursor = result.cursor;
        result.committed?.();
      }
      logger.debug(
        {
          target,
          event: 'recoverable.batch',
          job: name,
          run_id: store.runId,
          scanned: result.scanned,
          anomalies: result.anomalies ?? 0,
          elapsed_ms: Math.round(elapsedMs),
          cursor_hex: cursorHex(cursor),
        },
        `${name}: batch of ${result.scanned} row(s)`,
      );
      if (result.done) return completed();
      if (elapsedMs > maxBatchMs) limit = Math.max(1, Math.floor(limit / 2));
      else if (elapsedMs < maxBatchMs / 4 && limit < batchSize) limit = Math.min(batchSize, limit * 2);
      if (signal.aborted) return pausedHere();
      if ((await retry(() => store.status())) !== 'Running') return pausedHere();
      if (throttleMs > 0) await sleep(throttleMs, signal);
    }
  } catch (error) {
    // The lease is lost (a fenced write refused, or no longer trusted): stop at once, write nothing;
    // the engine logs run.lease_lost and decides what lands.
    if (error instanceof RecoverableError && error.code === 'LEASE_LOST') return pausedHere();
    // Still unreachable after the retries: not a failure, a pause at the last checkpoint.
    if (isConnectionLoss(error)) {
      return paused(cursor ?? loop.emptyCursor ?? new Uint8Array(0), DATABASE_UNREACHABLE);
    }
    const reason = error instanceof Error ? error.message : String(error);
    const where = cursor === null ? 'before the first checkpoint' : describe(loop, cursor);
    // The failure itself is logged once, by the engine's job.run line (its message);
    // the stack is a debugging detail.
    logger.debug(
      {
        target,
        event: 'recoverable.batch_failed',
        job: name,
        run_id: store.runId,
        cursor_hex: cursorHex(cursor),
        err: error,
      },
      `${name}: batch failed: ${reason}`,
    );
    return failed(`${name}: batch ${where} failed: ${reason}`);
  }
}

/** The cursor in words for a failure message; its hex when the job's words fail on it. */
function describe(loop: BatchLoop, cursor: Uint8Array): string {
  try {
    if (loop.describeCursor) return loop.describeCursor(cursor);
  } catch {
    // a cursor the job cannot read: the hex says what it is
  }
  return `after cursor ${cursorHex(cursor)}`;
}

/** Waits `ms`, or less when `signal` fires. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
