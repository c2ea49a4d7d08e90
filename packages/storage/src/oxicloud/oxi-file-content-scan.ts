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
  type MediaFileWithoutMetadata,
  type MediaScanOptions,
  type MissingBlob,
  type ScanPage,
} from '@oxicloud/tenants';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { bigintToNumber } from '../postgres/database.js';
import {
  CATEGORY_ORDER_SQL,
  CONTENT_RESOLVES,
  estimateRowsOf,
  KNOWN_MIME,
  PLACEHOLDER_HASH,
} from './content-sql.js';
import type { OxiCloudDatabase } from './database.js';
import { DEFAULT_SEGMENT_ROWS, OxiFileRowStream } from './oxi-file-row-stream.js';

interface MediaJson {
  id: string;
  blob_hash: string;
  mime_type: string;
  size: string;
  table: MediaFileWithoutMetadata['table'];
}

const toMedia = (r: MediaJson): MediaFileWithoutMetadata => ({
  fileId: r.id,
  blobHash: r.blob_hash,
  mimeType: r.mime_type,
  size: bigintToNumber(r.size),
  table: r.table,
});

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
  sort_date: string | null;
  expected_sort_date: string | null;
  category_order: number | null;
  expected_category_order: number | null;
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
  mediaSortDate:
    r.sort_date === null || r.expected_sort_date === null
      ? null
      : { recorded: new Date(r.sort_date), expected: new Date(r.expected_sort_date) },
  categoryOrder:
    r.category_order === null || r.expected_category_order === null
      ? null
      : { recorded: r.category_order, expected: r.expected_category_order },
});
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

/** Options of {@link OxiFileContentScan}. */
export interface OxiFileContentScanOptions {
  /** The checks' batch loops log their retries, lost checkpoints and failures here. */
  readonly logger?: Logger;
  /** Each check's own options (grace, thresholds), by check name: given to that check only. */
  readonly checks?: {
    /** `graceWindowMs` on the file's age and its folder's trash age (default 1 h). */
    readonly files_consistency?: Omit<FilesConsistencyCheckOptions, 'scan' | 'logger'>;
  };
  /**
   * File rows phase 3 reads per statement ({@link OxiFileRowStream}: only the
   * anomalies and each page's last key come back, the next segment is read
   * while this one's pages are checkpointed); 0 reads one statement per page
   * (`scanFilesById`). @defaultValue 100000
   */
  readonly segmentRows?: number;
}

/**
 * {@link FileBlobScan} on OxiCloud's domain (`storage.files`,
 * `storage.chunk_manifests`, `storage.blobs`, `storage.folders`), and the
 * stateful adapter of the file → content references (`subsystem() ===
 * 'files'`): it contributes `files_consistency`.
 *
 * A file's content is resolved the way OxiCloud reads it (fact sheet §5,
 * `openFileContent`'s rule): the manifest with `file_hash = blob_hash` if
 * there is one, else the legacy whole-file blob row `hash = blob_hash`.
 * What the check's "blob row" means here:
 *
 * - `missing_blob`: the content does not resolve: neither a manifest nor a
 *   legacy blob row, or a manifest one of whose chunks has no blob row
 *   (§12 item 11; the bytes cannot be read either way). The placeholder hash
 *   ({@link PLACEHOLDER_HASH}) is never missing.
 * - `blob_size_mismatch`: `files.size` ≠ `manifest.total_size` (or the
 *   legacy blob's `size` when there is no manifest; §12 item 12). The
 *   finding's `blob_size` is that content size.
 * - `mime_mismatch`: `files.mime_type` against the manifest's
 *   `content_type` (or the legacy blob's), with the old "unknown" rule
 *   (empty or `application/octet-stream` never mismatches).
 * - `drive_id_parent_mismatch`, `parent_folder_trashed`: as on the old
 *   model (same columns).
 *
 * Phase 3 reads segments of `segmentRows` file rows per statement
 * ({@link OxiFileRowStream}, the old adapter's stream with this content
 * rule); with `segmentRows: 0`, one statement per page
 * ({@link FileBlobScan.scanFilesById}: the page's folders, manifests, their
 * chunk rows and the legacy blob rows probed by primary key). Pass 2 always
 * re-reads by file id.
 */
export class OxiFileContentScan implements FileBlobScan {
  readonly #db: Kysely<OxiCloudDatabase>;
  readonly #checks: readonly ConsistencyCheck[];
  readonly #segmentRows: number;

