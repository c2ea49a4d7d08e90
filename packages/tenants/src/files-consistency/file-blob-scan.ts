import type { StatefulAdapter } from '@oxicloud/consistency';
import type { ScanPage } from '../ports/scan-page.js';

/** A file whose blob row is missing (`blobSize === null`) or has another size. */
export interface FileBlobAnomaly {
  readonly fileId: string;
  readonly blobHash: string;
  /** `storage.files.size`. */
  readonly fileSize: number;
  /** `storage.blobs.size`, or `null` when the blob row does not exist. */
  readonly blobSize: number | null;
}

/** A blob hash referenced by files but absent from `storage.blobs`, with its fan-out. */
export interface MissingBlob {
  readonly blobHash: string;
  /** Files referencing the hash (live and trashed). */
  readonly refCount: number;
  /** Of those, the live ones. */
  readonly liveFileCount: number;
  /** `SUM(size)` of the referencing files. */
  readonly totalBytes: number;
  /** The referencing file ids, in id order, at most the `maxFileIds` asked for. */
  readonly affectedFileIds: readonly string[];
}

/** A live file inside a trashed folder. */
export interface LiveFileInTrashedFolder {
  readonly fileId: string;
  readonly folderId: string;
  readonly driveId: string;
  readonly folderTrashedAt: Date | null;
}

/**
 * A file whose blob row is missing or of another size, whose drive differs
 * from its folder's, or whose mime type contradicts its blob's content type.
 */
export interface FileRowAnomaly {
  readonly fileId: string;
  readonly driveId: string;
  readonly folderId: string | null;
  /** The folder's `drive_id` when it differs from the file's; `null` when they agree (or no folder). */
  readonly folderDriveId: string | null;
  readonly blobHash: string;
  /** `storage.files.mime_type`. */
  readonly mimeType: string;
  /** `storage.blobs.content_type` (`null` when unknown or no row). */
  readonly blobContentType: string | null;
  /** Both types are known (not empty, not `application/octet-stream`) and differ (case and parameters ignored). */
  readonly mimeMismatch: boolean;
  /** `storage.files.size`. */
  readonly fileSize: number;
  /** `storage.blobs.size`, or `null` when the blob row does not exist (a missing blob). */
  readonly blobSize: number | null;
  /**
   * `media_sort_date` against what it should be (OxiCloud §12 item 22:
   * `COALESCE(file_metadata.captured_at, files.created_at)`) when they
   * differ; `null` or absent when they agree (or the model has no such column).
   */
  readonly mediaSortDate?: { readonly recorded: Date; readonly expected: Date } | null;
  /**
   * `category_order` against OxiCloud's `category_order_for(name,
   * mime_type)` (§12 item 23) when they differ; `null` or absent when they
   * agree (or the model has no such column).
   */
  readonly categoryOrder?: { readonly recorded: number; readonly expected: number } | null;
}

/** The grace boundaries of a file scan (from the run's `startedAt`, never the wall clock). */
export interface FileScanOptions {
  /** Only files created at or before this instant are flagged. */
  readonly createdBefore: Date;
  /** Only folders trashed at or before this instant count as trashed. */
  readonly trashedBefore: Date;
}

/**
 * A media file with no metadata row, whose bytes OxiCloud's extractor reads
 * at their raw path (a legacy blob or a one-chunk manifest: the object is
 * named by the file's own hash): phase 4's candidate (§12 item 24).
 */
export interface MediaFileWithoutMetadata {
  readonly fileId: string;
  /** `storage.files.blob_hash`: also the object's key. */
  readonly blobHash: string;
  readonly mimeType: string;
  readonly size: number;
  /** Which row is missing: images and videos `storage.file_metadata`, audio `audio.file_metadata`. */
  readonly table: 'file_metadata' | 'audio_file_metadata';
}

/** Phase 4's boundaries: the file scan's, and whether audio counts (OxiCloud's music feature is on). */
export interface MediaScanOptions extends FileScanOptions {
  readonly audio: boolean;
}

