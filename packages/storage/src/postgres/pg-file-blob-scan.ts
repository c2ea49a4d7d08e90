import type { ConsistencyCheck } from '@oxicloud/consistency';
import type { Logger } from '@oxicloud/scheduler';
import {
  createFilesConsistencyCheck,
  type FileBlobAnomaly,
  type FileBlobScan,
  type FileRowAnomaly,
  type FileRowStream,
  type FileScanOptions,
  type FilesConsistencyCheckOptions,
  type LiveFileInTrashedFolder,
  type MissingBlob,
  type ScanPage,
} from '@oxicloud/tenants';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { bigintToNumber, type StorageDatabase } from './database.js';
import { DEFAULT_SEGMENT_ROWS, PgFileRowStream } from './pg-file-row-stream.js';
import { estimateRowsOf } from './row-estimate.js';

interface BlobAnomalyJson {
  id: string;
  blob_hash: string;
  file_size: string;
  blob_size: string | null;
}
interface InTrashJson {
  id: string;
  folder_id: string;
  drive_id: string;
  /** ISO text from json_build_object, a Date from a plain column. */
  folder_trashed_at: string | Date | null;
}

interface FileRowJson {
  id: string;
  drive_id: string;
  folder_id: string | null;
  folder_drive_id: string | null;
  blob_hash: string;
  mime_type: string;
  blob_content_type: string | null;
  mime_mismatch: boolean;
  file_size: string;
  blob_size: string | null;
}

const toFileRow = (r: FileRowJson): FileRowAnomaly => ({
  fileId: r.id,
  driveId: r.drive_id,
  folderId: r.folder_id,
  folderDriveId: r.folder_drive_id,
  blobHash: r.blob_hash,
  mimeType: r.mime_type,
  blobContentType: r.blob_content_type,
  mimeMismatch: r.mime_mismatch,
  fileSize: bigintToNumber(r.file_size),
  blobSize: r.blob_size === null ? null : bigintToNumber(r.blob_size),
});

/** A mime type with case and parameters dropped; NULL when unknown (empty or the column default). */
const KNOWN_MIME = (column: string) =>
  sql.raw(
    `NULLIF(NULLIF(lower(btrim(split_part(COALESCE(${column}, ''), ';', 1))), ''), 'application/octet-stream')`,
  );

const toBlobAnomaly = (r: BlobAnomalyJson): FileBlobAnomaly => ({
  fileId: r.id,
  blobHash: r.blob_hash,
  fileSize: bigintToNumber(r.file_size),
  blobSize: r.blob_size === null ? null : bigintToNumber(r.blob_size),
});
const toInTrash = (r: InTrashJson): LiveFileInTrashedFolder => ({
  fileId: r.id,
  folderId: r.folder_id,
  driveId: r.drive_id,
  folderTrashedAt: r.folder_trashed_at === null ? null : new Date(r.folder_trashed_at),
});

/** Options of {@link PgFileBlobScan}. */
export interface PgFileBlobScanOptions {
  /** The checks' batch loops log their retries, lost checkpoints and failures here. */
  readonly logger?: Logger;
  /** Each check's own options (grace, thresholds), by check name: given to that check only. */
  readonly checks?: {
    /** `graceWindowMs` on the file's age and its folder's trash age (default 1 h). */
    readonly files_consistency?: Omit<FilesConsistencyCheckOptions, 'scan' | 'logger'>;
  };
  /**
   * File rows phase 3 reads per statement ({@link PgFileRowStream}: only the
   * anomalies and each page's last key come back, the next segment is read
   * while this one's pages are checkpointed); 0 reads one statement per page
   * (`scanFilesById`). @defaultValue 100000
   */
  readonly segmentRows?: number;
}

/**
 * {@link FileBlobScan} on `storage.files` / `storage.blobs` / `storage.folders`,
 * and the stateful adapter of the file → blob references
 * (`subsystem() === 'files'`): it contributes `files_consistency`.
 *
 * The file pages walk `storage.files` in id order (heap order: UUIDv7) and
 * probe each page's folders and blob rows by primary key in the same
 * statement (blob row missing or of another size, folder in another drive,
 * mime type against the blob's content type): ONE pass over the files. (A
 * separate `(blob_hash, id)` merge pass for the blob rows used to come first;
 * the id pass probes the blob rows anyway, so it was a second walk of every
 * file for nothing: issue 22.) The comparison happens in SQL and only the
 * anomalies, grace-filtered, come back.
 */
export class PgFileBlobScan implements FileBlobScan {
  readonly #db: Kysely<StorageDatabase>;
  readonly #checks: readonly ConsistencyCheck[];
  readonly #segmentRows: number;

