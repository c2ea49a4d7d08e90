import type { StatefulAdapter } from '@oxicloud/consistency';
import type { ScanPage } from './scan-page.js';

/** The position of a file in the `(blob_hash, id)` walk. */
export interface FileBlobKey {
  readonly blobHash: string;
  readonly fileId: string;
}

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

/** The grace boundaries of a file scan (from the run's `startedAt`, never the wall clock). */
export interface FileScanOptions {
  /** Only files created at or before this instant are flagged. */
  readonly createdBefore: Date;
  /** Only folders trashed at or before this instant count as trashed. */
  readonly trashedBefore: Date;
}

/**
 * What `files_consistency` reads. Phase 1 walks `storage.files` in
 * `(blob_hash, id)` order over the covering index `(blob_hash, id) INCLUDE
 * (size, folder_id, is_trashed)` and range-joins `storage.blobs` per page;
 * phase 2 walks the trashed folders in id order and finds the live files
 * inside them. A state-owning port: the adapter returns `files_consistency`
 * from `consistencyChecks()`.
 */
export interface FileBlobScan extends StatefulAdapter {
  /** Phase 1: up to `limit` files after `after` in `(blob_hash, id)` order; anomalies: missing blob row or size mismatch. */
  scanFilesByBlob(
    after: FileBlobKey | null,
    limit: number,
    options: FileScanOptions,
  ): Promise<ScanPage<FileBlobAnomaly, FileBlobKey>>;
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
  /** Rows the walk will examine (files + folders), from planner statistics; `null` when unknown. */
  estimateRows(): Promise<number | null>;
}
