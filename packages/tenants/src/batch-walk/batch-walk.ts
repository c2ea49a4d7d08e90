import type { JobStore, RunOutcome } from '@oxicloud/recoverable';
import {
  completed,
  DATABASE_UNREACHABLE,
  failed,
  isConnectionLoss,
  paused,
  withConnectionRetry,
} from '@oxicloud/recoverable';
import { errorMessage } from '../run-support.js';
import type { CursorCodec } from './cursor-codec.js';

/** Longest time one batch runs before it checkpoints (trap 6: about 1000 rows or 30 s, whichever first). */
export const MAX_BATCH_MS = 30_000;

/**
 * The running totals of one batch, handed to every item. Items add to named
 * counters (`copied_blobs`, `failed_files`, …) and to `count`, the job's
 * primary scalar (`stats.count`). Single-threaded JS makes the additions safe
 * across concurrent items.
 */
export class BatchTally {
  count = 0;
  readonly counters: Record<string, number> = {};

  constructor(counterNames: readonly string[]) {
    for (const name of counterNames) this.counters[name] = 0;
  }

  add(counter: string, amount = 1): void {
    this.counters[counter] = (this.counters[counter] ?? 0) + amount;
  }
}

/** Facts an item's processing may need. */
export interface ItemContext {
  /**
   * `true` in the first batch of a resumed run: these items may have been
   * processed before the crash or pause that ended the last checkpoint window,
   * so results recorded for them earlier (findings) may need dropping.
   */
  readonly replay: boolean;
}

/** One resumable keyset walk: what to fetch, how to process an item, how big a batch is. */
export interface BatchWalk<Item> {
  /** Job name, for messages. */
  readonly jobName: string;
  readonly store: JobStore;
  /** Fires on shutdown: stop taking items, checkpoint what finished, return `paused`. */
  readonly signal: AbortSignal;
  readonly cursor: CursorCodec;
  /** The walk key of an item (its hash, its id); pages come in ascending key order. */
  keyOf(item: Item): string;
  /** Up to `limit` items with key > `after` (all from the start when `null`), ascending. */
  fetchPage(after: string | null, limit: number): Promise<readonly Item[]>;
  /**
   * Processes one item, adding to `tally`. Expected per-item failures (missing
   * bytes, a corrupt file) are counted by the item, not thrown. A throw is
   * unexpected (the database is gone): the run ends `failed`, the cursor stays
   * at the last checkpoint and the unfinished batch replays on the next run.
   */
  processItem(item: Item, tally: BatchTally, context: ItemContext): Promise<void>;
  /** Counter names reported (as 0) in every checkpoint even when nothing happened. */
  readonly counterNames: readonly string[];
  readonly batchSize: number;
  readonly concurrency: number;
  /** Sleep between batches, in ms (0 = none). */
  readonly throttleMs: number;
  /** @defaultValue {@link MAX_BATCH_MS} */
  readonly maxBatchMs?: number;
  /**
   * Where the items examined are reported: `'scanned'` (the default) adds
   * them to `stats.scanned_count` (progress and ETA); a counter name adds them
   * to that counter instead, for a pass that revisits items already counted.
   */
  readonly scannedAs?: 'scanned' | string;
  /**
   * The cursor of a pause before the first item of this walk finished.
   * @defaultValue an empty array (a resume starts from the beginning)
   */
  readonly emptyCursor?: Uint8Array;
  /** Clock in ms. @defaultValue Date.now */
  readonly now?: () => number;
}

/**
 * Runs (or resumes) a keyset walk in batches, the shape every Part 2 tenant
 * shares:
 *
 * 1. Load the cursor (`null` or empty = from the start).
 * 2. Fetch a page of `batchSize` items after it; process them with at most
 *    `concurrency` in flight, in key order.
 * 3. A batch ends when the page is done, after `maxBatchMs`, or when `signal`
 *    fires: no new item starts, in-flight items finish. The finished items are
 *    always a prefix of the page, so the cursor = the key of the last one.
 * 4. Checkpoint (cursor, count, scanned, counters); if the signal fired or
 *    `status()` says `CancelRequested`, return `paused(cursor)`; sleep
 *    `throttleMs`; next page. A short page that finished means `completed`.
 *
 * Never throws: anything unexpected becomes `failed` with the message and the
 * cursor of the last checkpoint. A lost database connection is not a failure:
 * the step is retried with backoff (`withConnectionRetry`, for
 * `store.connectionRetryMs`; a retried batch replays its items), then the
 * run returns `paused` at its last checkpoint with reason 'database unreachable'.
 */
