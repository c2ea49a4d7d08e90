import type { ConsistencyCheck } from '@oxicloud/consistency';
import type { Logger } from '@oxicloud/scheduler';
import {
  createManifestsConsistencyCheck,
  type ManifestAnomaly,
  type ManifestScan,
  type ManifestScanOptions,
  type ManifestsConsistencyCheckOptions,
  type MultiChunkManifestNow,
  type MultiChunkManifestPage,
  type PagedMultiChunkManifest,
  type ScanPage,
} from '@oxicloud/tenants';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { CDC_CHUNK_SIZES } from '../content/file-content.js';
import { manifestShapeProblems } from '../content/manifest-shape.js';
import { BLAKE3_EMPTY } from '../hashing/blake3.js';
import { bigintToNumber } from '../postgres/database.js';
import { estimateRowsOf } from './content-sql.js';
import type { OxiCloudDatabase } from './database.js';

interface RowJson {
  file_hash: string;
  ref_count: number;
  file_count: string;
  total_size: string;
  chunk_count: number;
  /** The arrays, only when the SQL found the shape broken. */
  chunk_hashes: (string | null)[] | null;
  chunk_sizes: (string | null)[] | null;
  created_at: string;
}

/** The codes of the rules a row breaks, each once: `manifestShapeProblems` is the one statement of the rules. */
function shapeOf(r: RowJson): string[] {
  if (r.chunk_hashes === null || r.chunk_sizes === null) return [];
  const problems = manifestShapeProblems({
    fileHash: r.file_hash,
    chunkHashes: r.chunk_hashes.map((h) => h ?? ''),
    chunkSizes: r.chunk_sizes.map((s) => (s === null ? Number.NaN : Number(s))),
    totalSize: bigintToNumber(r.total_size),
    chunkCount: Number(r.chunk_count),
  });
  return [...new Set(problems.map((p) => p.code))];
}

const toAnomaly = (r: RowJson): ManifestAnomaly => ({
  fileHash: r.file_hash,
  refCount: Number(r.ref_count),
  fileCount: bigintToNumber(r.file_count),
  totalSize: bigintToNumber(r.total_size),
  chunkCount: Number(r.chunk_count),
  shape: shapeOf(r),
  createdAt: new Date(r.created_at),
});

/** A multi-chunk manifest as the deep pass's statements send it. */
interface ChunkListJson {
  file_hash: string;
  chunk_hashes: string[];
  total_size: string;
  chunk_count: number;
  created_at: string;
}

const toMultiChunk = (r: ChunkListJson) => ({
  fileHash: r.file_hash,
  chunkHashes: r.chunk_hashes,
  totalSize: bigintToNumber(r.total_size),
  chunkCount: Number(r.chunk_count),
  createdAt: new Date(r.created_at),
});

/**
 * The chunk hashes one page of the deep pass sends at most (about 1.3 MB of
 * hex; some 5 GiB of average CDC chunks to hash): a page of large files
 * ends at the manifest that reaches it. A manifest longer than that comes
 * alone.
 */
export const MULTI_CHUNK_PAGE_MAX_CHUNKS = 20_000;

/** A manifest the deep pass hashes: two chunks or more, each a 64-hex key (a malformed one cannot be read). */
const HASHABLE = (m: RawBuilder<unknown>) => sql`cardinality(${m}.chunk_hashes) > 1
   AND NOT EXISTS (SELECT 1 FROM unnest(${m}.chunk_hashes) h WHERE h IS NULL OR h !~ '^[0-9a-f]{64}$')`;

/** Options of {@link OxiManifestScan}. */
export interface OxiManifestScanOptions {
  /** The checks' batch loops log their retries, lost checkpoints and failures here. */
  readonly logger?: Logger;
  /** Each check's own options (grace), by check name: given to that check only. */
  readonly checks?: {
    /** `graceWindowMs` on the manifest's `created_at` (default 1 h). */
    readonly manifests_consistency?: Omit<ManifestsConsistencyCheckOptions, 'scan' | 'logger'>;
  };
}

/**
 * {@link ManifestScan} on OxiCloud's domain, and the stateful adapter of the
 * chunk manifests (`subsystem() === 'chunk_manifests'`): it contributes
 * `manifests_consistency`.
 *
 * The expected `ref_count` of a manifest is fact sheet §12 item 14: the
 * number of `storage.files` rows whose `blob_hash` is its `file_hash`,
 * trashed included (a trashed file still holds its content). Its shape is
 * item 13, checked on the row alone. SQL finds the rows that break a rule
 * (`cardinality`, not `array_length`, which is NULL for the empty
 * manifest) and sends their arrays; `manifestShapeProblems`, the one
 * statement of the rules, names the codes (`MANIFEST_SHAPE_PROBLEM_CODES`).
 * The adapter's test holds the SQL to it.
 *
 * Each page is one statement: a keyset page of manifests by `file_hash`;
 * the files of the page's hashes by `idx_files_blob_hash`, counted per hash;
 * the comparison and the shape rules in SQL, and back only the anomalous
 * rows with the page's count and last hash.
 *
 * With a `hasher` in `checks.manifests_consistency` (`createBlobHasher` over
 * the store OxiCloud serves from), deep runs walk the table again
 * (`scanMultiChunkManifests`): a keyset page of manifests by `file_hash`, of
 * which only the multi-chunk ones old enough come back, with their chunk
 * lists (at most {@link MULTI_CHUNK_PAGE_MAX_CHUNKS} chunks a page).
 */
