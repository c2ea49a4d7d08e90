import {
  type CursorCodec,
  decodePhaseCursor,
  encodePhaseCursor,
  type RunOutcome,
  runBatches,
  type ScanBatch,
  scanBatch,
} from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import type { CheckOptions, CheckStore } from './consistency-check.js';
import { CONSISTENCY_LOG_TARGET } from './finding-batch.js';
import type { Inconsistency } from './inconsistency.js';
import { twoPass } from './two-pass.js';

/** The phase byte of a single-phase walk's cursor. */
const PHASE = 1;

/** One page of a single-phase scan: the rows examined, the anomalous ones, the last key read. */
export interface AnomalyPage<A> {
  readonly scanned: number;
  readonly anomalies: readonly A[];
  /** The last key the page read, `null` for an empty page. */
  readonly lastKey: string | null;
}

/** What {@link singlePhaseScan} needs: the walk, its key, and the two passes of one check. */
export interface SinglePhaseScanOptions<A> {
  /** The check's name (the batch loop's log lines). */
  readonly name: string;
  readonly store: CheckStore;
  readonly options: CheckOptions;
  readonly signal: AbortSignal;
  readonly logger?: Logger | undefined;
  /** The walk's key as cursor bytes (`hashCursor`, `uuidCursor`) and its length in bytes (32, 16). */
  readonly key: { readonly codec: CursorCodec; readonly bytes: number };
  /** Pass 1: the next page after `after` (`null` = from the start), at most `limit` rows examined. */
  fetch(after: string | null, limit: number): Promise<AnomalyPage<A>>;
  /** The finding kinds an anomaly is a candidate for (all of them: Pass 2 also drops a kind that healed). */
  readonly kinds: readonly string[];
  /** The finding's resource id of an anomaly. */
  resourceOf(anomaly: A): string;
  /** Pass 2: re-read the anomalies' rows now and return the findings that still hold. */
  reverify(anomalies: readonly A[]): Promise<readonly Inconsistency[]>;
}

/**
 * The skeleton of a check that walks one table by one key in one phase: the
 * kit's batch loop over `fetch`, a cursor of phase byte 1 + the last key,
 * each page's anomalies through {@link twoPass} (every kind a candidate, so a
 * kind recorded before a resume that healed is dropped), the findings
 * committed with the page's checkpoint. `blobs_consistency` and
 * `grants_consistency` are this plus their queries.
 *
 * @example
 * ```ts
 * return singlePhaseScan({
 *   name: 'grants_consistency', store, options, signal, logger,
 *   key: { codec: uuidCursor, bytes: 16 },
 *   fetch: (after, limit) => scan.scanGrants(after, limit, scanOptions),
 *   kinds: [DANGLING_GRANT, EXPIRED_GRANT_LINGERING],
 *   resourceOf: (a) => a.grantId,
 *   reverify: async (items) => (await scan.reverifyGrants(items.map((a) => a.grantId), scanOptions)).flatMap(grantFindings),
 * });
 * ```
 */
export function singlePhaseScan<A>(o: SinglePhaseScanOptions<A>): Promise<RunOutcome> {
  const lengths = { [PHASE]: o.key.bytes };
  return runBatches({
    logTarget: CONSISTENCY_LOG_TARGET,
    store: o.store,
    signal: o.signal,
    name: o.name,
    logger: o.logger,
    batchSize: o.options.batchSize,
    throttleMs: o.options.throttleMs,
    batch: scanBatch(
      async (cursor, limit): Promise<ScanBatch<A>> => {
        const key = cursor === null ? new Uint8Array() : decodePhaseCursor(cursor, lengths).key;
        const page = await o.fetch(key.length === 0 ? null : o.key.codec.decode(key), limit);
        return {
          scanned: page.scanned,
          items: page.anomalies,
          cursor: encodePhaseCursor(PHASE, page.lastKey === null ? key : o.key.codec.encode(page.lastKey)),
          done: page.scanned < limit,
        };
      },
      (items: readonly A[]) =>
        twoPass(
          o.store,
          items.flatMap((a) => o.kinds.map((kind) => ({ kind, resourceId: o.resourceOf(a) }))),
          () => o.reverify(items),
        ),
    ),
  });
}
