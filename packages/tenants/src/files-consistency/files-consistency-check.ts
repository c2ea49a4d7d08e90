/**
 * files_consistency: each file row against its blob row and its folder.
 *
 * The five decisions (ConsistencyCheck's "for implementors"):
 *
 * 1. Direction. Forward (DB → blob rows): the missing side of the old
 *    bidirectional blob check (the orphan side, storage → DB, is
 *    storage_consistency's). Two phases (numbered 2 and 3: phase 1, a
 *    `(blob_hash, id)` merge walk for the blob rows alone, is gone, issue 22):
 *    (2) the trashed folders in id order, and the live files inside them:
 *        `parent_folder_trashed`. Walking the few trashed folders instead of
 *        looking up every file's folder trash state keeps phase 3 lean;
 *    (3) `storage.files` in id order (heap order: ids are UUIDv7), each row
 *        joined by primary key to its folder and its blob row:
 *        `missing_blob`, `blob_size_mismatch`, `drive_id_parent_mismatch`
 *        and `mime_mismatch`, in ONE pass over the files (the blob rows are
 *        probed for the content type anyway; a second walk in blob order for
 *        their existence and size doubled the scan).
 * 2. Severity.
 *    - `missing_blob`: `DataLoss`. Every GET of every file referencing the
 *      hash fails; one finding per blob with its fan-out (ref count, total
 *      bytes, affected file ids), recorded biggest impact first.
 *    - `parent_folder_trashed` (a live file in a trashed folder): `DataLoss`.
 *      The file has vanished from the live tree, and purging the trashed
 *      folder deletes it by `ON DELETE CASCADE`: user content on its way out.
 *    - `drive_id_parent_mismatch` (a file whose `drive_id` differs from its
 *      folder's): `DataLoss`. It is listed in another drive's folder, not in
 *      its own drive (whose quota it counts against), and deleting that
 *      folder cascades through `folder_id` into it: user content on its way
 *      out.
 *    - `mime_mismatch`: `Drift`. The file's `mime_type` and its blob's
 *      `content_type` are both known (not empty, not the column default
 *      `application/octet-stream`, which means unknown) and differ, case and
 *      parameters ignored. The bytes are intact; a client gets one of two
 *      `Content-Type`s depending on which row the server reads. (The blob's
 *      type is the first upload's: a deduplicated blob uploaded under two
 *      names with different types is reported too, which is the point.)
 *    - `blob_size_mismatch`: `Drift`. The bytes are intact; the denormalised
 *      `files.size` is what quota and usage sum, so it is an accounting
 *      mismatch (a client trusting a listed size may see a different
 *      Content-Length, which is why it is worth fixing).
 * 3. Cursor. Phase byte + 16-byte folder id (phase 2); phase byte + 16-byte
 *    file id (phase 3). A stored phase-1 cursor (phase byte + 32-byte hash +
 *    16-byte file id, a run paused by an older build) restarts at phase 2:
 *    its findings so far are upserted again, none lost.
 * 4. Grace. 1 h from the run's `startedAt`: files created after the boundary
 *    are skipped (an upload whose blob row lands a moment later is not
 *    missing), and folders trashed after it do not count as trashed (a
 *    subtree being trashed right now); phase 3 skips young files too (an
 *    upload whose blob row, with its content type, lands a moment later).
 *    `force` makes it 0.
 * 5. Batch. 1000 rows or 30 s (`runBatches` of `@oxicloud/recoverable`), checkpoint + status poll
 *    between batches. Phase 3 reads its pages from the adapter's stream when it
 *    offers one (`openFileRowStream`: `OxiFileContentScan` reads 100,000 file
 *    rows per statement, only the anomalies and each page's last key come
 *    back, and the next segment is read while this one's pages checkpoint);
 *    the stream is closed when the run stops. Pass 2 re-reads the file and the blob before
 *    recording: a file deleted mid-scan or a blob that landed meanwhile is
 *    dropped, and so is any finding recorded for it before a resume.
 * 6. Closing (findings across runs). A `Completed` run walked all its
 *    phases; a finding it did not report again, that pass 2 did not drop, and
 *    whose last report came from a run whose grace boundary is not later than
 *    this run's (a file old then is old now; with a grace longer than the time
 *    between runs it waits for a later run) is `fixed`. A deleted file (or
 *    blob hash no file references any more) fixes its findings. Magnitude:
 *    `missing_blob` the number of files referencing the hash,
 *    `blob_size_mismatch` the absolute byte delta; the others have none.
 *
 * Phase 4, deep runs with a media probe only (§12 item 24): the files again
 * in id order, for the image, video and audio files with no metadata row
 * whose content OxiCloud's extractor reads at its raw path (a legacy blob,
 * a one-chunk manifest); each one's bytes are read (a prefix) and parsed,
 * and `media_metadata_missing` (`Regenerable`) is reported where OxiCloud
 * would have stored a row. Multi-chunk, encrypted and S3 content never gets
 * one (OxiCloud reads a path that does not hold the plaintext), so the
 * server configures the probe for a local unencrypted store only. Pass 2
 * re-reads the row. Only deep runs examine the kind (`kindGraceMs`): a run
 * without `deep` never fixes one.
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
  decodePhaseCursor,
  encodePhaseCursor,
  processPrefix,
  type RunOutcome,
  runBatches,
  type ScanBatch,
  scanBatch,
  uuidCursor,
} from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import type {
  FileBlobAnomaly,
  FileBlobScan,
  FileRowAnomaly,
  FileRowStream,
  LiveFileInTrashedFolder,
  MediaFileWithoutMetadata,
  MediaScanOptions,
  MissingBlob,
} from './file-blob-scan.js';
import type { MediaMetadataProbe } from './media-metadata-probe.js';

/** Job name of the check. */
export const FILES_CONSISTENCY_CHECK_NAME = 'files_consistency';
/** Finding kinds of files_consistency. */
export const MISSING_BLOB = 'missing_blob';
export const BLOB_SIZE_MISMATCH = 'blob_size_mismatch';
export const PARENT_FOLDER_TRASHED = 'parent_folder_trashed';
/** A file whose drive differs from its folder's (the same kind name as folders_consistency's). */
export const FILE_DRIVE_ID_PARENT_MISMATCH = 'drive_id_parent_mismatch';
export const MIME_MISMATCH = 'mime_mismatch';
/** files_consistency: `media_sort_date` against `COALESCE(captured_at, created_at)` (OxiCloud §12 item 22). */
export const MEDIA_SORT_DATE_MISMATCH = 'media_sort_date_mismatch';
/** files_consistency: `category_order` against `category_order_for(name, mime_type)` (OxiCloud §12 item 23). */
export const CATEGORY_ORDER_MISMATCH = 'category_order_mismatch';
/** files_consistency, deep runs: a media file without the metadata row OxiCloud would have stored (§12 item 24). */
export const MEDIA_METADATA_MISSING = 'media_metadata_missing';
/** At most this many file ids are listed in a `missing_blob` finding's detail. */
export const MAX_AFFECTED_FILE_IDS = 1000;

