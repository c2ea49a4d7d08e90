import type {
  BlobCollectResult,
  ChunkManifestRecord,
  CollectedBlob,
  ContentGcPage,
  ContentGcRepository,
  ManifestCollectResult,
  ManifestRestoreStatus,
} from '@oxicloud/tenants';
import { type Kysely, sql, type Transaction } from 'kysely';
import { bigintToNumber } from '../postgres/database.js';
import type { OxiCloudDatabase } from './database.js';

type Db = Kysely<OxiCloudDatabase> | Transaction<OxiCloudDatabase>;

interface ManifestRow {
  file_hash: string;
  chunk_hashes: string[];
  chunk_sizes: (string | number)[];
  total_size: string | number;
  content_type: string | null;
  ref_count: number;
}

function toRecord(row: ManifestRow): ChunkManifestRecord {
  return {
    fileHash: row.file_hash,
    chunkHashes: row.chunk_hashes,
    chunkSizes: row.chunk_sizes.map((s) => bigintToNumber(s)),
    totalSize: bigintToNumber(row.total_size),
    contentType: row.content_type,
  };
}

/** Those of `hashes` that a `storage.files` row (trashed or not) names (`idx_files_blob_hash`). */
async function namedByFiles(db: Db, hashes: readonly string[]): Promise<Set<string>> {
  if (hashes.length === 0) return new Set();
  const { rows } = await sql<{ hash: string }>`
    SELECT h AS hash FROM unnest(${[...hashes]}::text[]) AS h
     WHERE EXISTS (SELECT 1 FROM storage.files f WHERE f.blob_hash = h)`.execute(db);
  return new Set(rows.map((r) => r.hash));
}

/** Those of `hashes` that a manifest lists (the GIN index `idx_chunk_manifests_chunk_hashes_gin`). */
async function listedByManifests(db: Db, hashes: readonly string[]): Promise<Set<string>> {
  if (hashes.length === 0) return new Set();
  const { rows } = await sql<{ hash: string }>`
    SELECT h AS hash FROM unnest(${[...hashes]}::text[]) AS h
     WHERE EXISTS (SELECT 1 FROM storage.chunk_manifests m WHERE m.chunk_hashes @> ARRAY[h]::text[])`.execute(
    db,
  );
  return new Set(rows.map((r) => r.hash));
}

/**
 * {@link ContentGcRepository} on OxiCloud's content tables (fact sheet §5,
 * §6): what `createContentGcJob` (`dedup_gc` on the `oxicloud` storage
 * domain) collects, with the locks that make it safe beside OxiCloud's
 * uploads and its own GC (which takes no lock and may run at the same time).
 *
 * **Why it is safe.** OxiCloud's upload writes, in this order: the bytes
 * (an object that "already exists" is taken as identical), the chunk rows
 * (+1, clearing `orphaned_at`), the manifest (+1 on conflict), the file
 * row. Each of those statements either commits before the GC's row lock
 * (then the GC's re-check under the lock sees it: the count is no longer 0,
 * or a manifest lists the chunk, or a file names the content) or waits on
 * the lock and, once the GC has deleted the row, inserts a fresh one
 * (Postgres re-checks an `ON CONFLICT` arbiter after the wait). What no lock
 * can cover is an upload between its steps: it found the bytes in place
 * before the GC moved them, or attached to a manifest before writing its
 * file row. Hence nothing here is final: the job saves a manifest before
 * deleting it and moves bytes to the quarantine instead of deleting them,
 * and every run first puts back what a row wants again.
 *
 * **Phase 1** ({@link collectManifests}), one transaction per batch:
 * `SELECT … FOR UPDATE` on the manifests (hash order, still past the grace
 * from `created_at`), then a separate statement on `storage.files` (so it
 * sees every file row committed before the lock): a manifest any file names
 * is kept, whatever its `ref_count` (OxiCloud's `ref_count ≤ 0` branch has
 * no such check). The rest are saved (callback), deleted, and each distinct
 * chunk's row is lowered by the number of deleted manifests listing it
 * (rows locked in hash order, clamped at 0, `orphaned_at = now()` at 0);
 * commit.
 *
 * **Phase 2** ({@link collectBlobs}), one transaction per batch: `SELECT …
 * FOR UPDATE` on the rows still at `ref_count = 0` past the cutoff (hash
 * order; a row an upload pinned meanwhile drops out, Postgres re-evaluating
 * the condition on the new row version), then the manifest check (GIN
 * `chunk_hashes @> ARRAY[hash]`) and the file check; the callback moves the
 * rest's bytes to the quarantine **while the rows are locked**; then the
 * rows are deleted; commit. After the commit the job looks the moved hashes
 * up again ({@link wantedHashes}) and moves back any that a row wants.
 *
 * **Crash points** (killed between any two steps, the next run finishes):
 * - phase 1, before the commit: nothing is deleted; a manifest saved in the
 *   quarantine whose row still exists is harmless (kept until the
 *   quarantine grace, restored only if files name it and its row is gone);
 * - phase 1, after the commit: done (the chunks' counts went with it);
 * - phase 2, during the moves or before the commit: the rows are still
 *   there (rolled back), some bytes are in the quarantine (on S3 perhaps in
 *   both places): the next run's sweep finds a row for them and moves them
 *   back;
 * - phase 2, after the commit, before the re-check: bytes in the quarantine
 *   and no row: the sweep moves them back if something wants them by then,
 *   else purges them after the quarantine grace;
 * - sweep, mid-restore (S3: copied back, not yet deleted): the next sweep
 *   restores again (a copy over an identical object), then deletes.
 *
 * Not covered: thumbnails of collected contents (`.thumbnails/…`, keyed by
 * `file_hash`) are left in place; OxiCloud's GC removes them through its hook.
 */
