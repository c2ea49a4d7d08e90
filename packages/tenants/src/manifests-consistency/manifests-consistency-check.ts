/**
 * manifests_consistency: each `storage.chunk_manifests` row against the
 * files that name it, and against its own arrays (fact sheet §12 items 13
 * and 14); with `deep`, against its bytes (item 13's `file_hash =
 * BLAKE3(bytes)`).
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
 *    `missing_blob`, not this check's. With `deep` (and a hasher), a pass of
 *    its own follows: manifest → bytes, each multi-chunk manifest's chunks
 *    streamed in order through one BLAKE3 and compared with `file_hash`.
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
 *    - `manifest_hash_mismatch` (`DataLoss`, deep runs only): every chunk is
 *      intact (each hashes to its own key) yet their concatenation does not
 *      hash to `file_hash`: the chunks are listed in the wrong order, a wrong
 *      chunk is listed, or `file_hash` is wrong. Every file naming it reads
 *      other bytes than it was uploaded with (or dedups new uploads onto
 *      them). One finding per cause: when the whole differs, the chunks are
 *      re-hashed one by one, and a manifest with a chunk that is missing or
 *      does not hash to its key is not reported: that chunk is
 *      `storage_consistency`'s finding (its bytes missing, of the wrong size,
 *      or other bytes: `missing_blob_bytes`, a size or a hash mismatch), or
 *      `files_consistency`'s `missing_blob` when its row is gone too. (A
 *      read that fails otherwise fails the run, as the storage check's do: a
 *      wrong key or an unreachable store is not a finding.)
 *      One-chunk and empty manifests need no such pass: their `file_hash`
 *      must be the chunk's key (the one chunk is the file, §5) or BLAKE3 of
 *      nothing, which the shape rule checks on every run, and
 *      `storage_consistency`'s deep pass hashes that chunk against its key.
 * 3. Cursor. Phase byte + the 32-byte `file_hash` of the last row: phase 1
 *    is the keyset walk on the primary key; phase 2, deep runs only, walks it
 *    again for the whole-file hashes, resumable at the last manifest whose
 *    hash was finished (an abort or the batch's 30 s end mid-page cuts the
 *    page there).
 * 4. Grace. 1 h on the manifest's `created_at`, from the run's `startedAt`:
 *    an upload creates or bumps the manifest and inserts its file in
 *    separate steps, so a young manifest looks miscounted for a moment.
 *    `force` makes it 0. An old manifest bumped by a fresh upload is
 *    re-read by pass 2, which drops it once the file row is there. The
 *    whole-file pass keeps the same 1 h, not deep re-hashing's 24 h: a
 *    manifest row is written only once its chunks are durable (§5, "durability
 *    before visibility"), and a chunk left short by a crash fails its own
 *    hash, so it is skipped as that chunk's finding.
 * 5. Batch. 1000 manifests or 30 s (`runBatches`), checkpoint and status
 *    poll between batches, `throttle_ms` between them; only the anomalies and
 *    the last hash leave Postgres; pass 2 re-reads each anomalous manifest
 *    and re-counts its files. The whole-file pass hashes `hashConcurrency`
 *    manifests at once off the event loop (the `BlobSequenceHasher`: worker
 *    threads, streaming, never a whole file in memory), starts no manifest
 *    past the batch's 30 s or after the run's signal fired (an aborted hash
 *    stops at once and is redone on resume); its pass 2 re-reads the
 *    manifest row and drops the finding when it was deleted or its chunk
 *    list changed since it was hashed. It re-reads shared chunks: a chunk
 *    that N manifests list is read N times (and as often as a manifest
 *    repeats it), so it reads the multi-chunk manifests' total size, not the
 *    store's (`storage_consistency`'s deep pass reads each object once).
 * 6. Closing. A `Completed` run walked every manifest: a finding it did not
 *    report again is `fixed` (a manifest deleted since fixes its findings).
 *    `manifest_hash_mismatch` is examined by deep runs only (`kindGraceMs`):
 *    a run without `deep` never fixes one.
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
  type BatchContext,
  type BatchResult,
  decodePhaseCursor,
  encodePhaseCursor,
  hashCursor,
  processPrefix,
  type RunOutcome,
  runBatches,
  scanBatch,
} from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import { TenantsError } from '../errors.js';
import type { BlobSequenceHasher, StoredSequenceDigest } from '../ports/blob-hasher.js';
import type {
  ManifestAnomaly,
  ManifestScan,
  ManifestScanOptions,
  MultiChunkManifest,
  PagedMultiChunkManifest,
} from './manifest-scan.js';

/** Job name of the check. */
export const MANIFESTS_CONSISTENCY_CHECK_NAME = 'manifests_consistency';
/** Finding kinds of manifests_consistency. */
export const MANIFEST_REF_COUNT_LOW = 'manifest_ref_count_low';
export const MANIFEST_REF_COUNT_HIGH = 'manifest_ref_count_high';
export const MANIFEST_UNREFERENCED = 'manifest_unreferenced';
export const MANIFEST_SHAPE_MISMATCH = 'manifest_shape_mismatch';
/** Deep runs only (with a hasher): every chunk intact, their concatenation not `file_hash`. */
export const MANIFEST_HASH_MISMATCH = 'manifest_hash_mismatch';