/**
 * Phase 3 read ahead of the batch loop: each {@link FileRowStream.next}
 * answers what {@link FileBlobScan.scanFilesById} would for the same
 * arguments, but an implementation may read many pages per statement and
 * the next ones while the caller checkpoints. It must not hold a transaction
 * (a snapshot) open between calls for long; a `next` whose `afterFileId` is
 * not where the stream stands (a replayed batch) or with another `limit`
 * reads from there.
 */
export interface FileRowStream {
  /** The same page {@link FileBlobScan.scanFilesById} returns for these arguments. */
  next(afterFileId: string | null, limit: number): Promise<ScanPage<FileRowAnomaly>>;
  /** Drops what was read ahead and waits for a statement in flight (idempotent); the run is over. */
  close(): Promise<void>;
}

/**
 * What `files_consistency` reads. Phase 2 walks the trashed folders in id
 * order and finds the live files inside them; phase 3 walks the file rows in
 * id order against their folder (drive) and blob row (existence, size,
 * content type). (Phase 1, a `(blob_hash, id)` walk for the blob rows alone,
 * is gone: issue 22.) A state-owning port: the adapter returns
 * `files_consistency` from `consistencyChecks()`.
 */
export interface FileBlobScan extends StatefulAdapter {
  /** Pass 2 of `missing_blob`: of these hashes, those still absent, with their old-enough referencing files. */
  missingBlobs(
    hashes: readonly string[],
    options: FileScanOptions & { readonly maxFileIds: number },
  ): Promise<MissingBlob[]>;
  /** Pass 2 of `blob_size_mismatch`: of these files, those that still exist and still differ from their blob row. */
  reverifyBlobSizes(fileIds: readonly string[], options: FileScanOptions): Promise<FileBlobAnomaly[]>;
  /**
   * Phase 2: up to `limit` trashed folders with id > `afterFolderId` in id
   * order; anomalies: the live files inside them (`scanned` counts folders).
   */
  scanTrashedFolders(
    afterFolderId: string | null,
    limit: number,
    options: FileScanOptions,
  ): Promise<ScanPage<LiveFileInTrashedFolder>>;
  /** Pass 2 of `parent_folder_trashed`: of these files, those still live in a still-trashed folder. */
  reverifyLiveFilesInTrashedFolders(
    fileIds: readonly string[],
    options: FileScanOptions,
  ): Promise<LiveFileInTrashedFolder[]>;
  /**
   * Phase 3: up to `limit` files with id > `afterFileId` in id order, each
   * joined to its folder and its blob row by primary key; anomalies: a blob
   * row that is missing or of another size, a drive that differs from the
   * folder's, a mime type that contradicts the blob's content type.
   */
  scanFilesById(
    afterFileId: string | null,
    limit: number,
    options: FileScanOptions,
  ): Promise<ScanPage<FileRowAnomaly>>;
  /**
   * Phase 3 as a stream ({@link FileRowStream}); `null` (or no method) when
   * this adapter has no connection of its own for it: the check then pages
   * with {@link scanFilesById}.
   */
  openFileRowStream?(options: FileScanOptions): FileRowStream | null;
  /** Pass 2 of phase 3: of these files, those still anomalous. */
  reverifyFileRows(fileIds: readonly string[], options: FileScanOptions): Promise<FileRowAnomaly[]>;
  /**
   * Phase 4 (deep runs with a media probe): up to `limit` files with id >
   * `afterFileId` in id order (`scanned` counts them all); anomalies: the
   * old-enough image, video (and with `audio`, audio) files without their
   * metadata row whose content is read at its raw path (a legacy blob, or a
   * manifest of one chunk). No method: the check has no phase 4.
   */
  scanMediaWithoutMetadata?(
    afterFileId: string | null,
    limit: number,
    options: MediaScanOptions,
  ): Promise<ScanPage<MediaFileWithoutMetadata>>;
  /** Pass 2 of phase 4: of these files, those still without their row, with the same content. */
  reverifyMediaWithoutMetadata?(
    files: readonly MediaFileWithoutMetadata[],
    options: MediaScanOptions,
  ): Promise<MediaFileWithoutMetadata[]>;
  /** Rows the walk will examine (the files, once), from planner statistics; `null` when unknown. */
  estimateRows(): Promise<number | null>;
}
