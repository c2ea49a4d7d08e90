/**
 * references_consistency: the rows that name a file or folder by id with no
 * foreign key, against the files and folders (fact sheet §10, §12 item 25:
 * the plans' "dead properties" item after OxiCloud's rekey — its WebDAV
 * properties now cascade with their resource, these rows do not); and the
 * faces, whose content hash has no foreign key, against their file's hash.
 *
 * The five decisions (ConsistencyCheck's "for implementors"):
 *
 * 1. Direction. Forward, within the DB: reference → item. One phase per
 *    source of {@link REFERENCE_SOURCES} (favorites, recent items, magic
 *    links naming a resource, shares, NextCloud ids, faces), each page's
 *    item ids looked up by primary key in the same statement. A face's
 *    file cannot be missing (a foreign key, ON DELETE CASCADE): its
 *    `blob_hash` is compared with the file's current one, then looked up
 *    in the manifests and blobs (see `FACE_HASH_REASONS`). A share
 *    normally goes with its item: deleting the item deletes its grants, and
 *    the last token grant takes its share row (OxiCloud's triggers, fact
 *    sheet §8); a share whose grant was never written (creation is two
 *    statements) is what stays.
 * 2. Severity. The dangling kinds are `Reclaimable`: OxiCloud's listings
 *    skip a missing item and nobody loses bytes; the rows are junk that
 *    nothing deletes (there is no cleanup when an item is deleted). A share
 *    or a magic link to a missing item answers its visitor with an error,
 *    which is what the owner's delete asked for. `share_grant_mismatch` is
 *    `DataLoss` (the link opens nothing, or more than was shared).
 *    `stale_face_hash` is `Drift`: derived data out of step with its
 *    source, no bytes lost (the photo is intact); the People view shows
 *    boxes of the old content until the file's faces are indexed again.
 *    Not `Regenerable`: nothing heals it on the next request, only the next
 *    content update of the file (the indexer deletes and reindexes then).
 * 3. Cursor. Phase byte + the row's key: 8 bytes for the serial ids of
 *    favorites, recent items and NextCloud ids, 16 for the uuids of magic
 *    links, shares and faces.
 * 4. Grace. 1 h on the row's timestamp (`created_at`, `accessed_at`,
 *    `issued_at`), from the run's `startedAt`; `force` makes it 0. A share's
 *    `created_at` is a bigint of no documented unit: shares have pass 2 only.
 *    A face: the later of its `created_at` and its file's `updated_at` (a
 *    content swap sets it; the reindex runs after it, in the background).
 *    A client may set `updated_at` to the file's own older mtime: a face
 *    whose reindex is still queued then shows up, and the next run, after
 *    the reindex, closes it as `fixed`.
 * 5. Batch. 1000 rows or 30 s, checkpoint and status poll between batches;
 *    pass 2 re-reads each dangling row and its item before recording.
 * 6. Closing. A `Completed` run walked every source: a finding it did not
 *    report again is `fixed` (a row deleted since fixes its finding).
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
  type Severity,
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

/** A face whose `blob_hash` is not its file's current content hash (§10, §12 item 25). */
export const STALE_FACE_HASH = 'stale_face_hash';

/** Per source: its finding kind and severity, what a finding means, and its key's cursor codec and length. */
const SOURCE: Readonly<
  Record<
    ReferenceSource,
    {
      kind: string;
      severity: Severity;
      meaning: string;
      codec: CursorCodec;
      bytes: number;
      /** A repair deletes a dangling row of this source (`delete_dangling_reference`). */
      deletable: boolean;
      /** The repair of a source whose rows are not dangling references (faces). */
      repair?: string;
    }
  >