export async function runBatchWalk<Item>(walk: BatchWalk<Item>): Promise<RunOutcome> {
  const now = walk.now ?? Date.now;
  const maxBatchMs = walk.maxBatchMs ?? MAX_BATCH_MS;
  let after: string | null = null;
  const cursorAt = (): Uint8Array =>
    after === null ? (walk.emptyCursor ?? new Uint8Array(0)) : walk.cursor.encode(after);
  const pausedAt = (): RunOutcome => paused(cursorAt());
  // A lost database connection retries the step; a retried batch replays its items.
  const retry = <R>(step: (attempt: number) => Promise<R>) => {
    let attempt = 0;
    return withConnectionRetry(() => step(attempt++), {
      retryForMs: walk.store.connectionRetryMs,
      signal: walk.signal,
    });
  };
  try {
    const stored = await retry(() => walk.store.loadCursor());
    if (stored !== null && stored.length > 0) {
      try {
        after = walk.cursor.decode(stored);
      } catch (error) {
        return failed(
          `${walk.jobName}: the stored cursor is not a ${walk.cursor.keyName} (${errorMessage(error)}); ` +
            'start a new run instead of resuming this one',
        );
      }
    }
    let replay = after !== null;
    for (;;) {
      if (walk.signal.aborted) return pausedAt();
      const step = await retry(async (attempt) => {
        const page = await walk.fetchPage(after, walk.batchSize);
        if (page.length === 0) return { page, done: 0 };
        const tally = new BatchTally(walk.counterNames);
        const deadline = now() + maxBatchMs;
        const context: ItemContext = { replay: replay || attempt > 0 };
        const done = await processPrefix(
          page,
          walk.concurrency,
          (item) => walk.processItem(item, tally, context),
          (index) => walk.signal.aborted || (index > 0 && now() > deadline),
        );
        if (done > 0) {
          const key = walk.keyOf(page[done - 1] as Item);
          const scannedAs = walk.scannedAs ?? 'scanned';
          if (scannedAs !== 'scanned') tally.add(scannedAs, done);
          await walk.store.checkpoint(walk.cursor.encode(key), tally.count, {
            scanned: scannedAs === 'scanned' ? done : 0,
            counters: tally.counters,
          });
          after = key;
        }
        return { page, done };
      });
      const { page, done } = step;
      if (page.length === 0) return completed();
      replay = false;
      if (done === page.length && page.length < walk.batchSize) return completed();
      if (walk.signal.aborted) return pausedAt();
      if ((await retry(() => walk.store.status())) === 'CancelRequested') return pausedAt();
      if (walk.throttleMs > 0) await sleep(walk.throttleMs, walk.signal);
    }
  } catch (error) {
    // Still unreachable after the retries: not a failure, a pause at the last checkpoint.
    if (isConnectionLoss(error)) return paused(cursorAt(), DATABASE_UNREACHABLE);
    const where = after === null ? 'before the first checkpoint' : `after ${walk.cursor.keyName} ${after}`;
    return failed(`${walk.jobName} failed ${where}: ${errorMessage(error)}`);
  }
}

/**
 * Processes `items` in order with at most `concurrency` in flight. Before an
 * item starts, `shouldStop(index)` is asked; once it says yes no further item
 * starts. Resolves with the number of items finished, which is always a
 * prefix (every item before it started and finished). Rejects with the first
 * error after the in-flight items settle.
 */
export async function processPrefix<Item>(
  items: readonly Item[],
  concurrency: number,
  work: (item: Item) => Promise<void>,
  shouldStop: (index: number) => boolean,
): Promise<number> {
  let next = 0;
  let stopped = false;
  let firstError: { error: unknown } | null = null;
  const worker = async (): Promise<void> => {
    while (!stopped && firstError === null && next < items.length) {
      if (shouldStop(next)) {
        stopped = true;
        return;
      }
      const index = next++;
      try {
        await work(items[index] as Item);
      } catch (error) {
        firstError ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
  if (firstError !== null) throw (firstError as { error: unknown }).error;
  return next;
}

/** Waits `ms`, or less when `signal` fires. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
