import type {
  BlobFileImpact,
  BlobIndexRow,
  BlobIndexScan,
  BlobRangeQuery,
  BlobRangeScan,
} from '@oxicloud/tenants';
import { type Kysely, sql } from 'kysely';
import { bigintToNumber } from '../postgres/database.js';
import { StorageError } from '../storage-error.js';
import { estimateRowsOf } from './content-sql.js';
import type { OxiCloudDatabase } from './database.js';

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
 * {@link BlobIndexScan} on OxiCloud's domain: the `storage_consistency`
 * side of the blob store. The objects are exactly the `storage.blobs` rows
 * (chunks and legacy whole-file blobs, fact sheet §7); a manifest has no
 * object, so `scanRange` merges the backend listing with `storage.blobs`
 * alone, in hash order over the primary key:
 * a row whose key is not listed has lost its bytes (`missing_blob_bytes`),
 * a listed key without a row is orphan bytes (`orphan_blob`: OxiCloud never
 * reclaims them, §12 item 18), a listed key whose row records another size
 * than the listing implies is a truncated or grown object
 * (`blob_object_size_mismatch`, §12 item 17).
 *
 * `fileImpact` counts the files that READ the object, not only those
 * naming it: the files of every manifest listing the hash as a chunk (one
 * GIN probe, `chunk_hashes @> ARRAY[hash]`), plus, when no manifest has
 * `file_hash = hash`, the legacy files whose `blob_hash` is the hash. So a
 * lost chunk of a multi-chunk file is data loss for that file (and every
 * file deduplicated onto its manifest), and a stray row under a multi-chunk
 * file's own hash (which nobody reads) impacts nobody.
 */
export class OxiBlobIndexScan implements BlobIndexScan {
  readonly reads = ['storage.blobs', 'storage.chunk_manifests', 'storage.files'] as const;
  readonly #db: Kysely<OxiCloudDatabase>;

  constructor(db: Kysely<OxiCloudDatabase>) {
    this.#db = db;
  }

