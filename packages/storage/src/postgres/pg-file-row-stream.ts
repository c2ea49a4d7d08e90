import type { FileRowAnomaly, FileRowStream, FileScanOptions, ScanPage } from '@oxicloud/tenants';
import { type Kysely, sql } from 'kysely';
import { bigintToNumber, type StorageDatabase } from './database.js';

/** Rows one segment statement reads (rounded up to a whole number of pages). */
export const DEFAULT_SEGMENT_ROWS = 100_000;

/** A mime type with case and parameters dropped; NULL when unknown (empty or the column default). */
const KNOWN_MIME = (column: string) =>
  sql.raw(
    `NULLIF(NULLIF(lower(btrim(split_part(COALESCE(${column}, ''), ';', 1))), ''), 'application/octet-stream')`,
  );

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
 * {@link FileRowStream} by segments: ONE statement reads the next
 * `segmentRows` file rows in id order (the primary key's order), joins them
 * to their folders and blob rows however the planner likes best (hash joins:
 * the yardstick's plan), and returns only the anomalous rows plus the last
 * row of each page (row numbers from a window over the id-ordered rows).
 * Pages are then handed out from memory, and the statement for the next
 * segment is sent with the first page, so it runs while the caller writes
 * this segment's findings and checkpoints (pipelining; at most two
 * segments in memory). No transaction stays open between statements
 * (no snapshot held across pages or a throttle sleep); a page asked for
 * anywhere but where the stream stands (a replay) or with another page size
 * reads a new segment from there.
 *
 * (A server-side cursor streaming every row lost to this: sending each row
 * to the client costs more than the whole join, see bench/results.md.)
 */
export class PgFileRowStream implements FileRowStream {
  readonly #db: Kysely<StorageDatabase>;
  readonly #options: FileScanOptions;
  readonly #segmentRows: number;
  #segment: Segment | null = null;
  /** The next segment's statement, already sent. */
  #ahead: { readonly after: string; readonly limit: number; readonly segment: Promise<Segment> } | null =
    null;
  /** Segment statements sent so far (a figure for tests and benchmarks). */
  statements = 0;

  constructor(
    db: Kysely<StorageDatabase>,
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
      SELECT s.id::text AS id, s.rn, s.marker, c.anomalous,
             CASE WHEN c.anomalous THEN s.drive_id::text END AS drive_id,
             CASE WHEN c.anomalous THEN s.folder_id::text END AS folder_id,
             CASE WHEN c.anomalous AND d.drive_id <> s.drive_id THEN d.drive_id::text END AS folder_drive_id,
             CASE WHEN c.anomalous THEN s.blob_hash END AS blob_hash,
             CASE WHEN c.anomalous THEN s.mime_type END AS mime_type,
             CASE WHEN c.anomalous THEN bl.content_type END AS blob_content_type,
             CASE WHEN c.anomalous THEN c.mime_mismatch END AS mime_mismatch,
             CASE WHEN c.anomalous THEN s.size::text END AS file_size,
             CASE WHEN c.anomalous THEN bl.size::text END AS blob_size
        FROM (
          SELECT o.*, row_number() OVER w AS rn,
                 (row_number() OVER w % ${limit}::bigint = 0 OR lead(o.id) OVER w IS NULL) AS marker
            FROM (SELECT id, drive_id, folder_id, blob_hash, size, mime_type, created_at
                    FROM storage.files
                   ${after === null ? sql`` : sql`WHERE id > ${after}::uuid`}
                   ORDER BY id LIMIT ${rows}) o
          WINDOW w AS (ORDER BY o.id)
        ) s
        LEFT JOIN storage.folders d ON d.id = s.folder_id
        LEFT JOIN storage.blobs bl ON bl.hash = s.blob_hash
        CROSS JOIN LATERAL (
          SELECT COALESCE(${KNOWN_MIME('s.mime_type')} <> ${KNOWN_MIME('bl.content_type')}, false) AS mime_mismatch
        ) m
        CROSS JOIN LATERAL (
          SELECT (s.created_at <= ${this.#options.createdBefore}
                  AND (COALESCE(d.drive_id <> s.drive_id, false) OR bl.hash IS NULL
                       OR bl.size <> s.size OR m.mime_mismatch)) AS anomalous, m.mime_mismatch
        ) c
       WHERE s.marker OR c.anomalous`.execute(this.#db);
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
  };
}