/** The kinds the row pass (phase 1) examines: a candidate of each, so pass 2 drops a kind that healed. */
const ROW_KINDS = [
  MANIFEST_REF_COUNT_LOW,
  MANIFEST_REF_COUNT_HIGH,
  MANIFEST_UNREFERENCED,
  MANIFEST_SHAPE_MISMATCH,
];
const PHASE_ROWS = 1;
const PHASE_WHOLE_FILE = 2;
const KEY_LENGTHS = { [PHASE_ROWS]: 32, [PHASE_WHOLE_FILE]: 32 };

/** Options of {@link createManifestsConsistencyCheck}. */
export interface ManifestsConsistencyCheckOptions {
  readonly scan: ManifestScan;
  /** @defaultValue 1 h */
  readonly graceWindowMs?: number;
  /**
   * Hashes the chunks of the blob store OxiCloud serves from, for the
   * whole-file pass of deep runs (`createBlobHasher` of `@oxicloud/storage`
   * over that store). Without it the check has no deep mode, no second
   * phase and no `manifest_hash_mismatch` kind.
   */
  readonly hasher?: BlobSequenceHasher;
  /**
   * Manifests whose whole file is hashed at once in the deep pass: twice
   * the hashing pool's 2 workers, so a worker never waits for the next
   * file. Each holds a few 1 MiB read buffers, never a file.
   * @defaultValue 4
   */
  readonly hashConcurrency?: number;
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

/** What hashing one manifest's whole file found. */
type WholeFileVerdict =
  /** Aborted before it finished: redone on resume. */
  | { readonly state: 'undone' }
  /** Nothing for this check: the bytes hash to `file_hash`, or a chunk of its own is missing or wrong. */
  | { readonly state: 'none' }
  /** Every chunk intact, the whole not `file_hash`. */
  | {
      readonly state: 'mismatch';
      readonly manifest: MultiChunkManifest;
      readonly digest: StoredSequenceDigest;
    };

const UNDONE: WholeFileVerdict = { state: 'undone' };
const NONE: WholeFileVerdict = { state: 'none' };

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error
    ? String((error as { code: unknown }).code)
    : undefined;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((hash, i) => hash === b[i]);
}

