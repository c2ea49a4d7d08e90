import type { BatchContext, BatchResult } from './run-batches.js';

/** One page of a scan as its `fetch` returns it. */
export interface ScanBatch<T> {
  /** Rows examined by this page (added to the run's `scanned`). */
  readonly scanned: number;
  /**
   * What the scan found worth a closer look: the anomalies only, never every
   * row (sending every row to Node costs more than the scan itself).
   */
  readonly items: readonly T[];
  /** The position after this page: a resume continues strictly after it. */
  readonly cursor: Uint8Array;
  /** `true` when the whole space (every phase) has been walked. */
  readonly done: boolean;
}

/**
 * One batch of a database scan, for `runBatches`: fetch a page of up to
 * `limit` rows after the cursor (a multi-phase scan decodes the phase byte
 * and moves to the next phase by returning a cursor of the next phase with
 * `done: false`), then process its items (when there are any). The page's
 * cursor is checkpointed whatever the items were.
 */
export function scanBatch<T>(
  fetch: (cursor: Uint8Array | null, limit: number) => Promise<ScanBatch<T>>,
  process: (items: readonly T[], page: ScanBatch<T>) => Promise<unknown>,
) {
  return async (cursor: Uint8Array | null, context: BatchContext): Promise<BatchResult> => {
    const page = await fetch(cursor, context.limit);
    if (page.items.length > 0) await process(page.items, page);
    return { cursor: page.cursor, done: page.done, scanned: page.scanned, anomalies: page.items.length };
  };
}