export class OxiManifestScan implements ManifestScan {
  readonly #db: Kysely<OxiCloudDatabase>;
  readonly #checks: readonly ConsistencyCheck[];

  constructor(db: Kysely<OxiCloudDatabase>, options: OxiManifestScanOptions = {}) {
    this.#db = db;
    const { checks = {} } = options;
    const logger = options.logger ? { logger: options.logger } : {};
    this.#checks = [
      {
        ...createManifestsConsistencyCheck({ ...checks.manifests_consistency, ...logger, scan: this }),
        reads: ['storage.chunk_manifests', 'storage.files'],
      },
    ];
  }

  subsystem(): string {
    return 'chunk_manifests';
  }

  /** `manifests_consistency`: `ref_count` against §12 item 14, the shape against item 13. */
  consistencyChecks(): readonly ConsistencyCheck[] {
    return this.#checks;
  }

  async scanManifests(
    afterHash: string | null,
    limit: number,
    options: ManifestScanOptions,
  ): Promise<ScanPage<ManifestAnomaly>> {
    const row = await this.#compare(
      sql`SELECT file_hash, chunk_hashes, chunk_sizes, total_size, chunk_count, ref_count, created_at
            FROM storage.chunk_manifests
          ${afterHash === null ? sql`` : sql`WHERE file_hash > ${afterHash}::text`}
          ORDER BY file_hash LIMIT ${limit}`,
      options,
    );
    return {
      scanned: bigintToNumber(row.scanned),
      lastKey: row.last_hash,
      anomalies: row.anomalies.map(toAnomaly),
    };
  }

  async reverifyManifests(
    fileHashes: readonly string[],
    options: ManifestScanOptions,
  ): Promise<ManifestAnomaly[]> {
    if (fileHashes.length === 0) return [];
    const row = await this.#compare(
      sql`SELECT file_hash, chunk_hashes, chunk_sizes, total_size, chunk_count, ref_count, created_at
            FROM storage.chunk_manifests WHERE file_hash = ANY(${[...fileHashes]}::text[])`,
      options,
    );
    return row.anomalies.map(toAnomaly);
  }

  async scanMultiChunkManifests(
    afterHash: string | null,
    limit: number,
    options: ManifestScanOptions,
  ): Promise<MultiChunkManifestPage> {
    const { rows } = await sql<{
      page_rows: string;
      page_last: string | null;
      wanted: string;
      manifests: Array<ChunkListJson & { position: string }>;
    }>`
      WITH page AS MATERIALIZED (
        SELECT p.*, row_number() OVER (ORDER BY p.file_hash) AS position
          FROM (SELECT file_hash, chunk_hashes, total_size, chunk_count, created_at
                  FROM storage.chunk_manifests
                ${afterHash === null ? sql`` : sql`WHERE file_hash > ${afterHash}::text`}
                ORDER BY file_hash LIMIT ${limit}) p
      ),
      wanted AS MATERIALIZED (
        SELECT m.*, sum(cardinality(m.chunk_hashes)) OVER (ORDER BY m.file_hash) AS running
          FROM page m
         WHERE ${HASHABLE(sql.raw('m'))} AND m.created_at <= ${options.createdBefore}
      ),
      sent AS (
        SELECT * FROM wanted WHERE running - cardinality(chunk_hashes) < ${MULTI_CHUNK_PAGE_MAX_CHUNKS}
      )
      SELECT (SELECT count(*) FROM page) AS page_rows,
             (SELECT max(file_hash) FROM page) AS page_last,
             (SELECT count(*) FROM wanted) AS wanted,
             COALESCE((
               SELECT json_agg(json_build_object(
                        'file_hash', s.file_hash, 'chunk_hashes', s.chunk_hashes,
                        'total_size', s.total_size::text, 'chunk_count', s.chunk_count,
                        'created_at', s.created_at, 'position', s.position::text)
                        ORDER BY s.file_hash)
                 FROM sent s
             ), '[]'::json) AS manifests`.execute(this.#db);
    const row = rows[0];
    if (row === undefined) return { scanned: 0, lastKey: null, manifests: [], last: true };
    const manifests: PagedMultiChunkManifest[] = row.manifests.map((m) => ({
      ...toMultiChunk(m),
      position: bigintToNumber(m.position),
    }));
    const pageRows = bigintToNumber(row.page_rows);
    const end = manifests.at(-1);
    // Cut at the chunk budget: the page ends at the last manifest sent.
    if (end !== undefined && manifests.length < bigintToNumber(row.wanted)) {
      return { scanned: end.position, lastKey: end.fileHash, manifests, last: false };
    }
    return { scanned: pageRows, lastKey: row.page_last, manifests, last: pageRows < limit };
  }

  async rereadMultiChunkManifests(
    fileHashes: readonly string[],
    options: ManifestScanOptions,
  ): Promise<MultiChunkManifestNow[]> {
    if (fileHashes.length === 0) return [];
    const { rows } = await sql<ChunkListJson & { file_count: string }>`
      SELECT m.file_hash, m.chunk_hashes, m.total_size::text AS total_size, m.chunk_count, m.created_at,
             (SELECT count(*) FROM storage.files f WHERE f.blob_hash = m.file_hash)::text AS file_count
        FROM storage.chunk_manifests m
       WHERE m.file_hash = ANY(${[...fileHashes]}::text[])
         AND ${HASHABLE(sql.raw('m'))} AND m.created_at <= ${options.createdBefore}
       ORDER BY m.file_hash`.execute(this.#db);
    return rows.map((r) => ({ ...toMultiChunk(r), fileCount: bigintToNumber(r.file_count) }));
  }

  estimateRows(): Promise<number | null> {
    return estimateRowsOf(this.#db, ['storage.chunk_manifests']);
  }

  async #compare(
    batch: RawBuilder<unknown>,
    options: ManifestScanOptions,
  ): Promise<{ scanned: string; last_hash: string | null; anomalies: RowJson[] }> {
    const { rows } = await sql<{ scanned: string; last_hash: string | null; anomalies: RowJson[] }>`
      WITH batch AS MATERIALIZED (${batch}),
      page AS MATERIALIZED (SELECT ARRAY(SELECT file_hash::text FROM batch) AS hashes),
      files AS MATERIALIZED (
        SELECT f.blob_hash AS hash, count(*) AS n
          FROM storage.files f, page
         WHERE f.blob_hash = ANY (page.hashes)
         GROUP BY f.blob_hash
      ),
      checked AS (
        SELECT b.file_hash, b.ref_count, b.total_size, b.chunk_count, b.created_at,
               COALESCE(f.n, 0) AS file_count,
               (b.file_hash !~ '^[0-9a-f]{64}$'
                OR b.chunk_count IS DISTINCT FROM cardinality(b.chunk_hashes)
                OR cardinality(b.chunk_hashes) <> cardinality(b.chunk_sizes)
                OR b.total_size IS DISTINCT FROM (SELECT COALESCE(sum(s), 0) FROM unnest(b.chunk_sizes) s)
                OR EXISTS (SELECT 1 FROM unnest(b.chunk_sizes) s
                            WHERE s IS NULL OR s < 0 OR s > ${CDC_CHUNK_SIZES.max})
                OR EXISTS (SELECT 1 FROM unnest(b.chunk_hashes) h WHERE h IS NULL OR h !~ '^[0-9a-f]{64}$')
                OR (cardinality(b.chunk_hashes) = 0 AND b.file_hash <> ${BLAKE3_EMPTY})
                OR (cardinality(b.chunk_hashes) = 1 AND b.chunk_hashes[1] <> b.file_hash)) AS shape_broken,
               b.chunk_hashes, b.chunk_sizes
          FROM batch b
          LEFT JOIN files f ON f.hash = b.file_hash
      )
      SELECT (SELECT count(*) FROM batch) AS scanned,
             (SELECT max(file_hash) FROM batch) AS last_hash,
             COALESCE((
               SELECT json_agg(json_build_object(
                        'file_hash', x.file_hash, 'ref_count', x.ref_count, 'file_count', x.file_count::text,
                        'total_size', x.total_size::text, 'chunk_count', x.chunk_count,
                        'chunk_hashes', CASE WHEN x.shape_broken THEN x.chunk_hashes END,
                        'chunk_sizes', CASE WHEN x.shape_broken THEN x.chunk_sizes::text[] END,
                        'created_at', x.created_at)
                        ORDER BY x.file_hash)
                 FROM checked x
                WHERE (x.ref_count <> x.file_count OR x.file_count = 0 OR x.shape_broken)
                  AND x.created_at <= ${options.createdBefore}
             ), '[]'::json) AS anomalies`.execute(this.#db);
    return rows[0] ?? { scanned: '0', last_hash: null, anomalies: [] };
  }
}