/** An older build's first phase: its cursors still decode, and restart at phase 2. */
const PHASE_FILES_BY_BLOB = 1;
const PHASE_TRASHED_FOLDERS = 2;
const PHASE_FILES_BY_ID = 3;
const PHASE_MEDIA = 4;
const KEY_LENGTHS = {
  [PHASE_FILES_BY_BLOB]: 48,
  [PHASE_TRASHED_FOLDERS]: 16,
  [PHASE_FILES_BY_ID]: 16,
  [PHASE_MEDIA]: 16,
};

/** Options of {@link createFilesConsistencyCheck}. */
export interface FilesConsistencyCheckOptions {
  readonly scan: FileBlobScan;
  /** @defaultValue 1 h */
  readonly graceWindowMs?: number;
  readonly logger?: Logger;
  /**
   * Phase 4 of deep runs (§12 item 24), when the scan offers it: which bytes
   * would have given a metadata row (`createMediaMetadataProbe` over the
   * store OxiCloud reads at raw paths: a local, unencrypted one), and
   * whether audio counts (OxiCloud's `OXICLOUD_ENABLE_MUSIC`, default on).
   * Absent: no phase 4, no deep mode.
   */
  readonly media?: { readonly probe: MediaMetadataProbe; readonly audio?: boolean };
  /** Files phase 4 reads at once. @defaultValue 4 */
  readonly probeConcurrency?: number;
}

type Item =
  | { readonly phase: typeof PHASE_TRASHED_FOLDERS; readonly anomaly: LiveFileInTrashedFolder }
  | { readonly phase: typeof PHASE_FILES_BY_ID; readonly anomaly: FileRowAnomaly }
  | { readonly phase: typeof PHASE_MEDIA; readonly anomaly: MediaFileWithoutMetadata };