/**
 * The `manifests_consistency` check over a {@link ManifestScan}. Findings
 * (resource = the manifest's `file_hash`): `manifest_ref_count_low`
 * (`DataLoss`), `manifest_ref_count_high` (`Drift`), `manifest_unreferenced`
 * (`Reclaimable`), detail `{ ref_count, file_count, delta, total_size,
 * chunk_count }`; `manifest_shape_mismatch` (`Drift`), detail `{ problems,
 * total_size, chunk_count }`; with a `hasher`, in deep runs, its own pass
 * for `manifest_hash_mismatch` (`DataLoss`), detail `{ actual_hash,
 * total_size, chunk_count, file_count }`, magnitude the file count.
 *
 * @example
 * ```ts
 * const check = createManifestsConsistencyCheck({
 *   scan: new OxiManifestScan(db),
 *   hasher: createBlobHasher(blobs, new Blake3WorkerPool()), // deep runs hash every multi-chunk file
 * });
 * ```
 */
export function createManifestsConsistencyCheck(options: ManifestsConsistencyCheckOptions): ConsistencyCheck {
  const { scan, logger, hasher } = options;
  const graceMs = options.graceWindowMs ?? DEFAULT_GRACE_WINDOW_MS;
  const hashConcurrency = options.hashConcurrency ?? 4;
  if (!Number.isSafeInteger(hashConcurrency) || hashConcurrency < 1) {
    throw new TenantsError(
      'INVALID_CONFIG',
      `createManifestsConsistencyCheck: hashConcurrency must be an integer of at least 1, got ${String(options.hashConcurrency)}`,
    );
  }
  if (hasher !== undefined && typeof hasher.hashStoredSequence !== 'function') {
    throw new TenantsError(
      'INVALID_CONFIG',
      'createManifestsConsistencyCheck: hasher must hash stored sequences (hashStoredSequence): use createBlobHasher of @oxicloud/storage',
    );
  }
  /** The whole-file pass runs in this run: deep, and a hasher to run it with. */
  const wholeFilePass = (runOptions: CheckOptions) => runOptions.deep && hasher !== undefined;

  /** Hashes with `hash`; an abort is `undone`, a blob missing or a malformed key `unreadable`. */
  async function attempt<T>(
    hash: () => Promise<T>,
    signal: AbortSignal,
  ): Promise<T | 'undone' | 'unreadable'> {
    try {
      return await hash();
    } catch (error) {
      if (signal.aborted) return 'undone';
      const code = errorCode(error);
      if (code === 'NOT_FOUND' || code === 'INVALID_HASH') return 'unreadable';
      throw error;
    }
  }

  /** One manifest's whole file through one BLAKE3; on a mismatch, its chunks one by one. */
  async function verifyWholeFile(
    h: BlobSequenceHasher,
    m: MultiChunkManifest,
    signal: AbortSignal,
  ): Promise<WholeFileVerdict> {
    const whole = await attempt(() => h.hashStoredSequence(m.chunkHashes, signal), signal);
    if (whole === 'undone') return UNDONE;
    // A chunk missing: storage_consistency's missing_blob_bytes (files_consistency's without a row).
    if (whole === 'unreadable' || whole.hash === m.fileHash) return NONE;
    // One finding per cause: a chunk that does not hash to its key is storage_consistency's finding.
    for (const chunk of new Set(m.chunkHashes)) {
      const digest = await attempt(() => h.hashStoredBlob(chunk, signal), signal);
      if (digest === 'undone') return UNDONE;
      if (digest === 'unreadable' || digest.hash !== chunk) return NONE;
    }
    return { state: 'mismatch', manifest: m, digest: whole };
  }

  /** Pass 2 of the whole-file pass: the row re-read now; deleted, or its chunk list changed: dropped. */
  async function confirmHashMismatches(
    verdicts: readonly Extract<WholeFileVerdict, { state: 'mismatch' }>[],
    scanOptions: ManifestScanOptions,
  ): Promise<Inconsistency[]> {
    const now = new Map(
      (
        await scan.rereadMultiChunkManifests(
          verdicts.map((v) => v.manifest.fileHash),
          scanOptions,
        )
      ).map((row) => [row.fileHash, row]),
    );
    const out: Inconsistency[] = [];
    for (const { manifest, digest } of verdicts) {
      const row = now.get(manifest.fileHash);
      if (row === undefined || !sameList(row.chunkHashes, manifest.chunkHashes)) continue;
      out.push({
        kind: MANIFEST_HASH_MISMATCH,
        severity: 'DataLoss',
        resourceId: row.fileHash,
        detail: {
          actual_hash: digest.hash,
          total_size: row.totalSize,
          chunk_count: row.chunkCount,
          file_count: row.fileCount,
        },
        magnitude: row.fileCount,
      });
    }
    return out;
  }

  /** One batch of phase 2: a page of manifests, the multi-chunk ones hashed in order, a prefix of them finished. */
  async function wholeFileBatch(
    store: CheckStore,
    after: string | null,
    context: BatchContext,
    run: { readonly scanOptions: ManifestScanOptions; readonly wholeFile: boolean },
  ): Promise<BatchResult> {
    const here = encodePhaseCursor(
      PHASE_WHOLE_FILE,
      after === null ? new Uint8Array() : hashCursor.encode(after),
    );
    // A run paused in this phase and resumed by a server without a hasher: nothing it can do.
    if (!run.wholeFile || hasher === undefined) return { cursor: here, done: true, scanned: 0 };
    const page = await scan.scanMultiChunkManifests(after, context.limit, run.scanOptions);
    const verdicts: WholeFileVerdict[] = [];
    const started = await processPrefix(
      page.manifests.map((manifest, index) => ({ manifest, index })),
      hashConcurrency,
      async ({ manifest, index }) => {
        verdicts[index] = await verifyWholeFile(hasher, manifest, context.signal);
      },
      (index) => context.signal.aborted || (index > 0 && performance.now() > context.deadline),
    );
    // The finished prefix: up to the first manifest not started or whose hash the abort cut.
    let finished = 0;
    while (finished < started && verdicts[finished]?.state !== 'undone') finished++;
    const cut = finished < page.manifests.length;
    if (cut && finished === 0) return { cursor: null, done: false, scanned: 0 };
    const mismatches = verdicts
      .slice(0, finished)
      .filter((v): v is Extract<WholeFileVerdict, { state: 'mismatch' }> => v?.state === 'mismatch');
    await twoPass(
      store,
      mismatches.map((v) => ({ kind: MANIFEST_HASH_MISMATCH, resourceId: v.manifest.fileHash, verdict: v })),
      (candidates) =>
        confirmHashMismatches(
          candidates.map((c) => c.verdict),
          run.scanOptions,
        ),
    );
    const end: PagedMultiChunkManifest | null = cut ? (page.manifests[finished - 1] ?? null) : null;
    const lastKey = end === null ? page.lastKey : end.fileHash;
    return {
      cursor: lastKey === null ? here : encodePhaseCursor(PHASE_WHOLE_FILE, hashCursor.encode(lastKey)),
      done: !cut && page.last,
      scanned: end === null ? page.scanned : end.position,
      anomalies: mismatches.length,
    };
  }

  const check: ConsistencyCheck = {
    name: MANIFESTS_CONSISTENCY_CHECK_NAME,
    subsystem: scan.subsystem(),
    order: 32,
    countMeaning:
      'findings this run found: chunk manifests whose ref_count disagrees with the files that name them, or whose shape is broken' +
      (hasher === undefined ? '' : ', and (deep) whose chunks do not hash to their file hash'),
    kinds: [
      {
        kind: MANIFEST_REF_COUNT_LOW,
        severity: 'DataLoss',
        meaning:
          "the manifest's ref_count is below the number of files naming it: OxiCloud deletes a manifest at ref_count ≤ 1, " +
          'so deleting or overwriting one of them makes the others unreadable',
        magnitude: 'count',
        repair:
          'raise_manifest_ref_count: ref_count := the files naming it, counted under the row lock; the line lists the files that were at risk',
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
      ...(hasher === undefined
        ? []
        : [
            {
              kind: MANIFEST_HASH_MISMATCH,
              severity: 'DataLoss' as const,
              meaning:
                'deep runs, a pass of their own: every chunk of the multi-chunk manifest hashes to its key, yet the ' +
                'chunks in order do not hash (BLAKE3) to its file_hash (chunks listed in the wrong order, a wrong ' +
                'chunk, or a wrong file_hash): its files read other bytes than were uploaded. A chunk that is ' +
                'missing or does not hash to its key is storage_consistency’s finding (missing_blob_bytes, a size ' +
                'or a hash mismatch) and its manifests are not reported. The pass re-reads shared chunks: a chunk ' +
                'N manifests list is read N times (magnitude: the files naming it)',
              magnitude: 'count' as const,
              repair: null,
            },
          ]),
    ],
    ...(hasher === undefined ? {} : { deep: true }),
    graceWindowMs: () => graceMs,
    // The whole-file hash is examined by deep runs only, with the check's grace.
    ...(hasher === undefined
      ? {}
      : {
          kindGraceMs: (runOptions: CheckOptions) => ({
            [MANIFEST_HASH_MISMATCH]: wholeFilePass(runOptions) ? effectiveGraceMs(check, runOptions) : null,
          }),
        }),
    concurrentSafe: () => true,
    // A deep run walks the manifests twice (the rows, then the whole-file hashes).
    estimateTotal: async (runOptions) => {
      const rows = await scan.estimateRows();
      return rows !== null && wholeFilePass(runOptions) ? rows * 2 : rows;
    },
    runResumable(store: CheckStore, runOptions: CheckOptions, signal: AbortSignal): Promise<RunOutcome> {
      const scanOptions: ManifestScanOptions = {
        createdBefore: graceBoundary(store.startedAt, effectiveGraceMs(check, runOptions)),
      };
      const run = { scanOptions, wholeFile: wholeFilePass(runOptions) };
      const rowsBatch = scanBatch<ManifestAnomaly>(
        async (cursor, limit) => {
          const key = cursor === null ? new Uint8Array() : decodePhaseCursor(cursor, KEY_LENGTHS).key;
          const page = await scan.scanManifests(
            key.length === 0 ? null : hashCursor.decode(key),
            limit,
            scanOptions,
          );
          const end = page.scanned < limit;
          return {
            scanned: page.scanned,
            items: page.anomalies,
            // The rows are walked: the whole-file pass next, in a deep run with a hasher.
            cursor:
              end && run.wholeFile
                ? encodePhaseCursor(PHASE_WHOLE_FILE)
                : encodePhaseCursor(
                    PHASE_ROWS,
                    page.lastKey === null ? key : hashCursor.encode(page.lastKey),
                  ),
            done: end && !run.wholeFile,
          };
        },
        (items) =>
          twoPass(
            store,
            items.flatMap((a) => ROW_KINDS.map((kind) => ({ kind, resourceId: a.fileHash }))),
            async () =>
              (
                await scan.reverifyManifests(
                  items.map((a) => a.fileHash),
                  scanOptions,
                )
              ).flatMap(manifestFindings),
          ),
      );
      return runBatches({
        logTarget: CONSISTENCY_LOG_TARGET,
        store,
        signal,
        name: MANIFESTS_CONSISTENCY_CHECK_NAME,
        logger,
        batchSize: runOptions.batchSize,
        throttleMs: runOptions.throttleMs,
        batch: (cursor, context) => {
          const at = cursor === null ? null : decodePhaseCursor(cursor, KEY_LENGTHS);
          if (at?.phase !== PHASE_WHOLE_FILE) return rowsBatch(cursor, context);
          return wholeFileBatch(store, at.key.length === 0 ? null : hashCursor.decode(at.key), context, run);
        },
        describeCursor: (cursor) => {
          const at = decodePhaseCursor(cursor, KEY_LENGTHS);
          const pass = at.phase === PHASE_WHOLE_FILE ? 'the whole-file hash pass' : 'the manifest rows';
          return at.key.length === 0
            ? `at the start of ${pass}`
            : `in ${pass} after manifest ${hashCursor.decode(at.key)}`;
        },
      });
    },
  };
  return check;
}