> = {
  favorites: {
    kind: 'dangling_favorite',
    severity: 'Reclaimable',
    meaning: "a user's favorite names a file or folder that does not exist (auth.user_favorites)",
    codec: serialCursor,
    bytes: 8,
    deletable: true,
  },
  recent_items: {
    kind: 'dangling_recent_item',
    severity: 'Reclaimable',
    meaning: "a user's recent item names a file or folder that does not exist (auth.user_recent_files)",
    codec: serialCursor,
    bytes: 8,
    deletable: true,
  },
  magic_links: {
    kind: 'dangling_magic_link',
    severity: 'Reclaimable',
    meaning: 'a magic sign-in link names a file or folder that does not exist (auth.magic_link_tokens)',
    codec: uuidCursor,
    bytes: 16,
    deletable: true,
  },
  shares: {
    kind: 'dangling_share',
    severity: 'Reclaimable',
    meaning: 'a share link names a file or folder that does not exist (storage.shares)',
    codec: uuidCursor,
    bytes: 16,
    deletable: false,
  },
  nextcloud_ids: {
    kind: 'dangling_nextcloud_id',
    severity: 'Reclaimable',
    meaning:
      'a NextCloud file id names a file or folder that does not exist (storage.nextcloud_object_ids: OxiCloud never deletes these rows)',
    codec: serialCursor,
    bytes: 8,
    deletable: true,
  },
  faces: {
    kind: STALE_FACE_HASH,
    severity: 'Drift',
    meaning:
      "a face (faces.faces) carries a content hash that is not its file's current blob_hash: found in old content " +
      "the reindex after an update never replaced (the indexer's background task failed), or in content no manifest " +
      'or blob holds (detail.reason stale_hash or unknown_hash). Drift: derived data out of step, the photo is ' +
      'intact; the People view shows boxes of the old content until the file is indexed again, which only its next ' +
      'content update does (not Regenerable: no request heals it)',
    codec: uuidCursor,
    bytes: 16,
    deletable: false,
    repair:
      "delete_stale_face: delete the face, as OxiCloud's update does before its reindex; re-checked under its lock",
  },
};
/** The finding kind of each source whose dangling rows a repair deletes (`delete_dangling_reference`). */
export const DELETABLE_REFERENCE_KINDS: Readonly<Record<string, ReferenceSource>> = Object.fromEntries(
  REFERENCE_SOURCES.filter((s) => SOURCE[s].deletable).map((s) => [SOURCE[s].kind, s]),
);

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

/**
 * The finding a dangling row (a share without its one viewer grant, a face
 * whose hash is not its file's) stands for; its resource id is the row's key.
 */
export function referenceFinding(r: DanglingReference): Inconsistency {
  const shareGrant = (SHARE_GRANT_REASONS as readonly string[]).includes(r.reason);
  return {
    kind: shareGrant ? SHARE_GRANT_MISMATCH : SOURCE[r.source].kind,
    severity: shareGrant ? 'DataLoss' : SOURCE[r.source].severity,
    resourceId: r.id,
    detail: {
      user_id: r.userId,
      item_type: r.itemType,
      item_id: r.itemId,
      reason: r.reason,
      ...(r.hashes === undefined ? {} : { face_hash: r.hashes.face, file_hash: r.hashes.file }),
    },
  };
}

/**
 * The `references_consistency` check over a {@link ReferenceScan}. Findings
 * (resource = the row's key): `dangling_favorite`, `dangling_recent_item`,
 * `dangling_magic_link`, `dangling_share`, `dangling_nextcloud_id` (all
 * `Reclaimable`), `share_grant_mismatch` (`DataLoss`), `stale_face_hash`
 * (`Drift`); detail `{ user_id, item_type, item_id, reason }`, and for a
 * face `face_hash` and `file_hash`.
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
      "findings this run found: favorites, recent items, magic links, shares and NextCloud ids that name a file or folder that is gone, shares without their one viewer grant, and faces whose content hash is not their file's",
    kinds: [
      ...REFERENCE_SOURCES.map((s) => ({
        kind: SOURCE[s].kind,
        severity: SOURCE[s].severity,
        meaning: SOURCE[s].meaning,
        repair:
          SOURCE[s].repair ??
          (SOURCE[s].deletable
            ? 'delete_dangling_reference: delete the row, re-checked under its lock (its item may have come back)'
            : null),
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