  async scanRange(query: BlobRangeQuery): Promise<BlobRangeScan> {
    const { after, upTo, limit, listedHashes, listedSizes } = query;
    if (listedSizes.length !== listedHashes.length) {
      throw new StorageError(
        'INVALID_ARGUMENT',
        `OxiBlobIndexScan.scanRange: listedSizes must have one size per listed hash (${listedHashes.length}), got ${listedSizes.length}`,
      );
    }
    const { rows } = await sql<{
      rows_scanned: number;
      cut_at: string | null;
      not_listed: RowJson[];
      without_row: string[];
      size_mismatches: RowJson[];
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
      l AS MATERIALIZED (
        SELECT * FROM unnest(${[...listedHashes]}::text[], ${listedSizes.map(String)}::bigint[]) AS l(hash, size)
      ),
      lc AS (SELECT l.hash FROM l, s WHERE s.n < ${limit} OR l.hash <= s.last)
      SELECT s.n AS rows_scanned,
             CASE WHEN s.n >= ${limit} THEN s.last END AS cut_at,
             COALESCE((SELECT json_agg(${ROW_JSON('r')} ORDER BY r.hash)
                         FROM r WHERE NOT EXISTS (SELECT 1 FROM l WHERE l.hash = r.hash)), '[]'::json) AS not_listed,
             COALESCE((SELECT json_agg(lc.hash ORDER BY lc.hash)
                         FROM lc WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.hash = lc.hash)), '[]'::json) AS without_row,
             COALESCE((SELECT json_agg(${ROW_JSON('r')} ORDER BY r.hash)
                         FROM r JOIN l ON l.hash = r.hash WHERE l.size <> r.size), '[]'::json) AS size_mismatches
        FROM s`.execute(this.#db);
    const row = rows[0];
    if (!row) {
      return { rowsScanned: 0, cutAt: null, rowsNotListed: [], listedWithoutRow: [], sizeMismatches: [] };
    }
    return {
      rowsScanned: Number(row.rows_scanned),
      cutAt: row.cut_at,
      rowsNotListed: row.not_listed.map(toRow),
      listedWithoutRow: row.without_row,
      sizeMismatches: row.size_mismatches.map(toRow),
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
      WITH t AS MATERIALIZED (
        SELECT b.hash, b.size, b.ref_count, b.orphaned_at, b.content_type, b.created_at,
               -- The content hashes that read this object: manifests listing it as a chunk, and the
               -- hash itself when it is a legacy whole-file blob (no manifest of that name).
               ARRAY(SELECT m.file_hash::text FROM storage.chunk_manifests m
                      WHERE m.chunk_hashes @> ARRAY[b.hash::text])
               || CASE WHEN EXISTS (SELECT 1 FROM storage.chunk_manifests m WHERE m.file_hash = b.hash)
                       THEN ARRAY[]::text[] ELSE ARRAY[b.hash::text] END AS readers
          FROM storage.blobs b
         WHERE b.hash = ANY(${[...hashes]}::text[])
      )
      SELECT t.hash, t.size::text AS size, t.ref_count, t.orphaned_at, t.content_type, t.created_at,
             (SELECT count(*) FROM storage.files f WHERE f.blob_hash = ANY(t.readers))::int AS file_count,
             (SELECT count(*) FROM storage.files f WHERE f.blob_hash = ANY(t.readers) AND NOT f.is_trashed)::int
               AS live_file_count,
             ARRAY(SELECT f.id::text FROM storage.files f WHERE f.blob_hash = ANY(t.readers)
                    ORDER BY f.id LIMIT ${maxFileIds}) AS file_ids
        FROM t`.execute(this.#db);
    return rows.map((r) => ({
      row: toRow(r),
      fileCount: Number(r.file_count),
      liveFileCount: Number(r.live_file_count),
      fileIds: r.file_ids,
    }));
  }

  async estimateRows(): Promise<number | null> {
    return estimateRowsOf(this.#db, ['storage.blobs']);
  }

  async sampleRows(limit: number, createdBefore: Date): Promise<BlobIndexRow[]> {
    if (limit <= 0) return [];
    // Evenly spaced starting points over the hex hash space: '00', '33', '66', … for 5.
    const points = Array.from({ length: limit }, (_, i) =>
      Math.floor((i * 256) / limit)
        .toString(16)
        .padStart(2, '0'),
    );
    // The first row at or after each point, and the first `limit` rows: a small table is sampled whole.
    const { rows } = await sql<RowJson>`
      SELECT DISTINCT ON (s.hash) s.hash, s.size::text AS size, s.ref_count, s.orphaned_at, s.content_type, s.created_at
        FROM (
          SELECT b.* FROM unnest(${points}::text[]) AS p(at)
            CROSS JOIN LATERAL (
              SELECT hash, size, ref_count, orphaned_at, content_type, created_at
                FROM storage.blobs
               WHERE hash >= p.at AND ref_count > 0 AND created_at <= ${createdBefore}
               ORDER BY hash
               LIMIT 1) b
          UNION ALL
          (SELECT hash, size, ref_count, orphaned_at, content_type, created_at
             FROM storage.blobs
            WHERE ref_count > 0 AND created_at <= ${createdBefore}
            ORDER BY hash
            LIMIT ${limit})
        ) s
       ORDER BY s.hash`.execute(this.#db);
    return rows.map(toRow);
  }

  /**
   * Of `hashes`, those neither a manifest's `file_hash` nor a blob row, and
   * that no file names either (a file whose content row is gone keeps its
   * thumbnails: that loss is `files_consistency`'s `missing_blob`, and the
   * thumbnail is what is left of it): primary-key probes, and
   * `idx_files_blob_hash` for the files.
   */
  async unknownContentHashes(hashes: readonly string[]): Promise<string[]> {
    if (hashes.length === 0) return [];
    const { rows } = await sql<{ hash: string }>`
      SELECT h.hash FROM unnest(${[...hashes]}::text[]) AS h(hash)
       WHERE NOT EXISTS (SELECT 1 FROM storage.chunk_manifests m WHERE m.file_hash = h.hash)
         AND NOT EXISTS (SELECT 1 FROM storage.blobs b WHERE b.hash = h.hash)
         AND NOT EXISTS (SELECT 1 FROM storage.files f WHERE f.blob_hash = h.hash)
       ORDER BY h.hash`.execute(this.#db);
    return rows.map((r) => r.hash);
  }

  /**
   * Of `fileIds`, those no `storage.files` row has (trashed rows count: a
   * trashed file exists): one probe by primary key each, in one query.
   */
  async unknownFileIds(fileIds: readonly string[]): Promise<string[]> {
    if (fileIds.length === 0) return [];
    const { rows } = await sql<{ id: string }>`
      SELECT f.id::text AS id FROM unnest(${[...fileIds]}::uuid[]) AS f(id)
       WHERE NOT EXISTS (SELECT 1 FROM storage.files x WHERE x.id = f.id)
       ORDER BY f.id`.execute(this.#db);
    return rows.map((r) => r.id);
  }
}