function mediaMissingFinding(m: MediaFileWithoutMetadata): Inconsistency {
  return {
    kind: MEDIA_METADATA_MISSING,
    severity: 'Regenerable',
    resourceId: m.fileId,
    detail: { blob_hash: m.blobHash, mime_type: m.mimeType, table: m.table },
  };
}

function missingBlobFinding(m: MissingBlob): Inconsistency {
  return {
    kind: MISSING_BLOB,
    severity: 'DataLoss',
    resourceId: m.blobHash,
    detail: {
      ref_count: m.refCount,
      live_file_count: m.liveFileCount,
      total_bytes: m.totalBytes,
      affected_file_ids: m.affectedFileIds,
      affected_file_ids_truncated: m.affectedFileIds.length < m.refCount,
    },
    magnitude: m.refCount,
  };
}

function sizeMismatchFinding(a: FileBlobAnomaly): Inconsistency {
  return {
    kind: BLOB_SIZE_MISMATCH,
    severity: 'Drift',
    resourceId: a.fileId,
    detail: {
      blob_hash: a.blobHash,
      file_size: a.fileSize,
      blob_size: a.blobSize,
      delta: a.blobSize === null ? null : a.fileSize - a.blobSize,
    },
    magnitude: a.blobSize === null ? null : Math.abs(a.fileSize - a.blobSize),
  };
}

function trashedFolderFinding(f: LiveFileInTrashedFolder): Inconsistency {
  return {
    kind: PARENT_FOLDER_TRASHED,
    severity: 'DataLoss',
    resourceId: f.fileId,
    detail: {
      folder_id: f.folderId,
      drive_id: f.driveId,
      folder_trashed_at: f.folderTrashedAt?.toISOString() ?? null,
    },
  };
}

/** The findings one anomalous file row (phase 3) stands for. */
export function fileRowFindings(a: FileRowAnomaly): Inconsistency[] {
  const out: Inconsistency[] = [];
  if (a.folderDriveId !== null) {
    out.push({
      kind: FILE_DRIVE_ID_PARENT_MISMATCH,
      severity: 'DataLoss',
      resourceId: a.fileId,
      detail: { drive_id: a.driveId, folder_id: a.folderId, folder_drive_id: a.folderDriveId },
    });
  }
  if (a.mediaSortDate) {
    out.push({
      kind: MEDIA_SORT_DATE_MISMATCH,
      severity: 'Drift',
      resourceId: a.fileId,
      detail: {
        recorded: a.mediaSortDate.recorded.toISOString(),
        expected: a.mediaSortDate.expected.toISOString(),
      },
    });
  }
  if (a.categoryOrder) {
    out.push({
      kind: CATEGORY_ORDER_MISMATCH,
      severity: 'Drift',
      resourceId: a.fileId,
      detail: { recorded: a.categoryOrder.recorded, expected: a.categoryOrder.expected },
    });
  }
  if (a.mimeMismatch) {
    out.push({
      kind: MIME_MISMATCH,
      severity: 'Drift',
      resourceId: a.fileId,
      detail: { blob_hash: a.blobHash, mime_type: a.mimeType, blob_content_type: a.blobContentType },
    });
  }
  return out;
}

/** Biggest impact first: more referencing files, then more bytes. */
function byImpact(a: MissingBlob, b: MissingBlob): number {
  return b.refCount - a.refCount || b.totalBytes - a.totalBytes || (a.blobHash < b.blobHash ? -1 : 1);
}

/**
 * The `files_consistency` check over a {@link FileBlobScan}. Findings:
 * `missing_blob` (`DataLoss`, resource = blob hash, detail `{ ref_count,
 * live_file_count, total_bytes, affected_file_ids, affected_file_ids_truncated }`),
 * `blob_size_mismatch` (`Drift`, resource = file id),
 * `parent_folder_trashed` and `drive_id_parent_mismatch` (`DataLoss`,
 * resource = file id) and `mime_mismatch` (`Drift`, resource = file id).
 */