  constructor(db: Kysely<StorageDatabase>, options: PgFileBlobScanOptions = {}) {
    this.#db = db;
    this.#segmentRows = options.segmentRows ?? DEFAULT_SEGMENT_ROWS;
    const { checks = {} } = options;
    const logger = options.logger ? { logger: options.logger } : {};
    // The adapter's checks, each with its own options.
    this.#checks = [createFilesConsistencyCheck({ ...checks.files_consistency, ...logger, scan: this })];
  }

  subsystem(): string {
    return 'files';
  }

  /** `files_consistency`: missing blob rows, size mismatches, live files in trashed folders, drive and mime of each file row. */
  consistencyChecks(): readonly ConsistencyCheck[] {
    return this.#checks;
  }

  async missingBlobs(
    hashes: readonly string[],
    options: FileScanOptions & { readonly maxFileIds: number },
  ): Promise<MissingBlob[]> {
    if (hashes.length === 0) return [];
    const { rows } = await sql<{
      blob_hash: string;
      ref_count: string;
      live: string;
      total: string;
      ids: string[];
    }>`
      SELECT f.blob_hash,
             count(*) AS ref_count,
             count(*) FILTER (WHERE NOT f.is_trashed) AS live,
             COALESCE(sum(f.size), 0)::text AS total,
             (array_agg(f.id::text ORDER BY f.id))[1:${options.maxFileIds}] AS ids
        FROM storage.files f
       WHERE f.blob_hash = ANY(${[...hashes]}::text[])
         AND f.created_at <= ${options.createdBefore}
         AND NOT EXISTS (SELECT 1 FROM storage.blobs b WHERE b.hash = f.blob_hash)
       GROUP BY f.blob_hash`.execute(this.#db);
    return rows.map((r) => ({
      blobHash: r.blob_hash,
      refCount: bigintToNumber(r.ref_count),
      liveFileCount: bigintToNumber(r.live),
      totalBytes: bigintToNumber(r.total),
      affectedFileIds: r.ids,
    }));
  }

  async reverifyBlobSizes(fileIds: readonly string[], options: FileScanOptions): Promise<FileBlobAnomaly[]> {
    if (fileIds.length === 0) return [];
    const { rows } = await sql<BlobAnomalyJson>`
      SELECT f.id, f.blob_hash, f.size::text AS file_size, b.size::text AS blob_size
        FROM storage.files f
        JOIN storage.blobs b ON b.hash = f.blob_hash
       WHERE f.id = ANY(${[...fileIds]}::uuid[])
         AND f.size <> b.size
         AND f.created_at <= ${options.createdBefore}
       ORDER BY f.blob_hash, f.id`.execute(this.#db);
    return rows.map(toBlobAnomaly);
  }

  async scanTrashedFolders(
    afterFolderId: string | null,
    limit: number,
    options: FileScanOptions,
  ): Promise<ScanPage<LiveFileInTrashedFolder>> {
    const { rows } = await sql<{ scanned: string; last_id: string | null; anomalies: InTrashJson[] }>`
      WITH batch AS MATERIALIZED (
        SELECT id, trashed_at FROM storage.folders
         WHERE is_trashed ${afterFolderId === null ? sql`` : sql`AND id > ${afterFolderId}::uuid`}
         ORDER BY id LIMIT ${limit}
      )
      SELECT (SELECT count(*) FROM batch) AS scanned,
             (SELECT id FROM batch ORDER BY id DESC LIMIT 1) AS last_id,
             COALESCE((
               SELECT json_agg(json_build_object(
                        'id', f.id, 'folder_id', f.folder_id, 'drive_id', f.drive_id,
                        'folder_trashed_at', b.trashed_at) ORDER BY f.folder_id, f.id)
                 FROM batch b JOIN storage.files f ON f.folder_id = b.id
                WHERE NOT f.is_trashed
                  AND COALESCE(b.trashed_at, '-infinity'::timestamptz) <= ${options.trashedBefore}
                  AND f.created_at <= ${options.createdBefore}
             ), '[]'::json) AS anomalies`.execute(this.#db);
    const row = rows[0];
    if (!row) return { scanned: 0, lastKey: null, anomalies: [] };
    return {
      scanned: bigintToNumber(row.scanned),
      lastKey: row.last_id,
      anomalies: row.anomalies.map(toInTrash),
    };
  }

  async reverifyLiveFilesInTrashedFolders(
    fileIds: readonly string[],
    options: FileScanOptions,
  ): Promise<LiveFileInTrashedFolder[]> {
    if (fileIds.length === 0) return [];
    const { rows } = await sql<InTrashJson>`
      SELECT f.id, f.folder_id, f.drive_id, d.trashed_at AS folder_trashed_at
        FROM storage.files f
        JOIN storage.folders d ON d.id = f.folder_id
       WHERE f.id = ANY(${[...fileIds]}::uuid[])
         AND NOT f.is_trashed
         AND d.is_trashed
         AND COALESCE(d.trashed_at, '-infinity'::timestamptz) <= ${options.trashedBefore}
         AND f.created_at <= ${options.createdBefore}
       ORDER BY f.folder_id, f.id`.execute(this.#db);
    return rows.map(toInTrash);
  }

  async scanFilesById(
    afterFileId: string | null,
    limit: number,
    options: FileScanOptions,
  ): Promise<ScanPage<FileRowAnomaly>> {
    const row = await this.#compareFileRows(
      sql`SELECT id, drive_id, folder_id, blob_hash, size, mime_type, created_at FROM storage.files
          ${afterFileId === null ? sql`` : sql`WHERE id > ${afterFileId}::uuid`}
          ORDER BY id LIMIT ${limit}`,
      options,
    );
    return {
      scanned: bigintToNumber(row.scanned),
      lastKey: row.last_id,
      anomalies: row.anomalies.map(toFileRow),
    };
  }

  /** Phase 3 by segments of `segmentRows` file rows; `null` when that is 0 (one statement per page). */
  openFileRowStream(options: FileScanOptions): FileRowStream | null {
    return this.#segmentRows > 0 ? new PgFileRowStream(this.#db, options, this.#segmentRows) : null;
  }

  async reverifyFileRows(fileIds: readonly string[], options: FileScanOptions): Promise<FileRowAnomaly[]> {
    if (fileIds.length === 0) return [];
    const row = await this.#compareFileRows(
      sql`SELECT id, drive_id, folder_id, blob_hash, size, mime_type, created_at FROM storage.files
           WHERE id = ANY(${[...fileIds]}::uuid[])`,
      options,
    );
    return row.anomalies.map(toFileRow);
  }

  /** Files once, by id (phase 2 reads the few trashed folders). */
  async estimateRows(): Promise<number | null> {
    return estimateRowsOf(this.#db, ['storage.files']);
  }

  async #compareFileRows(
    batch: RawBuilder<unknown>,
    options: FileScanOptions,
  ): Promise<{ scanned: string; last_id: string | null; anomalies: FileRowJson[] }> {
    const { rows } = await sql<{ scanned: string; last_id: string | null; anomalies: FileRowJson[] }>`
      WITH batch AS MATERIALIZED (${batch}),
      -- The batch's folders and blob rows by primary key (arrays, so the planner probes the
      -- indexes instead of hash-joining a seq scan of either table once per batch).
      folders AS MATERIALIZED (
        SELECT d.id, d.drive_id FROM storage.folders d
         WHERE d.id = ANY (ARRAY(SELECT DISTINCT b.folder_id FROM batch b WHERE b.folder_id IS NOT NULL))
      ),
      blobs AS MATERIALIZED (
        SELECT bl.hash, bl.size, bl.content_type FROM storage.blobs bl
         WHERE bl.hash = ANY (ARRAY(SELECT DISTINCT b.blob_hash FROM batch b))
      ),
      checked AS (
        SELECT b.id, b.drive_id, b.folder_id, b.blob_hash, b.mime_type, b.created_at,
               CASE WHEN d.drive_id <> b.drive_id THEN d.drive_id END AS folder_drive_id,
               bl.content_type AS blob_content_type,
               b.size AS file_size, bl.size AS blob_size, bl.hash IS NULL AS blob_missing,
               COALESCE(${KNOWN_MIME('b.mime_type')} <> ${KNOWN_MIME('bl.content_type')}, false) AS mime_mismatch
          FROM batch b
          LEFT JOIN folders d ON d.id = b.folder_id
          LEFT JOIN blobs bl ON bl.hash = b.blob_hash
      )
      SELECT (SELECT count(*) FROM batch) AS scanned,
             (SELECT id FROM batch ORDER BY id DESC LIMIT 1) AS last_id,
             COALESCE((
               SELECT json_agg(json_build_object(
                        'id', c.id, 'drive_id', c.drive_id, 'folder_id', c.folder_id,
                        'folder_drive_id', c.folder_drive_id, 'blob_hash', c.blob_hash,
                        'mime_type', c.mime_type, 'blob_content_type', c.blob_content_type,
                        'mime_mismatch', c.mime_mismatch,
                        'file_size', c.file_size::text, 'blob_size', c.blob_size::text) ORDER BY c.id)
                 FROM checked c
                WHERE (c.folder_drive_id IS NOT NULL OR c.mime_mismatch
                       OR c.blob_missing OR c.blob_size <> c.file_size)
                  AND c.created_at <= ${options.createdBefore}
             ), '[]'::json) AS anomalies`.execute(this.#db);
    return rows[0] ?? { scanned: '0', last_id: null, anomalies: [] };
  }
}
