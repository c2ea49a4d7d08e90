import {
  completed,
  DATABASE_UNREACHABLE,
  failed,
  isConnectionLoss,
  paused,
  type RunOutcome,
  withConnectionRetry,
} from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import { CONSISTENCY_LOG_TARGET } from './audited-finding-sink.js';
import { DEFAULT_BATCH_SIZE } from './check-params.js';
import type { CheckStore } from './consistency-check.js';
import { EMPTY_TALLY, type FindingTally, tallyCounters } from './finding-tally.js';
import { cursorHex } from './phase-cursor.js';

/** One batch as a check's `fetchBatch` returns it. */
export interface Batch<T> {
  /** Rows examined by this batch (added to `stats.scanned_count`). */
  readonly scanned: number;
  /**
   * What Pass 1 found worth a closer look: the anomalies only, never every
   * row (sending every row to Node costs more than the scan itself).
   */
  readonly items: readonly T[];
  /** The position after this batch: a resume continues strictly after it. */
  readonly cursor: Uint8Array;
  /** `true` when the whole space (every phase) has been walked. */
  readonly done: boolean;
}

/** Options of {@link runBatches}. */
export interface RunBatchesOptions<T> {
  readonly store: CheckStore;
  /** Fires on server shutdown: handled like a cancel request (return `paused`). */
  readonly signal: AbortSignal;
  /**
   * Pass 1 of one batch: up to `limit` rows strictly after `cursor` (`null` =
   * from the very beginning). Multi-phase checks decode the phase byte here and
   * move to the next phase by returning a cursor of the next phase with `done: false`.
   */
  fetchBatch(cursor: Uint8Array | null, limit: number): Promise<Batch<T>>;
  /** Pass 2 and recording, usually through `twoPass`. Returns what it did to the findings. */
  processBatch(items: readonly T[], batch: Batch<T>): Promise<FindingTally>;
  /** @defaultValue 1000 */
  readonly batchSize?: number;
  /**
   * A batch that took longer than this halves the next batch's size (down to
   * 1 row); fast batches grow back to `batchSize`. So a checkpoint lands about
   * every 1000 rows or 30 s, whichever comes first.
   * @defaultValue 30000
   */
  readonly maxBatchMs?: number;
  /** Sleep between batches, to leave room for live traffic. @defaultValue 0 */
  readonly throttleMs?: number;
  /** For one debug line per batch and the failure line. */
  readonly logger?: Logger;
  /** Name for log lines and failure messages. */
  readonly name?: string;
}

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

/**
 * The batch loop every check runs: fetch a batch after the cursor (Pass 1),
 * process it (Pass 2 + record), checkpoint the cursor with the batch's
 * counts (`deltaCount` = new findings, `scanned` = rows examined, counters
 * `findings`, `findings_<kind>`), then poll the run's status. It returns
 * `paused` with the cursor when the status is no longer `Running` (an operator
 * asked to cancel) or `signal` fired, `completed` after the last batch, and
 * `failed` (never a throw) when a batch throws; a failed batch is not
 * checkpointed, so a resume replays it, which the idempotent findings make safe.
 * A lost database connection is not a failure: the batch is retried with
 * backoff (`withConnectionRetry`, for `store.connectionRetryMs`), then the
 * run returns `paused` at its last checkpoint with reason 'database unreachable'.
 */
export async function runBatches<T>(options: RunBatchesOptions<T>): Promise<RunOutcome> {
  const { store, signal, logger } = options;
  const name = options.name ?? 'consistency check';
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const maxBatchMs = options.maxBatchMs ?? 30_000;
  const throttleMs = options.throttleMs ?? 0;
  let cursor: Uint8Array | null = null;
  // A lost database connection retries the step (a batch replays: findings are idempotent).
  const retry = <R>(step: () => Promise<R>) =>
    withConnectionRetry(step, {
      retryForMs: store.connectionRetryMs,
      signal,
      onRetry: ({ attempt, error, delayMs }) =>
        logger?.warn(
          {
            target: CONSISTENCY_LOG_TARGET,
            event: 'consistency.batch_retry',
            check: name,
            run_id: store.runId,
            attempt,
            delay_ms: delayMs,
            error: error instanceof Error ? error.message : String(error),
          },
          `${name}: the database is unreachable; retrying the batch`,
        ),
    });
  try {
    const loaded = await retry(() => store.loadCursor());
    cursor = loaded !== null && loaded.length > 0 ? loaded : null;
    let limit = batchSize;
    for (;;) {
      const startedAt = performance.now();
      const { batch, tally, elapsedMs } = await retry(async () => {
        const batch = await options.fetchBatch(cursor, limit);
        const tally = batch.items.length > 0 ? await options.processBatch(batch.items, batch) : EMPTY_TALLY;
        const elapsedMs = performance.now() - startedAt;
        await store.checkpoint(batch.cursor, tally.recorded, {
          scanned: batch.scanned,
          counters: tallyCounters(tally),
        });
        return { batch, tally, elapsedMs };
      });
      cursor = batch.cursor;
      logger?.debug(
        {
          target: CONSISTENCY_LOG_TARGET,
          event: 'consistency.batch',
          check: name,
          run_id: store.runId,
          scanned: batch.scanned,
          anomalies: batch.items.length,
          findings: tally.recorded,
          elapsed_ms: Math.round(elapsedMs),
          cursor_hex: cursorHex(cursor),
        },
        `${name}: batch of ${batch.scanned} row(s)`,
      );
      if (batch.done) return completed();
      if (elapsedMs > maxBatchMs) limit = Math.max(1, Math.floor(limit / 2));
      else if (elapsedMs < maxBatchMs / 4 && limit < batchSize) limit = Math.min(batchSize, limit * 2);
      if (signal.aborted) return paused(cursor);
      const status = await retry(() => store.status());
      if (status !== 'Running') return paused(cursor);
      if (throttleMs > 0) {
        await sleep(throttleMs, signal);
        if (signal.aborted) return paused(cursor);
      }
    }
  } catch (error) {
    // Still unreachable after the retries: not a failure, a pause at the last checkpoint.
    if (isConnectionLoss(error)) return paused(cursor ?? new Uint8Array(0), DATABASE_UNREACHABLE);
    const reason = error instanceof Error ? error.message : String(error);
    logger?.error(
      {
        target: CONSISTENCY_LOG_TARGET,
        event: 'consistency.batch_failed',
        check: name,
        run_id: store.runId,
        cursor_hex: cursorHex(cursor),
        err: error,
      },
      `${name}: batch failed: ${reason}`,
    );
    return failed(`${name}: batch after cursor ${cursorHex(cursor) ?? '(start)'} failed: ${reason}`);
  }
}
