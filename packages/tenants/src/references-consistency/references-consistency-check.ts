/**
 * references_consistency: the rows that name a file or folder by id with no
 * foreign key, against the files and folders (fact sheet §10, §12 item 25:
 * the plans' "dead properties" item after OxiCloud's rekey — its WebDAV
 * properties now cascade with their resource, these rows do not).
 *
 * The five decisions (ConsistencyCheck's "for implementors"):
 *
 * 1. Direction. Forward, within the DB: reference → item. One phase per
 *    source of {@link REFERENCE_SOURCES} (favorites, recent items, magic
 *    links naming a resource, shares), each page's item ids looked up by
 *    primary key in the same statement. A share normally goes with its
 *    item: deleting the item deletes its grants, and the last token grant
 *    takes its share row (OxiCloud's triggers, fact sheet §8); a share whose
 *    grant was never written (creation is two statements) is what stays.
 * 2. Severity. Every kind is `Reclaimable`: OxiCloud's listings skip a
 *    missing item and nobody loses bytes; the rows are junk that nothing
 *    deletes (there is no cleanup when an item is deleted). A share or a
 *    magic link to a missing item answers its visitor with an error, which
 *    is what the owner's delete asked for.
 * 3. Cursor. Phase byte + the row's key: 8 bytes for the serial ids of
 *    favorites and recent items, 16 for the uuids of magic links and shares.
 * 4. Grace. 1 h on the row's timestamp (`created_at`, `accessed_at`,
 *    `issued_at`), from the run's `startedAt`; `force` makes it 0. A share's
 *    `created_at` is a bigint of no documented unit: shares have pass 2 only.
 * 5. Batch. 1000 rows or 30 s, checkpoint and status poll between batches;
 *    pass 2 re-reads each dangling row and its item before recording.
 * 6. Closing. A `Completed` run walked every source: a finding it did not
 *    report again is `fixed` (a row deleted since fixes its finding).
 *
 * `storage.nextcloud_object_ids` is not a source: OxiCloud never deletes its
 * rows on purpose (NextCloud clients cache the ids; they must never be
 * reused), so a row of a deleted item is its design, not drift.
 */
import {
  type CheckOptions,
  type CheckStore,
  CONSISTENCY_LOG_TARGET,
  type ConsistencyCheck,
  DEFAULT_GRACE_WINDOW_MS,
  effectiveGraceMs,
  graceBoundary,
  type Inconsistency,
  twoPass,
} from '@oxicloud/consistency';
import {
  type CursorCodec,
  decodePhaseCursor,
  encodePhaseCursor,
  type RunOutcome,
  runBatches,
  type ScanBatch,
  scanBatch,
  serialCursor,
  uuidCursor,
} from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import {
  type DanglingReference,
  REFERENCE_SOURCES,
  type ReferenceScan,
  type ReferenceScanOptions,
  type ReferenceSource,
  SHARE_GRANT_REASONS,
} from './reference-scan.js';

/** Job name of the check. */
export const REFERENCES_CONSISTENCY_CHECK_NAME = 'references_consistency';

/** Per source: its finding kind, what a finding means, and its key's cursor codec and length. */
const SOURCE: Readonly<
  Record<ReferenceSource, { kind: string; meaning: string; codec: CursorCodec; bytes: number }>
> = {
  favorites: {
    kind: 'dangling_favorite',
    meaning: "a user's favorite names a file or folder that does not exist (auth.user_favorites)",
    codec: serialCursor,
    bytes: 8,
  },
  recent_items: {
    kind: 'dangling_recent_item',
    meaning: "a user's recent item names a file or folder that does not exist (auth.user_recent_files)",
    codec: serialCursor,
    bytes: 8,
  },
  magic_links: {
    kind: 'dangling_magic_link',
    meaning: 'a magic sign-in link names a file or folder that does not exist (auth.magic_link_tokens)',
    codec: uuidCursor,
    bytes: 16,
  },
  shares: {
    kind: 'dangling_share',
    meaning: 'a share link names a file or folder that does not exist (storage.shares)',
    codec: uuidCursor,
    bytes: 16,
  },
  nextcloud_ids: {
    kind: 'dangling_nextcloud_id',
    meaning:
      'a NextCloud file id names a file or folder that does not exist (storage.nextcloud_object_ids: OxiCloud never deletes these rows)',
    codec: serialCursor,
    bytes: 8,
  },
};
const phaseOf = (source: ReferenceSource) => REFERENCE_SOURCES.indexOf(source) + 1;
const KEY_LENGTHS = Object.fromEntries(REFERENCE_SOURCES.map((s) => [phaseOf(s), SOURCE[s].bytes]));

