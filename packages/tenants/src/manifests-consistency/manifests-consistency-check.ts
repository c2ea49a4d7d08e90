/**
 * manifests_consistency: each `storage.chunk_manifests` row against the
 * files that name it, and against its own arrays (fact sheet §12 items 13
 * and 14).
 *
 * Why it matters most: OxiCloud deletes a manifest when its `ref_count` is
 * ≤ 1 without looking for other files (`remove_manifest_reference`, §5
 * hazard). A count lower than the files that name it — what a folder copy
 * leaves — means the next delete or overwrite of one copy removes the
 * manifest under the others: their content no longer resolves, and their
 * chunks become GC fodder. Nothing in OxiCloud looks for it.
 *
 * The five decisions (ConsistencyCheck's "for implementors"):
 *
 * 1. Direction. Forward, within the DB: manifest → files. Each keyset page
 *    of manifests is compared, in one statement, with `count(*)` of the
 *    files naming the page's hashes (`idx_files_blob_hash`). A file whose
 *    hash names no manifest and no blob is `files_consistency`'s
 *    `missing_blob`, not this check's.
 * 2. Severity.
 *    - `manifest_ref_count_low` (`DataLoss`): `ref_count` below the number
 *      of files (live and trashed) naming it. Not lost yet, but one ordinary
 *      delete away from unreadable files: the triage order puts it first.
 *    - `manifest_ref_count_high` (`Drift`): above it, with at least one file.
 *      What every bulk delete leaves (§5); OxiCloud's GC phase 1 removes the
 *      row once no file names it, so only the number is wrong.
 *    - `manifest_unreferenced` (`Reclaimable`): no file names it. Its chunks
 *      stay referenced until OxiCloud's GC phase 1 (or `dedup_gc`) removes
 *      it; the magnitude is its `total_size`, an upper bound of the bytes
 *      (chunks other manifests share stay).
 *    - `manifest_shape_mismatch` (`Drift`): the row breaks a shape rule of
 *      item 13 (Σ `chunk_sizes` ≠ `total_size`, `chunk_count` against the
 *      arrays' lengths, a chunk over 1 MiB, a hash that is not 64 lowercase
 *      hex, an empty or one-chunk manifest whose `file_hash` is not what its
 *      bytes must hash to). Readers go by the arrays, so bytes may still
 *      resolve; detail `problems` names each broken rule. A manifest can have
 *      a count finding and this one.
 * 3. Cursor. Phase byte 1 + the 32-byte `file_hash` of the last row: a
 *    keyset walk on the primary key.
 * 4. Grace. 1 h on the manifest's `created_at`, from the run's `startedAt`:
 *    an upload creates or bumps the manifest and inserts its file in
 *    separate steps, so a young manifest looks miscounted for a moment.
 *    `force` makes it 0. An old manifest bumped by a fresh upload is
 *    re-read by pass 2, which drops it once the file row is there.
 * 5. Batch. 1000 manifests or 30 s (`singlePhaseScan`), checkpoint and status
 *    poll between batches; only the anomalies and the last hash leave
 *    Postgres; pass 2 re-reads each anomalous manifest and re-counts its files.
 * 6. Closing. A `Completed` run walked every manifest: a finding it did not
 *    report again is `fixed` (a manifest deleted since fixes its findings).
 */
import {
  type CheckOptions,
  type CheckStore,
  type ConsistencyCheck,
  DEFAULT_GRACE_WINDOW_MS,
  effectiveGraceMs,
  graceBoundary,
  type Inconsistency,
  singlePhaseScan,
} from '@oxicloud/consistency';
import { hashCursor, type RunOutcome } from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import type { ManifestAnomaly, ManifestScan, ManifestScanOptions } from './manifest-scan.js';

/** Job name of the check. */
export const MANIFESTS_CONSISTENCY_CHECK_NAME = 'manifests_consistency';
/** Finding kinds of manifests_consistency. */
export const MANIFEST_REF_COUNT_LOW = 'manifest_ref_count_low';
export const MANIFEST_REF_COUNT_HIGH = 'manifest_ref_count_high';
export const MANIFEST_UNREFERENCED = 'manifest_unreferenced';
export const MANIFEST_SHAPE_MISMATCH = 'manifest_shape_mismatch';

/** Options of {@link createManifestsConsistencyCheck}. */
export interface ManifestsConsistencyCheckOptions {
  readonly scan: ManifestScan;
  /** @defaultValue 1 h */
  readonly graceWindowMs?: number;
  readonly logger?: Logger;
}

