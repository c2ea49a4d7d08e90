/**
 * blobs_consistency: each `storage.blobs` row against the files that reference it.
 *
 * `ref_count` is kept by statement-level triggers on `storage.files`, and it
 * is what `dedup_gc` trusts before it deletes bytes. A trigger disabled for a
 * bulk load, a manual SQL fix or a restore of one table makes it drift
 * silently; this check makes that visible before anything relies on it.
 *
 * Where it lives: a check is organised by the subject it iterates, and this
 * one iterates the blob rows, so it is its own tenant. Not inside
 * `files_consistency`'s `(blob_hash, id)` walk: that walk sees only hashes
 * some file references, so an unreferenced row (ref_count 0, or a counter
 * left high after its files went) never shows up there; and not inside
 * `storage_consistency`, whose walk is paced by the blob backend's listing
 * (S3 round trips) although nothing here needs the bytes.
 *
 * The five decisions (ConsistencyCheck's "for implementors"):
 *
 * 1. Direction. Forward, within the DB: blob row → files. Each page of rows
 *    in hash order is compared, in one statement, with `count(*)` of the
 *    files over the same hash range (the covering index `files (blob_hash,
 *    id)`): a merge of two ranges, not a lookup per row. Files whose hash has
 *    no row are `files_consistency`'s `missing_blob`, not this check's.
 * 2. Severity. Both kinds are `Drift`: no user impact, because `dedup_gc`
 *    re-counts the referencing files under a row lock before it deletes bytes
 *    (issue 9's guard), so a wrong counter or mark never deletes referenced
 *    bytes; the numbers are bookkeeping the server can recompute exactly.
 *    - `ref_count_mismatch`: `ref_count` differs from the number of files
 *      (live and trashed) whose `blob_hash` is the row's hash. Detail carries
 *      the recorded `orphaned_at` too: when the counter is wrong, that one
 *      finding names the cause, and the mark is not judged separately.
 *    - `orphaned_at_mismatch` (the counter is right, the mark is wrong):
 *      `orphaned_at` set while `ref_count > 0` (`reason:
 *      set_while_referenced`), or unset while `ref_count = 0` (`reason:
 *      unreferenced_never_marked`: `dedup_gc` never collects such a row, so
 *      its bytes are kept forever; the finding is what makes that visible).
 *      This condition is this check's alone: `storage_consistency` no longer
 *      reports an unreferenced, never-marked row as an `orphan_blob` (its
 *      `orphan_blob` is bytes without a row).
 * 3. Cursor. Phase byte 1 + the 32-byte hash of the last row: a keyset walk on
 *    the primary key.
 * 4. Grace. 1 h on the row's `created_at`, from the run's `startedAt`: the
 *    triggers keep counter and mark in the writing transaction (one
 *    statement's snapshot sees both sides agree), but an upload path that
 *    writes the row and its file in separate transactions looks miscounted
 *    for a moment. `force` makes it 0.
 * 5. Batch. 1000 rows or 30 s (`singlePhaseScan` of `@oxicloud/consistency`),
 *    checkpoint + status poll between batches; only the anomalies and the
 *    last hash leave Postgres; Pass 2 re-reads each anomalous row and
 *    re-counts its files before recording (a file added or deleted since
 *    heals a transient difference; a healed row drops an earlier finding).
 * 6. Closing (findings across runs). A `Completed` run walked every blob row;
 *    a finding it did not report again, that pass 2 did not drop, and whose
 *    last report came from a run whose grace boundary is not later than this
 *    run's is `fixed` (a row deleted since fixes its findings). Magnitude:
 *    `ref_count_mismatch` the absolute counter delta; `orphaned_at_mismatch`
 *    has none.
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
import type { BlobRowAnomaly, BlobRowScan, BlobRowScanOptions } from './blob-row-scan.js';

/** Job name of the check. */
export const BLOBS_CONSISTENCY_CHECK_NAME = 'blobs_consistency';
/** Finding kinds of blobs_consistency. */
export const REF_COUNT_MISMATCH = 'ref_count_mismatch';
export const ORPHANED_AT_MISMATCH = 'orphaned_at_mismatch';