  constructor(db: Kysely<OxiCloudDatabase>, options: OxiFileContentScanOptions = {}) {
    this.#db = db;
    this.#segmentRows = options.segmentRows ?? DEFAULT_SEGMENT_ROWS;
    const { checks = {} } = options;
    const logger = options.logger ? { logger: options.logger } : {};
    this.#checks = [
      {
        ...createFilesConsistencyCheck({ ...checks.files_consistency, ...logger, scan: this }),
        reads: [
          'storage.blobs',
          'storage.chunk_manifests',
          'storage.file_metadata',
          'storage.files',
          'storage.folders',
          // Phase 4 (deep, with a media probe) looks for audio rows too.
          ...(checks.files_consistency?.media && checks.files_consistency.media.audio !== false
            ? ['audio.file_metadata']
            : []),
        ],
      },
    ];
  }

  subsystem(): string {
    return 'files';
  }

  /** `files_consistency`: unresolvable content, size and mime against the content, drive, live files in trashed folders. */
  consistencyChecks(): readonly ConsistencyCheck[] {
    return this.#checks;
  }

  async missingBlobs(
    hashes: readonly string[],
    options: FileScanOptions & { readonly maxFileIds: number },
  ): Promise<MissingBlob[]> {
    const wanted = hashes.filter((h) => h !== PLACEHOLDER_HASH);
    if (wanted.length === 0) return [];
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
       WHERE f.blob_hash = ANY(${wanted}::text[])
         AND f.created_at <= ${options.createdBefore}
         AND NOT ${CONTENT_RESOLVES(sql`f.blob_hash`)}
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
    // The content size: the manifest's total_size, else (no manifest) the legacy blob's size.
    const { rows } = await sql<BlobAnomalyJson>`
      SELECT f.id, f.blob_hash, f.size::text AS file_size, c.size::text AS blob_size
        FROM storage.files f
        CROSS JOIN LATERAL (
          SELECT COALESCE(
                   (SELECT m.total_size FROM storage.chunk_manifests m WHERE m.file_hash = f.blob_hash),
                   (SELECT b.size FROM storage.blobs b WHERE b.hash = f.blob_hash)) AS size
        ) c
       WHERE f.id = ANY(${[...fileIds]}::uuid[])
         AND f.blob_hash <> ${PLACEHOLDER_HASH}
         AND c.size IS NOT NULL
         AND f.size <> c.size
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

  async scanMediaWithoutMetadata(
    afterFileId: string | null,
    limit: number,
    options: MediaScanOptions,
  ): Promise<ScanPage<MediaFileWithoutMetadata>> {
    const { rows } = await sql<{ scanned: string; last_id: string | null; anomalies: MediaJson[] }>`
      WITH page AS MATERIALIZED (
        SELECT id, blob_hash, mime_type, size, created_at FROM storage.files
         ${afterFileId === null ? sql`` : sql`WHERE id > ${afterFileId}::uuid`}
         ORDER BY id LIMIT ${limit}
      )
      SELECT (SELECT count(*) FROM page) AS scanned,
             (SELECT id FROM page ORDER BY id DESC LIMIT 1) AS last_id,
             COALESCE((SELECT json_agg(json_build_object('id', m.id, 'blob_hash', m.blob_hash, 'mime_type', m.mime_type,
                                                         'size', m.size::text, 'table', m.row_table) ORDER BY m.id)
                         FROM ${this.#mediaWithoutMetadata(sql`page`, options)} m), '[]'::json) AS anomalies`.execute(
      this.#db,
    );
    const row = rows[0];
    if (!row) return { scanned: 0, lastKey: null, anomalies: [] };
    return {
      scanned: bigintToNumber(row.scanned),
      lastKey: row.last_id,
      anomalies: row.anomalies.map(toMedia),
    };
  }

  async reverifyMediaWithoutMetadata(
    files: readonly MediaFileWithoutMetadata[],
    options: MediaScanOptions,
  ): Promise<MediaFileWithoutMetadata[]> {
    if (files.length === 0) return [];
    // The same file with the same content: a file whose content changed since is another candidate.
    const { rows } = await sql<MediaJson & { size: string }>`
      SELECT m.id, m.blob_hash, m.mime_type, m.size::text AS size, m.row_table AS "table"
        FROM ${this.#mediaWithoutMetadata(
          sql`(SELECT f.id, f.blob_hash, f.mime_type, f.size, f.created_at
                 FROM storage.files f
                 JOIN unnest(${files.map((f) => f.fileId)}::uuid[], ${files.map((f) => f.blobHash)}::text[])
                      AS x(id, blob_hash) ON x.id = f.id AND x.blob_hash = f.blob_hash)`,
          options,
        )} m
       ORDER BY m.id`.execute(this.#db);
    return rows.map(toMedia);
  }

  /**
   * The files of `files` (id, blob_hash, mime_type, size, created_at) that
   * phase 4 reads (§12 item 24, §9): old enough; an image or a video without
   * a `storage.file_metadata` row, or (with `audio`) an audio file without
   * an `audio.file_metadata` row; and whose content OxiCloud's extractor
   * reads at its raw path — a manifest of one chunk (the chunk's object is
   * the file's hash) or, with no manifest, a legacy blob row.
   */
  #mediaWithoutMetadata(files: RawBuilder<unknown>, options: MediaScanOptions): RawBuilder<unknown> {
    return sql`(
      SELECT p.id, p.blob_hash, p.mime_type, p.size, k.row_table
        FROM ${files} p
        CROSS JOIN LATERAL (
          SELECT CASE WHEN p.mime_type LIKE 'image/%' OR p.mime_type LIKE 'video/%' THEN 'file_metadata'
                      WHEN ${options.audio} AND p.mime_type LIKE 'audio/%' THEN 'audio_file_metadata' END AS row_table
        ) k
       WHERE k.row_table IS NOT NULL
         AND p.created_at <= ${options.createdBefore}
         AND p.blob_hash <> ${PLACEHOLDER_HASH}
         AND CASE k.row_table
               WHEN 'file_metadata'
                 THEN NOT EXISTS (SELECT 1 FROM storage.file_metadata fm WHERE fm.file_id = p.id)
               ELSE NOT EXISTS (SELECT 1 FROM audio.file_metadata am WHERE am.file_id = p.id) END
         AND CASE WHEN EXISTS (SELECT 1 FROM storage.chunk_manifests cm WHERE cm.file_hash = p.blob_hash)
                  THEN EXISTS (SELECT 1 FROM storage.chunk_manifests cm
                                WHERE cm.file_hash = p.blob_hash AND cm.chunk_count = 1
                                  AND cm.chunk_hashes[1] = cm.file_hash)
                  ELSE EXISTS (SELECT 1 FROM storage.blobs b WHERE b.hash = p.blob_hash) END
    )`;
  }

  async scanFilesById(
    afterFileId: string | null,
    limit: number,
    options: FileScanOptions,
  ): Promise<ScanPage<FileRowAnomaly>> {
    const row = await this.#compareFileRows(
      sql`SELECT id, drive_id, folder_id, blob_hash, size, mime_type, created_at, media_sort_date,
                 name, category_order FROM storage.files
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
    return this.#segmentRows > 0 ? new OxiFileRowStream(this.#db, options, this.#segmentRows) : null;
  }

  async reverifyFileRows(fileIds: readonly string[], options: FileScanOptions): Promise<FileRowAnomaly[]> {
    if (fileIds.length === 0) return [];
    const row = await this.#compareFileRows(
      sql`SELECT id, drive_id, folder_id, blob_hash, size, mime_type, created_at, media_sort_date,
                 name, category_order FROM storage.files
           WHERE id = ANY(${[...fileIds]}::uuid[])`,
      options,
    );
    return row.anomalies.map(toFileRow);
  }

  /** Files once, by id (phase 2 reads the few trashed folders). */
  estimateRows(): Promise<number | null> {
    return estimateRowsOf(this.#db, ['storage.files']);
  }

  async #compareFileRows(
    batch: RawBuilder<unknown>,
    options: FileScanOptions,
  ): Promise<{ scanned: string; last_id: string | null; anomalies: FileRowJson[] }> {
    const { rows } = await sql<{ scanned: string; last_id: string | null; anomalies: FileRowJson[] }>`
      WITH batch AS MATERIALIZED (${batch}),
      folders AS MATERIALIZED (
        SELECT d.id, d.drive_id FROM storage.folders d
         WHERE d.id = ANY (ARRAY(SELECT DISTINCT b.folder_id FROM batch b WHERE b.folder_id IS NOT NULL))
      ),
      hashes AS MATERIALIZED (SELECT DISTINCT b.blob_hash AS hash FROM batch b),
      -- The page's manifests by primary key, each with whether a chunk has no blob row
      -- (probes of the blobs primary key, once per distinct manifest of the page).
      manifests AS MATERIALIZED (
        SELECT m.file_hash, m.total_size, m.content_type,
               EXISTS (SELECT 1 FROM unnest(m.chunk_hashes) c(h)
                        WHERE NOT EXISTS (SELECT 1 FROM storage.blobs cb WHERE cb.hash = c.h)) AS chunk_missing
          FROM storage.chunk_manifests m
         WHERE m.file_hash = ANY (ARRAY(SELECT hash FROM hashes))
      ),
      -- Legacy whole-file blob rows, read only for hashes no manifest names.
      legacy AS MATERIALIZED (
        SELECT bl.hash, bl.size, bl.content_type FROM storage.blobs bl
         WHERE bl.hash = ANY (ARRAY(SELECT h.hash FROM hashes h
                                     WHERE NOT EXISTS (SELECT 1 FROM manifests m WHERE m.file_hash = h.hash)))
      ),
      -- The page's capture dates (OxiCloud §12 item 22), by primary key.
      meta AS MATERIALIZED (
        SELECT fm.file_id, fm.captured_at FROM storage.file_metadata fm
         WHERE fm.file_id = ANY (ARRAY(SELECT b.id FROM batch b))
      ),
      content AS MATERIALIZED (
        SELECT h.hash,
               CASE WHEN h.hash = ${PLACEHOLDER_HASH} THEN 'placeholder'
                    WHEN m.file_hash IS NOT NULL AND NOT m.chunk_missing THEN 'manifest'
                    WHEN m.file_hash IS NULL AND l.hash IS NOT NULL THEN 'legacy'
                    ELSE 'missing' END AS source,
               COALESCE(m.total_size, l.size) AS size,
               CASE WHEN m.file_hash IS NOT NULL THEN m.content_type ELSE l.content_type END AS content_type
          FROM hashes h
          LEFT JOIN manifests m ON m.file_hash = h.hash
          LEFT JOIN legacy l ON l.hash = h.hash
      ),
      checked AS (
        SELECT b.id, b.drive_id, b.folder_id, b.blob_hash, b.mime_type, b.created_at,
               CASE WHEN d.drive_id <> b.drive_id THEN d.drive_id END AS folder_drive_id,
               c.content_type AS blob_content_type,
               b.size AS file_size,
               CASE c.source WHEN 'missing' THEN NULL WHEN 'placeholder' THEN b.size ELSE c.size END AS blob_size,
               c.source = 'missing' AS blob_missing,
               b.media_sort_date,
               COALESCE(mt.captured_at, b.created_at) AS expected_sort_date,
               b.category_order,
               ${CATEGORY_ORDER_SQL('b.name', 'b.mime_type')} AS expected_category_order,
               COALESCE(c.source <> 'placeholder'
                        AND ${KNOWN_MIME('b.mime_type')} <> ${KNOWN_MIME('c.content_type')}, false) AS mime_mismatch
          FROM batch b
          JOIN content c ON c.hash = b.blob_hash
          LEFT JOIN folders d ON d.id = b.folder_id
          LEFT JOIN meta mt ON mt.file_id = b.id
      )
      SELECT (SELECT count(*) FROM batch) AS scanned,
             (SELECT id FROM batch ORDER BY id DESC LIMIT 1) AS last_id,
             COALESCE((
               SELECT json_agg(json_build_object(
                        'id', x.id, 'drive_id', x.drive_id, 'folder_id', x.folder_id,
                        'folder_drive_id', x.folder_drive_id, 'blob_hash', x.blob_hash,
                        'mime_type', x.mime_type, 'blob_content_type', x.blob_content_type,
                        'mime_mismatch', x.mime_mismatch,
                        'file_size', x.file_size::text, 'blob_size', x.blob_size::text,
                        'sort_date', CASE WHEN x.media_sort_date IS DISTINCT FROM x.expected_sort_date
                                          THEN x.media_sort_date END,
                        'expected_sort_date', CASE WHEN x.media_sort_date IS DISTINCT FROM x.expected_sort_date
                                                   THEN x.expected_sort_date END,
                        'category_order', CASE WHEN x.category_order <> x.expected_category_order
                                               THEN x.category_order END,
                        'expected_category_order', CASE WHEN x.category_order <> x.expected_category_order
                                                        THEN x.expected_category_order END) ORDER BY x.id)
                 FROM checked x
                WHERE (x.folder_drive_id IS NOT NULL OR x.mime_mismatch
                       OR x.blob_missing OR x.blob_size <> x.file_size
                       OR x.media_sort_date IS DISTINCT FROM x.expected_sort_date
                       OR x.category_order <> x.expected_category_order)
                  AND x.created_at <= ${options.createdBefore}
             ), '[]'::json) AS anomalies`.execute(this.#db);
    return rows[0] ?? { scanned: '0', last_id: null, anomalies: [] };
  }
}