/** The findings an anomalous manifest stands for: its count (one kind of three), then its shape. */
export function manifestFindings(a: ManifestAnomaly): Inconsistency[] {
  const out: Inconsistency[] = [];
  const counts = {
    ref_count: a.refCount,
    file_count: a.fileCount,
    delta: a.refCount - a.fileCount,
    total_size: a.totalSize,
    chunk_count: a.chunkCount,
  };
  if (a.fileCount === 0) {
    out.push({
      kind: MANIFEST_UNREFERENCED,
      severity: 'Reclaimable',
      resourceId: a.fileHash,
      detail: counts,
      magnitude: a.totalSize,
    });
  } else if (a.refCount < a.fileCount) {
    out.push({
      kind: MANIFEST_REF_COUNT_LOW,
      severity: 'DataLoss',
      resourceId: a.fileHash,
      detail: counts,
      magnitude: a.fileCount - a.refCount,
    });
  } else if (a.refCount > a.fileCount) {
    out.push({
      kind: MANIFEST_REF_COUNT_HIGH,
      severity: 'Drift',
      resourceId: a.fileHash,
      detail: counts,
      magnitude: a.refCount - a.fileCount,
    });
  }
  if (a.shape.length > 0) {
    out.push({
      kind: MANIFEST_SHAPE_MISMATCH,
      severity: 'Drift',
      resourceId: a.fileHash,
      detail: { problems: [...a.shape], total_size: a.totalSize, chunk_count: a.chunkCount },
    });
  }
  return out;
}

/**
 * The `manifests_consistency` check over a {@link ManifestScan}. Findings
 * (resource = the manifest's `file_hash`): `manifest_ref_count_low`
 * (`DataLoss`), `manifest_ref_count_high` (`Drift`), `manifest_unreferenced`
 * (`Reclaimable`), detail `{ ref_count, file_count, delta, total_size,
 * chunk_count }`; `manifest_shape_mismatch` (`Drift`), detail `{ problems,
 * total_size, chunk_count }`.
 */
export function createManifestsConsistencyCheck(options: ManifestsConsistencyCheckOptions): ConsistencyCheck {
  const { scan, logger } = options;
  const graceMs = options.graceWindowMs ?? DEFAULT_GRACE_WINDOW_MS;
  const check: ConsistencyCheck = {
    name: MANIFESTS_CONSISTENCY_CHECK_NAME,
    subsystem: scan.subsystem(),
    order: 32,
    countMeaning:
      'findings this run found: chunk manifests whose ref_count disagrees with the files that name them, or whose shape is broken',
    kinds: [
      {
        kind: MANIFEST_REF_COUNT_LOW,
        severity: 'DataLoss',
        meaning:
          "the manifest's ref_count is below the number of files naming it: OxiCloud deletes a manifest at ref_count ≤ 1, " +
          'so deleting or overwriting one of them makes the others unreadable',
        magnitude: 'count',
        repair: null,
      },
      {
        kind: MANIFEST_REF_COUNT_HIGH,
        severity: 'Drift',
        meaning:
          "the manifest's ref_count is above the number of files naming it (what OxiCloud's bulk deletes leave); " +
          'its GC removes the row once no file names it',
        magnitude: 'count',
        repair: null,
      },
      {
        kind: MANIFEST_UNREFERENCED,
        severity: 'Reclaimable',
        meaning:
          'no file names the manifest: its chunks stay referenced until a GC removes it (magnitude: its total size, ' +
          'an upper bound: chunks other manifests share stay)',
        magnitude: 'bytes',
        repair: null,
      },
      {
        kind: MANIFEST_SHAPE_MISMATCH,
        severity: 'Drift',
        meaning:
          "the manifest breaks a shape rule: total_size ≠ the sum of its chunk sizes, chunk_count ≠ its arrays' lengths, " +
          'a chunk over 1 MiB, a hash that is not 64 lowercase hex, or an empty or one-chunk manifest whose file_hash ' +
          'is not its bytes’ hash (detail.problems)',
        repair: null,
      },
    ],
    graceWindowMs: () => graceMs,
    concurrentSafe: () => true,
    estimateTotal: () => scan.estimateRows(),
    runResumable(store: CheckStore, runOptions: CheckOptions, signal: AbortSignal): Promise<RunOutcome> {
      const scanOptions: ManifestScanOptions = {
        createdBefore: graceBoundary(store.startedAt, effectiveGraceMs(check, runOptions)),
      };
      return singlePhaseScan({
        name: MANIFESTS_CONSISTENCY_CHECK_NAME,
        store,
        options: runOptions,
        signal,
        logger,
        key: { codec: hashCursor, bytes: 32 },
        fetch: (after, limit) => scan.scanManifests(after, limit, scanOptions),
        kinds: check.kinds.map((k) => k.kind),
        resourceOf: (a) => a.fileHash,
        reverify: async (items) =>
          (
            await scan.reverifyManifests(
              items.map((a) => a.fileHash),
              scanOptions,
            )
          ).flatMap(manifestFindings),
      });
    },
  };
  return check;
}
