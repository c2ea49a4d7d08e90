import type { FileRowAnomaly, FileRowStream, FileScanOptions, ScanPage } from '@oxicloud/tenants';
import type pg from 'pg';
import { bigintToNumber } from './database.js';

/** A segment is closed and reopened after its last key once it is this old… */
export const SEGMENT_MAX_MS = 10_000;
/** …or has returned this many rows: its snapshot holds back vacuum while it is open. */
export const SEGMENT_MAX_ROWS = 1_000_000;
/** A segment's transaction idle longer than this (a stalled node) is ended by Postgres. */
const SEGMENT_IDLE_TIMEOUT_MS = 60_000;

/** A mime type with case and parameters dropped; NULL when unknown (empty or the column default). */
const knownMime = (column: string) =>
  `NULLIF(NULLIF(lower(btrim(split_part(COALESCE(${column}, ''), ';', 1))), ''), 'application/octet-stream')`;

/**
 * Every file row after `$1` in id order (the primary key's order: no sort),
 * each probed by primary key for its folder and its blob row (`LATERAL …
 * OFFSET 0` keeps the probes per row, so the rows stream in index order
 * instead of waiting for a hash of either table). A clean row comes back as
 * its id alone; an anomalous one (old enough: `$2`) with what the finding needs.
 */
const STREAM_SQL = `
  SELECT c.id::text AS id, c.anomalous,
         CASE WHEN c.anomalous THEN c.drive_id::text END AS drive_id,
         CASE WHEN c.anomalous THEN c.folder_id::text END AS folder_id,
         CASE WHEN c.anomalous THEN c.folder_drive_id::text END AS folder_drive_id,
         CASE WHEN c.anomalous THEN c.blob_hash END AS blob_hash,
         CASE WHEN c.anomalous THEN c.mime_type END AS mime_type,
         CASE WHEN c.anomalous THEN c.blob_content_type END AS blob_content_type,
         CASE WHEN c.anomalous THEN c.mime_mismatch END AS mime_mismatch,
         CASE WHEN c.anomalous THEN c.file_size::text END AS file_size,
         CASE WHEN c.anomalous THEN c.blob_size::text END AS blob_size
    FROM (
      SELECT r.*,
             (r.created_at <= $2::timestamptz
              AND (r.folder_drive_id IS NOT NULL OR r.mime_mismatch OR r.blob_missing
                   OR r.blob_size <> r.file_size)) AS anomalous
        FROM (
          SELECT f.id, f.drive_id, f.folder_id, f.blob_hash, f.mime_type, f.created_at,
                 CASE WHEN d.drive_id <> f.drive_id THEN d.drive_id END AS folder_drive_id,
                 bl.content_type AS blob_content_type,
                 f.size AS file_size, bl.size AS blob_size, bl.hash IS NULL AS blob_missing,
                 COALESCE(${knownMime('f.mime_type')} <> ${knownMime('bl.content_type')}, false) AS mime_mismatch
            FROM storage.files f
            LEFT JOIN LATERAL (SELECT d.drive_id FROM storage.folders d WHERE d.id = f.folder_id OFFSET 0) d ON true
            LEFT JOIN LATERAL (
              SELECT bl.hash, bl.size, bl.content_type FROM storage.blobs bl WHERE bl.hash = f.blob_hash OFFSET 0
            ) bl ON true
           WHERE $1::uuid IS NULL OR f.id > $1::uuid
           ORDER BY f.id
        ) r
    ) c`;

interface StreamRow {
  id: string;
  anomalous: boolean | null;
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
  readonly client: pg.PoolClient;
  readonly openedAt: number;
  rows: number;
  /** Where the stream stands: the last id returned (the key it opened after, before any). */
  position: string | null;
  /** The page after `position`, already asked for (pipelining), with its batch size. */
  ahead: { readonly limit: number; readonly page: Promise<StreamRow[]> } | null;
  ended: boolean;
}

/**
 * {@link FileRowStream} on a connection of its own from `pool`: one
 * server-side cursor (`DECLARE … NO SCROLL CURSOR` in a read-only
 * transaction) per segment, `FETCH limit` per page; the next page is fetched
 * while the caller writes this one's findings and checkpoint on its own
 * connection. A segment ends after {@link SEGMENT_MAX_MS} or
 * {@link SEGMENT_MAX_ROWS} (the next page opens a new one after the last
 * key), on {@link close}, and on any error (the connection is discarded: a
 * retried page opens a fresh segment).
 */
