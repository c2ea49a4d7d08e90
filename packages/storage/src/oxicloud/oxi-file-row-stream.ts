import type { FileRowAnomaly, FileRowStream, FileScanOptions, ScanPage } from '@oxicloud/tenants';
import { type Kysely, sql } from 'kysely';
import { bigintToNumber } from '../postgres/database.js';
import { CATEGORY_ORDER_SQL, KNOWN_MIME, PLACEHOLDER_HASH } from './content-sql.js';
import type { OxiCloudDatabase } from './database.js';

/** Rows one segment statement reads (rounded up to a whole number of pages). */
export const DEFAULT_SEGMENT_ROWS = 100_000;

interface SegmentRow {
  id: string;
  rn: string;
  marker: boolean;
  anomalous: boolean;
  drive_id: string | null;
  folder_id: string | null;
  folder_drive_id: string | null;
  blob_hash: string | null;
  mime_type: string | null;
  blob_content_type: string | null;
  mime_mismatch: boolean | null;
  file_size: string | null;
  blob_size: string | null;
  sort_date: string | null;
  expected_sort_date: string | null;
  category_order: number | null;
  expected_category_order: number | null;
}

interface Segment {
  /** The key the segment starts after, and the page size its markers count. */
  readonly after: string | null;
  readonly limit: number;
  /** The last row of each page (every `limit`-th row, and the segment's last), in key order. */
  readonly markers: ReadonlyArray<{ readonly rn: number; readonly id: string }>;
  /** The old-enough anomalous rows, in key order, with their row number. */
  readonly anomalies: ReadonlyArray<{ readonly rn: number; readonly anomaly: FileRowAnomaly }>;
  /** `true` when the segment reached the end of the table (fewer rows than asked for). */
  readonly last: boolean;
  /** Pages handed out so far. */
  next: number;
  /** Anomalies handed out so far. */
  taken: number;
}

/**
 * {@link FileRowStream} by segments on OxiCloud's domain: its
 * segment and read-ahead logic (one statement reads the next `segmentRows`
 * file rows in id order and returns only the anomalous rows plus the last
 * row of each page; the next segment's statement is sent with the first
 * page; a replay or another page size reads a new segment from there; no
 * transaction held between statements), with `OxiFileContentScan`'s
 * content rule: each row joined to its manifest (and, for the segment's
 * distinct manifests, whether a chunk has no blob row), else its legacy
 * blob row, and its folder, by joins the planner may hash. The pages are
 * those `OxiFileContentScan.scanFilesById` returns for the same arguments.
 */
export class OxiFileRowStream implements FileRowStream {
  readonly #db: Kysely<OxiCloudDatabase>;
  readonly #options: FileScanOptions;
  readonly #segmentRows: number;
  #segment: Segment | null = null;
  /** The next segment's statement, already sent. */
  #ahead: { readonly after: string; readonly limit: number; readonly segment: Promise<Segment> } | null =
    null;
  /** Segment statements sent so far (a figure for tests and benchmarks). */
  statements = 0;

  constructor(
    db: Kysely<OxiCloudDatabase>,
    options: FileScanOptions,
    segmentRows: number = DEFAULT_SEGMENT_ROWS,
  ) {
    this.#db = db;
    this.#options = options;
    this.#segmentRows = Math.max(1, Math.floor(segmentRows));
  }

  async next(afterFileId: string | null, limit: number): Promise<ScanPage<FileRowAnomaly>> {
    const size = Math.max(1, Math.floor(limit));
    let segment = this.#segment;
    if (segment === null || segment.limit !== size || this.#position(segment) !== afterFileId) {
      segment = await this.#read(afterFileId, size);
    } else if (segment.next >= segment.markers.length && !segment.last) {
      segment = await this.#read(afterFileId, size);
    }
    this.#segment = segment;
    const marker = segment.markers[segment.next];
    if (marker === undefined) return { scanned: 0, lastKey: null, anomalies: [] };
    const previous = segment.next === 0 ? 0 : (segment.markers[segment.next - 1]?.rn ?? 0);
    segment.next += 1;
    const anomalies: FileRowAnomaly[] = [];
    while (segment.taken < segment.anomalies.length) {
      const a = segment.anomalies[segment.taken];
      if (a === undefined || a.rn > marker.rn) break;
      anomalies.push(a.anomaly);
      segment.taken += 1;
    }
    // The next segment is read while this one's pages are checkpointed (from its first page on).
    const end = segment.markers.at(-1);
    if (segment.next === 1 && !segment.last && end !== undefined) this.#readAhead(end.id, size);
    return { scanned: marker.rn - previous, lastKey: marker.id, anomalies };
  }

