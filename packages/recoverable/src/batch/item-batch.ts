import { RecoverableError } from '../recoverable-error.js';
import type { CursorCodec } from './cursor-codecs.js';
import { processPrefix } from './process-prefix.js';

function decodeStored(codec: CursorCodec, cursor: Uint8Array): string {
  try {
    return codec.decode(cursor);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RecoverableError(
      'INVALID_CURSOR',
      `the stored cursor is not a ${codec.keyName} (${reason}); start a new run instead of resuming this one`,
    );
  }
}

import type { BatchContext, BatchResult } from './run-batches.js';

/**
 * The running totals of one batch, handed to every item. Items add to named
 * counters (`copied_blobs`, `failed_files`, …) and to `count`, the job's
 * primary scalar. Single-threaded JS makes the additions safe across
 * concurrent items.
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

/** A keyset walk over items, processed one by one with bounded concurrency. */
export interface ItemWalk<Item> {
  readonly codec: CursorCodec;
  /** The walk key of an item (its hash, its id); pages come in ascending key order. */
  keyOf(item: Item): string;
  /** Up to `limit` items with key > `after` (all from the start when `null`), ascending. */
  fetchPage(after: string | null, limit: number): Promise<readonly Item[]>;
  /**
   * Processes one item, adding to `tally`. Expected per-item failures are
   * counted by the item, not thrown; a throw ends the run `failed` and the
   * unfinished batch replays on the next run.
   */
  processItem(item: Item, tally: BatchTally): Promise<void>;
  /** Counter names reported (as 0) in every checkpoint even when nothing happened. */
  readonly counterNames: readonly string[];
  readonly concurrency: number;
  /**
   * Where the items examined are reported: `'scanned'` (the default) adds
   * them to the run's `scanned` (progress and ETA); a counter name adds them
   * to that counter instead, for a pass that revisits items already counted.
   */
  readonly scannedAs?: 'scanned' | string;
  /** The batch's own writes, gathered while its items ran (see `BatchResult.writes`). */
  finish?(tally: BatchTally): Pick<BatchResult, 'writes' | 'committed'>;
}

/**
 * One batch of an item walk, for `runBatches`: fetch a page after the
 * cursor, process the items in key order with at most `concurrency` in
 * flight, stop starting new ones at the deadline or when the signal fires.
 * The finished items are always a prefix of the page, so the cursor is the
 * key of the last one. A short page that finished means done.
 */
export function itemBatch<Item>(walk: ItemWalk<Item>) {
  return async (cursor: Uint8Array | null, context: BatchContext): Promise<BatchResult> => {
    const after = cursor === null ? null : decodeStored(walk.codec, cursor);
    const page = await walk.fetchPage(after, context.limit);
    if (page.length === 0) return { cursor: null, done: true, scanned: 0 };
    const tally = new BatchTally(walk.counterNames);
    const finished = await processPrefix(
      page,
      walk.concurrency,
      (item) => walk.processItem(item, tally),
      (index) => context.signal.aborted || (index > 0 && performance.now() > context.deadline),
    );
    const done = finished === page.length && page.length < context.limit;
    if (finished === 0) return { cursor: null, done, scanned: 0 };
    const scannedAs = walk.scannedAs ?? 'scanned';
    if (scannedAs !== 'scanned') tally.add(scannedAs, finished);
    return {
      cursor: walk.codec.encode(walk.keyOf(page[finished - 1] as Item)),
      done,
      scanned: scannedAs === 'scanned' ? finished : 0,
      count: tally.count,
      counters: tally.counters,
      ...walk.finish?.(tally),
    };
  };
}
