import type {
  BlobFileImpact,
  BlobIndexRow,
  BlobIndexScan,
  BlobRangeQuery,
  BlobRangeScan,
} from '@oxicloud/tenants';
import { type Kysely, sql } from 'kysely';
import { bigintToNumber, type StorageDatabase } from './database.js';
import { estimateRowsOf } from './row-estimate.js';

/** A blob row as `json_build_object` / a plain SELECT returns it. */
interface RowJson {
  hash: string;
  size: string | number;
  ref_count: number;
  /** ISO text from json_build_object, a Date from a plain column. */
  orphaned_at: string | Date | null;
  content_type: string | null;
  created_at: string | Date;
}

const toRow = (r: RowJson): BlobIndexRow => ({
  hash: r.hash,
  size: bigintToNumber(r.size),
  refCount: Number(r.ref_count),
  orphanedAt: r.orphaned_at === null ? null : new Date(r.orphaned_at),
  contentType: r.content_type,
  createdAt: new Date(r.created_at),
});

const ROW_JSON = (alias: string) =>
  sql.raw(`json_build_object(
  'hash', ${alias}.hash, 'size', ${alias}.size::text, 'ref_count', ${alias}.ref_count,
  'orphaned_at', ${alias}.orphaned_at, 'content_type', ${alias}.content_type, 'created_at', ${alias}.created_at)`);

/**
 * {@link BlobIndexScan} on `storage.blobs` (and `storage.files` for the
 * fan-out of a missing blob). `scanRange` reads the interval `(after, upTo]`
 * over the primary key in hash order, compares it with the listed keys in
 * the same statement, and sends back only the anomalies: a merge of the
 * backend listing and the table, never a lookup per key.
 */
export class PgBlobIndexScan implements BlobIndexScan {
  readonly #db: Kysely<StorageDatabase>;

  constructor(db: Kysely<StorageDatabase>) {
    this.#db = db;
  }

  async scanRange(query: BlobRangeQuery): Promise<BlobRangeScan> {
    const { after, upTo, limit, listedHashes } = query;
    const { rows } = await sql<{
      rows_scanned: number;
      cut_at: string | null;
      not_listed: RowJson[];
      without_row: string[];
    }>`
      WITH r AS MATERIALIZED (
        SELECT b.hash, b.size, b.ref_count, b.orphaned_at, b.content_type, b.created_at
          FROM storage.blobs b
         WHERE (${after}::text IS NULL OR b.hash > ${after}::text)
           AND (${upTo}::text IS NULL OR b.hash <= ${upTo}::text)
         ORDER BY b.hash
         LIMIT ${limit}
      ),
      s AS (SELECT count(*)::int AS n, max(hash) AS last FROM r),
      l AS MATERIALIZED (SELECT unnest(${[...listedHashes]}::text[]) AS hash),
      lc AS (SELECT l.hash FROM l, s WHERE s.n < ${limit} OR l.hash <= s.last)
      SELECT s.n AS rows_scanned,
             CASE WHEN s.n >= ${limit} THEN s.last END AS cut_at,
             COALESCE((SELECT json_agg(${ROW_JSON('r')} ORDER BY r.hash)
                         FROM r WHERE NOT EXISTS (SELECT 1 FROM l WHERE l.hash = r.hash)), '[]'::json) AS not_listed,
             COALESCE((SELECT json_agg(lc.hash ORDER BY lc.hash)
                         FROM lc WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.hash = lc.hash)), '[]'::json) AS without_row
        FROM s`.execute(this.#db);
    const row = rows[0];
    if (!row) return { rowsScanned: 0, cutAt: null, rowsNotListed: [], listedWithoutRow: [] };
    return {
      rowsScanned: Number(row.rows_scanned),
      cutAt: row.cut_at,
      rowsNotListed: row.not_listed.map(toRow),
      listedWithoutRow: row.without_row,
    };
  }

  async rowsByHash(hashes: readonly string[]): Promise<BlobIndexRow[]> {
    if (hashes.length === 0) return [];
    const { rows } = await sql<RowJson>`
      SELECT hash, size::text AS size, ref_count, orphaned_at, content_type, created_at
        FROM storage.blobs WHERE hash = ANY(${[...hashes]}::text[])`.execute(this.#db);
    return rows.map(toRow);
  }

  async fileImpact(hashes: readonly string[], maxFileIds: number): Promise<BlobFileImpact[]> {
    if (hashes.length === 0) return [];
    const { rows } = await sql<RowJson & { file_count: number; live_file_count: number; file_ids: string[] }>`
      SELECT b.hash, b.size::text AS size, b.ref_count, b.orphaned_at, b.content_type, b.created_at,
             (SELECT count(*) FROM storage.files f WHERE f.blob_hash = b.hash)::int AS file_count,
             (SELECT count(*) FROM storage.files f WHERE f.blob_hash = b.hash AND NOT f.is_trashed)::int
               AS live_file_count,
             ARRAY(SELECT f.id::text FROM storage.files f WHERE f.blob_hash = b.hash
                    ORDER BY f.id LIMIT ${maxFileIds}) AS file_ids
        FROM storage.blobs b
       WHERE b.hash = ANY(${[...hashes]}::text[])`.execute(this.#db);
    return rows.map((r) => ({
      row: toRow(r),
      fileCount: Number(r.file_count),
      liveFileCount: Number(r.live_file_count),
      fileIds: r.file_ids,
    }));
  }

  async estimateRows(): Promise<number | null> {
    const estimate = await estimateRowsOf(this.#db, ['storage.blobs']);
    if (estimate !== null) return estimate;
    const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM storage.blobs`.execute(this.#db);
    return rows[0] ? bigintToNumber(rows[0].n) : null;
  }
}