export class OxiContentGcRepository implements ContentGcRepository {
  readonly #db: Kysely<OxiCloudDatabase>;

  constructor(db: Kysely<OxiCloudDatabase>) {
    this.#db = db;
  }

  async listManifestCandidates(cutoff: Date, page: ContentGcPage): Promise<string[]> {
    const { rows } = await sql<{ file_hash: string }>`
      SELECT m.file_hash FROM storage.chunk_manifests m
       WHERE m.created_at < ${cutoff}
         AND (m.ref_count <= 0
              OR NOT EXISTS (SELECT 1 FROM storage.files f WHERE f.blob_hash = m.file_hash))
         AND (${page.after}::text IS NULL OR m.file_hash > ${page.after})
       ORDER BY m.file_hash
       LIMIT ${page.limit}`.execute(this.#db);
    return rows.map((r) => r.file_hash);
  }

  async collectManifests(
    fileHashes: readonly string[],
    cutoff: Date,
    beforeDelete: (doomed: readonly ChunkManifestRecord[]) => Promise<void>,
  ): Promise<ManifestCollectResult> {
    if (fileHashes.length === 0) return { deleted: [], referenced: [] };
    return this.#db.transaction().execute(async (trx) => {
      const { rows } = await sql<ManifestRow>`
        SELECT file_hash, chunk_hashes, chunk_sizes, total_size, content_type, ref_count
          FROM storage.chunk_manifests
         WHERE file_hash = ANY(${[...fileHashes]}::text[]) AND created_at < ${cutoff}
         ORDER BY file_hash
           FOR UPDATE`.execute(trx);
      if (rows.length === 0) return { deleted: [], referenced: [] };
      const named = await namedByFiles(
        trx,
        rows.map((r) => r.file_hash),
      );
      const referenced = rows
        .filter((r) => named.has(r.file_hash))
        .map((r) => ({ fileHash: r.file_hash, refCount: r.ref_count }));
      const doomed = rows.filter((r) => !named.has(r.file_hash)).map(toRecord);
      if (doomed.length === 0) return { deleted: [], referenced };
      await beforeDelete(doomed);
      await sql`
        DELETE FROM storage.chunk_manifests
         WHERE file_hash = ANY(${doomed.map((m) => m.fileHash)}::text[])`.execute(trx);
      // Each deleted manifest held one reference per distinct chunk.
      const lower = new Map<string, number>();
      for (const m of doomed) {
        for (const chunk of new Set(m.chunkHashes)) lower.set(chunk, (lower.get(chunk) ?? 0) + 1);
      }
      if (lower.size > 0) {
        const chunks = [...lower.keys()].sort();
        await sql`
          SELECT hash FROM storage.blobs WHERE hash = ANY(${chunks}::text[]) ORDER BY hash FOR UPDATE`.execute(
          trx,
        );
        await sql`
          UPDATE storage.blobs b
             SET ref_count = greatest(b.ref_count - d.n, 0),
                 orphaned_at = CASE WHEN b.ref_count - d.n <= 0 THEN now() ELSE b.orphaned_at END
            FROM unnest(${chunks}::text[], ${chunks.map((c) => lower.get(c)!)}::int[]) AS d(hash, n)
           WHERE b.hash = d.hash`.execute(trx);
      }
      return { deleted: doomed, referenced };
    });
  }

  async listBlobCandidates(cutoff: Date, page: ContentGcPage): Promise<string[]> {
    const { rows } = await sql<{ hash: string }>`
      SELECT hash FROM storage.blobs
       WHERE ref_count = 0 AND (orphaned_at IS NULL OR orphaned_at < ${cutoff})
         AND (${page.after}::text IS NULL OR hash > ${page.after})
       ORDER BY hash
       LIMIT ${page.limit}`.execute(this.#db);
    return rows.map((r) => r.hash);
  }

  async collectBlobs(
    hashes: readonly string[],
    cutoff: Date,
    moveBytes: (doomed: readonly CollectedBlob[]) => Promise<void>,
  ): Promise<BlobCollectResult> {
    if (hashes.length === 0) return { deleted: [], referenced: [] };
    return this.#db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ hash: string; size: string | number }>`
        SELECT hash, size FROM storage.blobs
         WHERE hash = ANY(${[...hashes]}::text[])
           AND ref_count = 0 AND (orphaned_at IS NULL OR orphaned_at < ${cutoff})
         ORDER BY hash
           FOR UPDATE`.execute(trx);
      if (rows.length === 0) return { deleted: [], referenced: [] };
      const locked = rows.map((r) => r.hash);
      const listed = await listedByManifests(trx, locked);
      const named = await namedByFiles(
        trx,
        locked.filter((h) => !listed.has(h)),
      );
      const referenced = locked.filter((h) => listed.has(h) || named.has(h));
      const doomed = rows
        .filter((r) => !listed.has(r.hash) && !named.has(r.hash))
        .map((r) => ({ hash: r.hash, size: bigintToNumber(r.size) }));
      if (doomed.length === 0) return { deleted: [], referenced };
      await moveBytes(doomed);
      await sql`DELETE FROM storage.blobs WHERE hash = ANY(${doomed.map((b) => b.hash)}::text[])`.execute(
        trx,
      );
      return { deleted: doomed, referenced };
    });
  }

  async wantedHashes(hashes: readonly string[]): Promise<Set<string>> {
    if (hashes.length === 0) return new Set();
    const { rows } = await sql<{ hash: string }>`
      SELECT h AS hash FROM unnest(${[...hashes]}::text[]) AS h
       WHERE EXISTS (SELECT 1 FROM storage.blobs b WHERE b.hash = h)
          OR EXISTS (SELECT 1 FROM storage.chunk_manifests m WHERE m.chunk_hashes @> ARRAY[h]::text[])
          OR EXISTS (SELECT 1 FROM storage.files f WHERE f.blob_hash = h)`.execute(this.#db);
    return new Set(rows.map((r) => r.hash));
  }

  async restoreManifest(record: ChunkManifestRecord): Promise<ManifestRestoreStatus> {
    return this.#db.transaction().execute(async (trx) => {
      const present = await sql`
        SELECT 1 FROM storage.chunk_manifests WHERE file_hash = ${record.fileHash}`.execute(trx);
      if (present.rows.length > 0) return 'present';
      const { rows } = await sql<{ n: string }>`
        SELECT count(*) AS n FROM storage.files WHERE blob_hash = ${record.fileHash}`.execute(trx);
      const files = bigintToNumber(rows[0]?.n ?? 0);
      if (files === 0) return 'unreferenced';
      const inserted = await sql`
        INSERT INTO storage.chunk_manifests
               (file_hash, chunk_hashes, chunk_sizes, total_size, chunk_count, content_type, ref_count)
        VALUES (${record.fileHash}, ${[...record.chunkHashes]}::text[], ${[...record.chunkSizes]}::bigint[],
                ${record.totalSize}, ${record.chunkHashes.length}, ${record.contentType}, ${files})
        ON CONFLICT (file_hash) DO NOTHING
        RETURNING file_hash`.execute(trx);
      if (inserted.rows.length === 0) return 'present';
      const sizes = new Map<string, number>();
      record.chunkHashes.forEach((hash, i) => {
        sizes.set(hash, record.chunkSizes[i] ?? 0);
      });
      const chunks = [...sizes.keys()].sort();
      if (chunks.length > 0) {
        await sql`
          INSERT INTO storage.blobs (hash, size, ref_count, content_type)
          SELECT d.hash, d.size, 1, NULL
            FROM unnest(${chunks}::text[], ${chunks.map((c) => sizes.get(c)!)}::bigint[]) AS d(hash, size)
           ORDER BY d.hash
          ON CONFLICT (hash) DO UPDATE
             SET ref_count = storage.blobs.ref_count + 1, orphaned_at = NULL`.execute(trx);
      }
      return 'restored';
    });
  }
}