export function createFilesConsistencyCheck(options: FilesConsistencyCheckOptions): ConsistencyCheck {
  const { scan, logger } = options;
  const graceMs = options.graceWindowMs ?? DEFAULT_GRACE_WINDOW_MS;
  const probeConcurrency = options.probeConcurrency ?? 4;
  /** Phase 4 exists: a probe, and a scan that lists the candidates. */
  const media =
    options.media !== undefined &&
    scan.scanMediaWithoutMetadata !== undefined &&
    scan.reverifyMediaWithoutMetadata !== undefined
      ? {
          probe: options.media.probe,
          audio: options.media.audio ?? true,
          scanPage: scan.scanMediaWithoutMetadata.bind(scan),
          reverify: scan.reverifyMediaWithoutMetadata.bind(scan),
        }
      : null;
  /** This run walks phase 4: deep, and phase 4 exists. */
  const mediaPass = (runOptions: CheckOptions) => runOptions.deep && media !== null;

  async function fetchBatch(
    cursor: Uint8Array | null,
    limit: number,
    scanOptions: MediaScanOptions,
    stream: FileRowStream | null,
    withMedia: boolean,
  ): Promise<ScanBatch<Item>> {
    const stored =
      cursor === null
        ? { phase: PHASE_TRASHED_FOLDERS, key: new Uint8Array() }
        : decodePhaseCursor(cursor, KEY_LENGTHS);
    const at =
      stored.phase === PHASE_FILES_BY_BLOB ? { phase: PHASE_TRASHED_FOLDERS, key: new Uint8Array() } : stored;
    if (at.phase === PHASE_TRASHED_FOLDERS) {
      const page = await scan.scanTrashedFolders(
        at.key.length === 0 ? null : uuidCursor.decode(at.key),
        limit,
        scanOptions,
      );
      return {
        scanned: page.scanned,
        items: page.anomalies.map((anomaly) => ({ phase: PHASE_TRASHED_FOLDERS, anomaly })),
        cursor:
          page.lastKey === null || page.scanned < limit
            ? encodePhaseCursor(PHASE_FILES_BY_ID)
            : encodePhaseCursor(PHASE_TRASHED_FOLDERS, uuidCursor.encode(page.lastKey)),
        done: false,
      };
    }
    const after = at.key.length === 0 ? null : uuidCursor.decode(at.key);
    if (at.phase === PHASE_MEDIA) {
      // A run paused in phase 4 and resumed by a server without a probe: nothing it can do.
      if (media === null || !withMedia)
        return { scanned: 0, items: [], cursor: encodePhaseCursor(PHASE_MEDIA, at.key), done: true };
      const page = await media.scanPage(after, limit, scanOptions);
      return {
        scanned: page.scanned,
        items: page.anomalies.map((anomaly) => ({ phase: PHASE_MEDIA, anomaly })),
        cursor: encodePhaseCursor(
          PHASE_MEDIA,
          page.lastKey === null ? at.key : uuidCursor.encode(page.lastKey),
        ),
        done: page.scanned < limit,
      };
    }
    const page = stream
      ? await stream.next(after, limit)
      : await scan.scanFilesById(after, limit, scanOptions);
    const end = page.scanned < limit;
    return {
      scanned: page.scanned,
      items: page.anomalies.map((anomaly) => ({ phase: PHASE_FILES_BY_ID, anomaly })),
      // The files are walked: phase 4 next, in a deep run with a media probe.
      cursor:
        end && withMedia
          ? encodePhaseCursor(PHASE_MEDIA)
          : encodePhaseCursor(
              PHASE_FILES_BY_ID,
              page.lastKey === null ? at.key : uuidCursor.encode(page.lastKey),
            ),
      done: end && !withMedia,
    };
  }

  /**
   * Phase 4's candidates whose bytes would have given a row, in order. A
   * batch's candidates are few (media files without a row) and each read is
   * a prefix: a cancel lets the batch finish them.
   */
  async function probeMedia(
    candidates: readonly MediaFileWithoutMetadata[],
  ): Promise<MediaFileWithoutMetadata[]> {
    if (media === null) return [];
    const verdicts: Array<boolean | null> = new Array(candidates.length).fill(null);
    await processPrefix(
      candidates.map((file, index) => ({ file, index })),
      probeConcurrency,
      async ({ file, index }) => {
        verdicts[index] = await media.probe.wouldStore(file);
      },
      () => false,
    );
    return candidates.filter((_, i) => verdicts[i] === true);
  }

  async function processBatch(
    store: CheckStore,
    items: readonly Item[],
    scanOptions: MediaScanOptions,
  ): Promise<void> {
    const blobAnomalies: FileBlobAnomaly[] = [];
    const inTrash: LiveFileInTrashedFolder[] = [];
    const fileRows: FileRowAnomaly[] = [];
    const mediaCandidates: MediaFileWithoutMetadata[] = [];
    for (const item of items) {
      if (item.phase === PHASE_TRASHED_FOLDERS) {
        inTrash.push(item.anomaly);
        continue;
      }
      if (item.phase === PHASE_MEDIA) {
        mediaCandidates.push(item.anomaly);
        continue;
      }
      const a = item.anomaly;
      // One file row may stand for a blob anomaly (missing, size) and a row anomaly (drive, mime).
      if (a.blobSize === null || a.blobSize !== a.fileSize) {
        blobAnomalies.push({
          fileId: a.fileId,
          blobHash: a.blobHash,
          fileSize: a.fileSize,
          blobSize: a.blobSize,
        });
      }
      if (a.folderDriveId !== null || a.mimeMismatch || a.mediaSortDate || a.categoryOrder) {
        fileRows.push(a);
      }
    }
    const missingHashes = [
      ...new Set(blobAnomalies.filter((a) => a.blobSize === null).map((a) => a.blobHash)),
    ];
    await twoPass(
      store,
      missingHashes.map((hash) => ({ kind: MISSING_BLOB, resourceId: hash })),
      async (cs) => {
        // Pass 2 re-reads the blob row (landed → dropped) and every file that
        // references the hash (all deleted → dropped), across batch borders.
        const still = await scan.missingBlobs(
          cs.map((c) => c.resourceId),
          { ...scanOptions, maxFileIds: MAX_AFFECTED_FILE_IDS },
        );
        return [...still].sort(byImpact).map(missingBlobFinding);
      },
    );
    await twoPass(
      store,
      blobAnomalies
        .filter((a) => a.blobSize !== null)
        .map((a) => ({ kind: BLOB_SIZE_MISMATCH, resourceId: a.fileId })),
      async (cs) =>
        (
          await scan.reverifyBlobSizes(
            cs.map((c) => c.resourceId),
            scanOptions,
          )
        ).map(sizeMismatchFinding),
    );
    await twoPass(
      store,
      inTrash.map((f) => ({ kind: PARENT_FOLDER_TRASHED, resourceId: f.fileId })),
      async (cs) =>
        (
          await scan.reverifyLiveFilesInTrashedFolders(
            cs.map((c) => c.resourceId),
            scanOptions,
          )
        ).map(trashedFolderFinding),
    );
    await twoPass(
      store,
      fileRows.flatMap((a) =>
        [FILE_DRIVE_ID_PARENT_MISMATCH, MIME_MISMATCH, MEDIA_SORT_DATE_MISMATCH, CATEGORY_ORDER_MISMATCH].map(
          (kind) => ({
            kind,
            resourceId: a.fileId,
          }),
        ),
      ),
      async () =>
        (
          await scan.reverifyFileRows(
            fileRows.map((a) => a.fileId),
            scanOptions,
          )
        ).flatMap(fileRowFindings),
    );
    if (media !== null && mediaCandidates.length > 0) {
      const missing = await probeMedia(mediaCandidates);
      const byId = new Map(missing.map((m) => [m.fileId, m]));
      await twoPass(
        store,
        missing.map((m) => ({ kind: MEDIA_METADATA_MISSING, resourceId: m.fileId })),
        async (cs) =>
          (
            await media.reverify(
              cs.map((c) => byId.get(c.resourceId) as MediaFileWithoutMetadata),
              scanOptions,
            )
          ).map(mediaMissingFinding),
      );
    }
  }

  const check: ConsistencyCheck = {
    name: FILES_CONSISTENCY_CHECK_NAME,
    subsystem: scan.subsystem(),
    order: 30,
    countMeaning:
      'findings this run found: files whose blob row is missing or of another size, or whose folder is trashed',
    kinds: [
      {
        kind: MISSING_BLOB,
        severity: 'DataLoss',
        meaning: 'files reference a blob hash that has no storage.blobs row (one finding per hash)',
        magnitude: 'count',
        repair:
          'insert_blob_row once the bytes hash to the key, or restore_bytes_and_row_from_<other backend>; no bytes anywhere: a person decides',
      },
      {
        kind: BLOB_SIZE_MISMATCH,
        severity: 'Drift',
        meaning: "the file's size differs from its blob row's size",
        magnitude: 'bytes',
        repair: 'set_file_size_from_blob: size := the blob row size; drive and user usage move by the delta',
      },
      {
        kind: PARENT_FOLDER_TRASHED,
        severity: 'DataLoss',
        meaning:
          'a live file in a trashed folder: gone from the live tree, and emptying the trash deletes it',
        repair: 'resolve_live_under_trashed_parent: a choice, restore_parent or trash_child',
      },
      {
        kind: FILE_DRIVE_ID_PARENT_MISMATCH,
        severity: 'DataLoss',
        meaning: "the file's drive differs from its folder's drive",
        repair: null,
      },
      {
        kind: MEDIA_SORT_DATE_MISMATCH,
        severity: 'Drift',
        meaning:
          "the file's media_sort_date (the Photos timeline's order) differs from its metadata's captured_at, or its created_at without one: a metadata row deleted (no trigger resets the date) or a folder copy (the copy keeps the source's date, no metadata row)",
        repair:
          'recompute_media_sort_date: := its capture date, else its created_at (OxiCloud’s formula), under the row lock',
      },
      {
        kind: CATEGORY_ORDER_MISMATCH,
        severity: 'Drift',
        meaning:
          'the file\'s category_order (the "sort by type" bucket) differs from what OxiCloud computes from its name and mime_type: a rename (never recomputed) or a folder copy (copies keep 9999)',
        repair:
          'recompute_category_order: := OxiCloud’s category_order_for(name, mime_type), under the row lock',
      },
      {
        kind: MIME_MISMATCH,
        severity: 'Drift',
        meaning:
          "the file's mime_type contradicts its blob's content_type (application/octet-stream = unknown)",
        repair: null,
      },
      ...(media === null
        ? []
        : [
            {
              kind: MEDIA_METADATA_MISSING,
              severity: 'Regenerable' as const,
              meaning:
                'deep runs: an image, video' +
                (media.audio ? ' or audio' : '') +
                " file has no metadata row, yet OxiCloud's extractor would have stored one from its bytes " +
                '(EXIF, a container creation time, an ID3v2 tag), read at their raw path (a legacy blob or a ' +
                'one-chunk file on a local unencrypted store): its background extraction failed or never ran, or a ' +
                'folder copy (which copies no metadata); the Photos timeline and the music library miss it. The ' +
                "reextract_image and reextract_audio jobs (like OxiCloud's admin re-extract endpoints) write it",
              repair: null,
            },
          ]),
    ],
    ...(media === null ? {} : { deep: true }),
    // The metadata rows are examined by deep runs only, with the check's grace.
    ...(media === null
      ? {}
      : {
          kindGraceMs: (runOptions: CheckOptions) => ({
            [MEDIA_METADATA_MISSING]: mediaPass(runOptions) ? effectiveGraceMs(check, runOptions) : null,
          }),
        }),
    graceWindowMs: () => graceMs,
    concurrentSafe: () => true,
    // A deep run with phase 4 walks the files twice.
    estimateTotal: async (runOptions) => {
      const rows = await scan.estimateRows();
      return rows !== null && mediaPass(runOptions) ? rows * 2 : rows;
    },
    async runResumable(
      store: CheckStore,
      runOptions: CheckOptions,
      signal: AbortSignal,
    ): Promise<RunOutcome> {
      const boundary = graceBoundary(store.startedAt, effectiveGraceMs(check, runOptions));
      const scanOptions: MediaScanOptions = {
        createdBefore: boundary,
        trashedBefore: boundary,
        audio: media?.audio ?? false,
      };
      const withMedia = mediaPass(runOptions);
      // Phase 3 reads from the adapter's stream when it has one (segments of many pages).
      const stream = scan.openFileRowStream?.(scanOptions) ?? null;
      try {
        return await runBatches({
          logTarget: CONSISTENCY_LOG_TARGET,
          store,
          signal,
          name: FILES_CONSISTENCY_CHECK_NAME,
          logger,
          batchSize: runOptions.batchSize,
          throttleMs: runOptions.throttleMs,
          batch: scanBatch(
            (cursor, limit) => fetchBatch(cursor, limit, scanOptions, stream, withMedia),
            (items) => processBatch(store, items, scanOptions),
          ),
        });
      } finally {
        await stream?.close().catch(() => undefined);
      }
    },
  };
  return check;
}