/** Options of {@link createBlobsConsistencyCheck}. */
export interface BlobsConsistencyCheckOptions {
  readonly scan: BlobRowScan;
  /** @defaultValue 1 h */
  readonly graceWindowMs?: number;
  readonly logger?: Logger;
}

/** The one finding an anomalous blob row stands for (a wrong counter first: it explains a wrong mark). */
export function blobRowFindings(a: BlobRowAnomaly): Inconsistency[] {
  const orphanedAt = a.orphanedAt?.toISOString() ?? null;
  if (a.refCount !== a.fileCount) {
    return [
      {
        kind: REF_COUNT_MISMATCH,
        severity: 'Drift',
        resourceId: a.hash,
        detail: {
          ref_count: a.refCount,
          file_count: a.fileCount,
          delta: a.refCount - a.fileCount,
          orphaned_at: orphanedAt,
          size: a.size,
        },
        magnitude: Math.abs(a.refCount - a.fileCount),
      },
    ];
  }
  if (a.refCount > 0 !== (a.orphanedAt === null)) {
    return [
      {
        kind: ORPHANED_AT_MISMATCH,
        severity: 'Drift',
        resourceId: a.hash,
        detail: {
          ref_count: a.refCount,
          orphaned_at: orphanedAt,
          reason: a.refCount > 0 ? 'set_while_referenced' : 'unreferenced_never_marked',
          size: a.size,
        },
      },
    ];
  }
  return [];
}

/**
 * The `blobs_consistency` check over a {@link BlobRowScan}. Findings
 * (resource = blob hash, both `Drift`): `ref_count_mismatch` (detail `{
 * ref_count, file_count, delta, orphaned_at, size }`) and
 * `orphaned_at_mismatch` (detail `{ ref_count, orphaned_at, reason, size }`).
 */
export function createBlobsConsistencyCheck(options: BlobsConsistencyCheckOptions): ConsistencyCheck {
  const { scan, logger } = options;
  const graceMs = options.graceWindowMs ?? DEFAULT_GRACE_WINDOW_MS;
  const check: ConsistencyCheck = {
    name: BLOBS_CONSISTENCY_CHECK_NAME,
    subsystem: scan.subsystem(),
    order: 33,
    countMeaning:
      'findings this run found: blob rows whose ref_count or orphaned_at disagrees with the files that reference them',
    kinds: [
      {
        kind: REF_COUNT_MISMATCH,
        severity: 'Drift',
        meaning: "the blob row's ref_count differs from the number of files that reference its hash",
        magnitude: 'count',
        repair:
          'recount_blob_ref_count: under the row lock, ref_count := the files counted now, orphaned_at to match',
      },
      {
        kind: ORPHANED_AT_MISMATCH,
        severity: 'Drift',
        meaning:
          'orphaned_at is set while the blob is referenced, or unset on an unreferenced row (dedup_gc never collects it)',
        repair:
          'recount_blob_ref_count: under the row lock, ref_count := the files counted now, orphaned_at to match',
      },
    ],
    graceWindowMs: () => graceMs,
    concurrentSafe: () => true,
    estimateTotal: () => scan.estimateRows(),
    runResumable(store: CheckStore, runOptions: CheckOptions, signal: AbortSignal): Promise<RunOutcome> {
      const scanOptions: BlobRowScanOptions = {
        createdBefore: graceBoundary(store.startedAt, effectiveGraceMs(check, runOptions)),
      };
      return singlePhaseScan({
        name: BLOBS_CONSISTENCY_CHECK_NAME,
        store,
        options: runOptions,
        signal,
        logger,
        key: { codec: hashCursor, bytes: 32 },
        fetch: (after, limit) => scan.scanBlobRows(after, limit, scanOptions),
        kinds: check.kinds.map((k) => k.kind),
        resourceOf: (a) => a.hash,
        reverify: async (items) =>
          (
            await scan.reverifyBlobRows(
              items.map((a) => a.hash),
              scanOptions,
            )
          ).flatMap(blobRowFindings),
      });
    },
  };
  return check;
}