  async close(): Promise<void> {
    this.#segment = null;
    const ahead = this.#ahead;
    this.#ahead = null;
    await ahead?.segment.catch(() => undefined);
  }

  /** Where the stream stands: the last key handed out (the segment's start before any). */
  #position(segment: Segment): string | null {
    return segment.next === 0 ? segment.after : (segment.markers[segment.next - 1]?.id ?? null);
  }

  /** The segment after `after`: the one read ahead when it matches, else a fresh statement. */
  async #read(after: string | null, limit: number): Promise<Segment> {
    const ahead = this.#ahead;
    this.#ahead = null;
    if (ahead !== null && ahead.after === after && ahead.limit === limit) return ahead.segment;
    await ahead?.segment.catch(() => undefined);
    return this.#query(after, limit);
  }

  #readAhead(after: string, limit: number): void {
    const segment = this.#query(after, limit);
    segment.catch(() => undefined); // the next page awaits it and sees the error (a retry reads again)
    this.#ahead = { after, limit, segment };
  }

  async #query(after: string | null, limit: number): Promise<Segment> {
    this.statements += 1;
    const rows = Math.ceil(this.#segmentRows / limit) * limit;
    const { rows: found } = await sql<SegmentRow>`
      WITH s AS MATERIALIZED (
        SELECT o.*, row_number() OVER w AS rn,
               (row_number() OVER w % ${limit}::bigint = 0 OR lead(o.id) OVER w IS NULL) AS marker
          FROM (SELECT id, drive_id, folder_id, blob_hash, size, mime_type, created_at, media_sort_date,
                       name, category_order
                  FROM storage.files
                 ${after === null ? sql`` : sql`WHERE id > ${after}::uuid`}
                 ORDER BY id LIMIT ${rows}) o
        WINDOW w AS (ORDER BY o.id)
      ),
      m AS MATERIALIZED (
        SELECT cm.file_hash, cm.total_size, cm.content_type, cm.chunk_hashes
          FROM storage.chunk_manifests cm
         WHERE cm.file_hash IN (SELECT DISTINCT s.blob_hash FROM s)
      ),
      -- The segment's manifests one of whose chunks has no blob row (each manifest once).
      broken AS MATERIALIZED (
        SELECT DISTINCT m.file_hash
          FROM m CROSS JOIN LATERAL unnest(m.chunk_hashes) c(h)
          LEFT JOIN storage.blobs cb ON cb.hash = c.h
         WHERE cb.hash IS NULL
      )
      SELECT s.id::text AS id, s.rn, s.marker, a.anomalous,
             CASE WHEN a.anomalous THEN s.drive_id::text END AS drive_id,
             CASE WHEN a.anomalous THEN s.folder_id::text END AS folder_id,
             CASE WHEN a.anomalous AND d.drive_id <> s.drive_id THEN d.drive_id::text END AS folder_drive_id,
             CASE WHEN a.anomalous THEN s.blob_hash END AS blob_hash,
             CASE WHEN a.anomalous THEN s.mime_type END AS mime_type,
             CASE WHEN a.anomalous THEN k.content_type END AS blob_content_type,
             CASE WHEN a.anomalous THEN v.mime_mismatch END AS mime_mismatch,
             CASE WHEN a.anomalous THEN s.size::text END AS file_size,
             CASE WHEN a.anomalous THEN v.blob_size::text END AS blob_size,
             CASE WHEN a.anomalous AND v.sort_mismatch THEN s.media_sort_date END AS sort_date,
             CASE WHEN a.anomalous AND v.sort_mismatch THEN v.expected_sort_date END AS expected_sort_date,
             CASE WHEN a.anomalous AND v.category_mismatch THEN s.category_order END AS category_order,
             CASE WHEN a.anomalous AND v.category_mismatch THEN v.expected_category_order END
               AS expected_category_order
        FROM s
        LEFT JOIN storage.folders d ON d.id = s.folder_id
        LEFT JOIN m ON m.file_hash = s.blob_hash
        LEFT JOIN broken bk ON bk.file_hash = m.file_hash
        LEFT JOIN storage.blobs l ON l.hash = s.blob_hash AND m.file_hash IS NULL
        LEFT JOIN storage.file_metadata fm ON fm.file_id = s.id
        CROSS JOIN LATERAL (
          SELECT CASE WHEN s.blob_hash = ${PLACEHOLDER_HASH} THEN 'placeholder'
                      WHEN m.file_hash IS NOT NULL AND bk.file_hash IS NULL THEN 'manifest'
                      WHEN m.file_hash IS NULL AND l.hash IS NOT NULL THEN 'legacy'
                      ELSE 'missing' END AS source,
                 COALESCE(m.total_size, l.size) AS size,
                 CASE WHEN m.file_hash IS NOT NULL THEN m.content_type ELSE l.content_type END AS content_type
        ) k
        CROSS JOIN LATERAL (
          SELECT CASE k.source WHEN 'missing' THEN NULL WHEN 'placeholder' THEN s.size ELSE k.size END AS blob_size,
                 COALESCE(k.source <> 'placeholder'
                          AND ${KNOWN_MIME('s.mime_type')} <> ${KNOWN_MIME('k.content_type')}, false) AS mime_mismatch,
                 COALESCE(fm.captured_at, s.created_at) AS expected_sort_date,
                 s.media_sort_date IS DISTINCT FROM COALESCE(fm.captured_at, s.created_at) AS sort_mismatch,
                 c.expected AS expected_category_order,
                 s.category_order <> c.expected AS category_mismatch
            FROM (SELECT ${CATEGORY_ORDER_SQL('s.name', 's.mime_type')} AS expected) c
        ) v
        CROSS JOIN LATERAL (
          SELECT (s.created_at <= ${this.#options.createdBefore}
                  AND (COALESCE(d.drive_id <> s.drive_id, false) OR k.source = 'missing'
                       OR v.blob_size <> s.size OR v.mime_mismatch OR v.sort_mismatch
                       OR v.category_mismatch)) AS anomalous
        ) a
       WHERE s.marker OR a.anomalous`.execute(this.#db);
    const markers: Array<{ rn: number; id: string }> = [];
    const anomalies: Array<{ rn: number; anomaly: FileRowAnomaly }> = [];
    let count = 0;
    for (const r of found) {
      const rn = Number(r.rn);
      count = Math.max(count, rn);
      if (r.marker) markers.push({ rn, id: r.id });
      if (r.anomalous) anomalies.push({ rn, anomaly: toAnomaly(r) });
    }
    markers.sort((a, b) => a.rn - b.rn);
    anomalies.sort((a, b) => a.rn - b.rn);
    return { after, limit, markers, anomalies, last: count < rows, next: 0, taken: 0 };
  }
}

function toAnomaly(r: SegmentRow): FileRowAnomaly {
  return {
    fileId: r.id,
    driveId: r.drive_id ?? '',
    folderId: r.folder_id,
    folderDriveId: r.folder_drive_id,
    blobHash: r.blob_hash ?? '',
    mimeType: r.mime_type ?? '',
    blobContentType: r.blob_content_type,
    mimeMismatch: r.mime_mismatch === true,
    fileSize: bigintToNumber(r.file_size ?? '0'),
    blobSize: r.blob_size === null ? null : bigintToNumber(r.blob_size),
    mediaSortDate:
      r.sort_date === null || r.expected_sort_date === null
        ? null
        : { recorded: new Date(r.sort_date), expected: new Date(r.expected_sort_date) },
    categoryOrder:
      r.category_order === null || r.expected_category_order === null
        ? null
        : { recorded: r.category_order, expected: r.expected_category_order },
  };
}