/** Options of {@link createReferencesConsistencyCheck}. */
export interface ReferencesConsistencyCheckOptions {
  readonly scan: ReferenceScan;
  /** @defaultValue 1 h */
  readonly graceWindowMs?: number;
  readonly logger?: Logger;
}

/** A share whose item exists but whose token grant is missing or not a viewer on it (§12 item 21). */
export const SHARE_GRANT_MISMATCH = 'share_grant_mismatch';

/** The finding a dangling row (or a share without its one viewer grant) stands for; its resource id is the row's key. */
export function referenceFinding(r: DanglingReference): Inconsistency {
  const shareGrant = (SHARE_GRANT_REASONS as readonly string[]).includes(r.reason);
  return {
    kind: shareGrant ? SHARE_GRANT_MISMATCH : SOURCE[r.source].kind,
    severity: shareGrant ? 'DataLoss' : 'Reclaimable',
    resourceId: r.id,
    detail: { user_id: r.userId, item_type: r.itemType, item_id: r.itemId, reason: r.reason },
  };
}

/**
 * The `references_consistency` check over a {@link ReferenceScan}. Findings
 * (all `Reclaimable`, resource = the row's key): `dangling_favorite`,
 * `dangling_recent_item`, `dangling_magic_link`, `dangling_share`; detail
 * `{ user_id, item_type, item_id, reason }`.
 */
export function createReferencesConsistencyCheck(
  options: ReferencesConsistencyCheckOptions,
): ConsistencyCheck {
  const { scan, logger } = options;
  const graceMs = options.graceWindowMs ?? DEFAULT_GRACE_WINDOW_MS;

  function fetchBatch(scanOptions: ReferenceScanOptions) {
    return async (cursor: Uint8Array | null, limit: number): Promise<ScanBatch<DanglingReference>> => {
      const at =
        cursor === null ? { phase: 1, key: new Uint8Array() } : decodePhaseCursor(cursor, KEY_LENGTHS);
      const source = REFERENCE_SOURCES[at.phase - 1] as ReferenceSource;
      const { codec } = SOURCE[source];
      const after = at.key.length === 0 ? null : codec.decode(at.key);
      const page = await scan.scanReferences(source, after, limit, scanOptions);
      const last = page.lastKey === null || page.scanned < limit;
      const next = REFERENCE_SOURCES[at.phase];
      return {
        scanned: page.scanned,
        items: page.anomalies,
        cursor:
          last && next !== undefined
            ? encodePhaseCursor(phaseOf(next))
            : page.lastKey === null
              ? encodePhaseCursor(at.phase, at.key)
              : encodePhaseCursor(at.phase, codec.encode(page.lastKey)),
        done: last && next === undefined,
      };
    };
  }

  const check: ConsistencyCheck = {
    name: REFERENCES_CONSISTENCY_CHECK_NAME,
    subsystem: scan.subsystem(),
    order: 38,
    countMeaning:
      'findings this run found: favorites, recent items, magic links, shares and NextCloud ids that name a file or folder that is gone, and shares without their one viewer grant',
    kinds: [
      ...REFERENCE_SOURCES.map((s) => ({
        kind: SOURCE[s].kind,
        severity: 'Reclaimable' as const,
        meaning: SOURCE[s].meaning,
        repair: null,
      })),
      {
        kind: SHARE_GRANT_MISMATCH,
        severity: 'DataLoss' as const,
        meaning:
          'a share link whose item exists has no token grant (the link opens nothing), or not exactly one viewer grant on its item (the link gives what was not shared)',
        repair: null,
      },
    ],
    graceWindowMs: () => graceMs,
    concurrentSafe: () => true,
    estimateTotal: () => scan.estimateRows(),
    runResumable(store: CheckStore, runOptions: CheckOptions, signal: AbortSignal): Promise<RunOutcome> {
      const scanOptions: ReferenceScanOptions = {
        createdBefore: graceBoundary(store.startedAt, effectiveGraceMs(check, runOptions)),
      };
      return runBatches({
        logTarget: CONSISTENCY_LOG_TARGET,
        store,
        signal,
        name: REFERENCES_CONSISTENCY_CHECK_NAME,
        logger,
        batchSize: runOptions.batchSize,
        throttleMs: runOptions.throttleMs,
        batch: scanBatch(fetchBatch(scanOptions), async (items) => {
          // A page holds the rows of one source.
          const source = items[0]?.source;
          const findings = items.map(referenceFinding);
          return twoPass(store, findings, async (candidates) =>
            source === undefined
              ? []
              : (
                  await scan.reverifyReferences(
                    source,
                    candidates.map((c) => c.resourceId),
                    scanOptions,
                  )
                ).map(referenceFinding),
          );
        }),
      });
    },
  };
  return check;
}
