import type {
  OrphanBlobCandidate,
  OrphanBlobRepository,
  OrphanFinishResult,
  OrphanMarkResult,
} from '@oxicloud/tenants';
import { type Kysely, sql, type Transaction } from 'kysely';
import { bigintToNumber, type StorageDatabase } from './database.js';

interface BlobRow {
  hash: string;
  size: string;
  orphaned_at: Date | null;
}

function toCandidate(row: BlobRow): OrphanBlobCandidate {
  return { hash: row.hash, size: bigintToNumber(row.size), orphanedAt: row.orphaned_at };
}

/** Those of `hashes` that some row of `storage.files` references (index lookups on `files_blob_idx`). */
async function referencedHashes(
  trx: Transaction<StorageDatabase>,
  hashes: readonly string[],
): Promise<Set<string>> {
  const { rows } = await sql<{ hash: string }>`
    SELECT h AS hash FROM unnest(${[...hashes]}::text[]) AS h
     WHERE EXISTS (SELECT 1 FROM storage.files f WHERE f.blob_hash = h)`.execute(trx);
  return new Set(rows.map((r) => r.hash));
}

/**
 * {@link OrphanBlobRepository} on `storage.blobs`, implementing the deletion
 * protocol of `0007_blob_deletion_protocol.sql`.
 *
 * `markForDeletion` locks the candidates with `ref_count = 0 AND
 * orphaned_at < cutoff AND deleting_at IS NULL … FOR UPDATE` (hash order,
 * so two collectors cannot deadlock). A file insert that committed
 * meanwhile has bumped `ref_count`, so Postgres re-checks the row under the
 * lock and leaves it out; one still in flight holds the row lock (its
 * trigger locks the rows it references), so the SELECT waits and re-checks.
 * Then, in a new statement that sees everything committed before the lock,
 * the files index is asked whether any file references the hash: `ref_count`
 * alone is never trusted. Marked rows are committed before any byte goes.
 *
 * `finishDeletion` locks the marked rows, deletes bytes, then rows. An
 * upload waiting to revive one of them (`reserveBlob`) waits on that lock.
 */
export class PgOrphanBlobRepository implements OrphanBlobRepository {
  readonly #db: Kysely<StorageDatabase>;

  constructor(db: Kysely<StorageDatabase>) {
    this.#db = db;
  }

  async listOrphanCandidates(
    cutoff: Date,
    options: { readonly after: string | null; readonly limit: number },
  ): Promise<OrphanBlobCandidate[]> {
    const rows = await this.#db
      .selectFrom('storage.blobs')
      .select(['hash', 'size', 'orphaned_at'])
      .where('ref_count', '=', 0)
      .where('orphaned_at', '<', cutoff)
      .where('deleting_at', 'is', null)
      .$if(options.after !== null, (qb) => qb.where('hash', '>', options.after as string))
      .orderBy('hash')
      .limit(options.limit)
      .execute();
    return rows.map((r) => toCandidate(r as BlobRow));
  }

  async listMarked(options: {
    readonly after: string | null;
    readonly limit: number;
  }): Promise<OrphanBlobCandidate[]> {
    const rows = await this.#db
      .selectFrom('storage.blobs')
      .select(['hash', 'size', 'orphaned_at'])
      .where('deleting_at', 'is not', null)
      .$if(options.after !== null, (qb) => qb.where('hash', '>', options.after as string))
      .orderBy('hash')
      .limit(options.limit)
      .execute();
    return rows.map((r) => toCandidate(r as BlobRow));
  }

  async markForDeletion(hashes: readonly string[], cutoff: Date): Promise<OrphanMarkResult> {
    if (hashes.length === 0) return { marked: [], referenced: [] };
    return this.#db.transaction().execute(async (trx) => {
      const { rows } = await sql<BlobRow>`
        SELECT hash, size, orphaned_at FROM storage.blobs
         WHERE hash = ANY(${[...hashes]}::text[]) AND ref_count = 0 AND orphaned_at < ${cutoff}
           AND deleting_at IS NULL
         ORDER BY hash
           FOR UPDATE`.execute(trx);
      const locked = rows.map(toCandidate);
      if (locked.length === 0) return { marked: [], referenced: [] };
      const referenced = await referencedHashes(
        trx,
        locked.map((b) => b.hash),
      );
      const marked = locked.filter((b) => !referenced.has(b.hash));
      if (marked.length > 0) {
        await sql`
          UPDATE storage.blobs SET deleting_at = now()
           WHERE hash = ANY(${marked.map((b) => b.hash)}::text[])`.execute(trx);
      }
      return { marked, referenced: [...referenced].sort() };
    });
  }

  async finishDeletion(
    hashes: readonly string[],
    deleteBytes: (locked: readonly OrphanBlobCandidate[]) => Promise<readonly string[]>,
  ): Promise<OrphanFinishResult> {
    if (hashes.length === 0) return { locked: [], deleted: [], referenced: [] };
    return this.#db.transaction().execute(async (trx) => {
      const { rows } = await sql<BlobRow>`
        SELECT hash, size, orphaned_at FROM storage.blobs
         WHERE hash = ANY(${[...hashes]}::text[]) AND deleting_at IS NOT NULL
         ORDER BY hash
           FOR UPDATE`.execute(trx);
      const locked = rows.map(toCandidate);
      if (locked.length === 0) return { locked, deleted: [], referenced: [] };
      // Defence in depth: the triggers refuse references to marked rows, but a
      // row referenced anyway (triggers bypassed) is unmarked, never deleted.
      const referenced = await referencedHashes(
        trx,
        locked.map((b) => b.hash),
      );
      if (referenced.size > 0) {
        await sql`
          UPDATE storage.blobs SET deleting_at = NULL
           WHERE hash = ANY(${[...referenced]}::text[])`.execute(trx);
      }
      const doomed = locked.filter((b) => !referenced.has(b.hash));
      const doomedHashes = new Set(doomed.map((b) => b.hash));
      const gone = doomed.length === 0 ? [] : (await deleteBytes(doomed)).filter((h) => doomedHashes.has(h));
      if (gone.length === 0) return { locked, deleted: [], referenced: [...referenced].sort() };
      const deleted = await sql<{ hash: string }>`
        DELETE FROM storage.blobs WHERE hash = ANY(${gone}::text[]) AND deleting_at IS NOT NULL
        RETURNING hash`.execute(trx);
      return { locked, deleted: deleted.rows.map((r) => r.hash).sort(), referenced: [...referenced].sort() };
    });
  }
}