export class PgFileRowStream implements FileRowStream {
  readonly #pool: pg.Pool;
  readonly #options: FileScanOptions;
  readonly #maxMs: number;
  readonly #maxRows: number;
  #segment: Segment | null = null;
  /** Segments opened so far (a figure for tests and benchmarks). */
  segments = 0;

  /** `limits` bound each segment (defaults {@link SEGMENT_MAX_MS}, {@link SEGMENT_MAX_ROWS}). */
  constructor(
    pool: pg.Pool,
    options: FileScanOptions,
    limits: { readonly maxSegmentMs?: number; readonly maxSegmentRows?: number } = {},
  ) {
    this.#pool = pool;
    this.#options = options;
    this.#maxMs = limits.maxSegmentMs ?? SEGMENT_MAX_MS;
    this.#maxRows = limits.maxSegmentRows ?? SEGMENT_MAX_ROWS;
  }

  async next(afterFileId: string | null, limit: number): Promise<ScanPage<FileRowAnomaly>> {
    let segment = this.#segment;
    // The page asked for ahead was for another batch size: it moved the cursor, so start over there.
    const stale = segment?.ahead != null && segment.ahead.limit !== limit;
    if (
      segment === null ||
      stale ||
      segment.ended ||
      segment.position !== afterFileId ||
      this.#expired(segment)
    ) {
      await this.close();
      segment = await this.#open(afterFileId);
    }
    let rows: StreamRow[];
    try {
      const ahead = segment.ahead;
      segment.ahead = null;
      rows = ahead !== null ? await ahead.page : await this.#fetch(segment, limit);
    } catch (error) {
      await this.#discard(segment, error);
      throw error;
    }
    const last = rows.at(-1)?.id ?? null;
    segment.rows += rows.length;
    if (last !== null) segment.position = last;
    if (rows.length < limit) segment.ended = true;
    else if (!this.#expired(segment)) {
      // Pipelining: the next page is read while the caller writes this one's findings and checkpoint.
      const page = this.#fetch(segment, limit);
      page.catch(() => undefined); // seen (and the connection discarded) by the next call
      segment.ahead = { limit, page };
    }
    const anomalies: FileRowAnomaly[] = [];
    for (const r of rows) if (r.anomalous) anomalies.push(toAnomaly(r));
    return { scanned: rows.length, lastKey: last, anomalies };
  }

  async close(): Promise<void> {
    const segment = this.#segment;
    if (segment === null) return;
    this.#segment = null;
    try {
      await segment.ahead?.page;
      await segment.client.query('COMMIT');
      release(segment.client);
    } catch (error) {
      release(segment.client, error);
    }
  }

  #expired(segment: Segment): boolean {
    return performance.now() - segment.openedAt > this.#maxMs || segment.rows >= this.#maxRows;
  }

  async #open(after: string | null): Promise<Segment> {
    const client = await this.#pool.connect();
    // A connection that drops between two FETCHes must not throw from an event nobody listens to:
    // the next FETCH fails and the caller retries on a fresh segment.
    client.on('error', ignoreConnectionError);
    try {
      await client.query('BEGIN READ ONLY');
      await client.query(`SET LOCAL idle_in_transaction_session_timeout = ${SEGMENT_IDLE_TIMEOUT_MS}`);
      await client.query({
        text: `DECLARE files_by_id NO SCROLL CURSOR FOR ${STREAM_SQL}`,
        values: [after, this.#options.createdBefore],
      });
    } catch (error) {
      release(client, error);
      throw error;
    }
    const segment: Segment = {
      client,
      openedAt: performance.now(),
      rows: 0,
      position: after,
      ahead: null,
      ended: false,
    };
    this.#segment = segment;
    this.segments += 1;
    return segment;
  }

  async #fetch(segment: Segment, limit: number): Promise<StreamRow[]> {
    const result = await segment.client.query<StreamRow>(
      `FETCH ${Math.max(1, Math.floor(limit))} FROM files_by_id`,
    );
    return result.rows;
  }

  async #discard(segment: Segment, error: unknown): Promise<void> {
    if (this.#segment === segment) this.#segment = null;
    await segment.ahead?.page.catch(() => undefined);
    release(segment.client, error);
  }
}

function ignoreConnectionError(): void {
  // seen by the next query on the connection
}

/** Back to the pool; with an error the connection is destroyed, not reused. */
function release(client: pg.PoolClient, error?: unknown): void {
  if (error !== undefined) {
    client.release(error instanceof Error ? error : new Error(String(error)));
    return;
  }
  client.removeListener('error', ignoreConnectionError);
  client.release();
}

function toAnomaly(r: StreamRow): FileRowAnomaly {
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
