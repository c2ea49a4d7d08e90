import type { OrphanBlobCandidate, OrphanBlobRepository, OrphanCollectResult } from '@oxicloud/tenants';
import { type Kysely, sql } from 'kysely';
import { bigintToNumber, type StorageDatabase } from './database.js';

interface BlobRow {
  hash: string;
  size: string;
  orphaned_at: Date;
}

function toCandidate(row: BlobRow): OrphanBlobCandidate {
  return { hash: row.hash, size: bigintToNumber(row.size), orphanedAt: row.orphaned_at };
}

/**
 * {@link OrphanBlobRepository} on `storage.blobs`.
 *
 * `collectOrphans` is the safe part: in one transaction it re-selects the
 * candidates with `ref_count = 0 AND orphaned_at < cutoff … FOR UPDATE`
 * (in hash order, so two collectors cannot deadlock). A file insert that
 * committed meanwhile has bumped `ref_count`, so Postgres re-checks the row
 * under the lock and leaves it out; a file insert still in flight holds the
 * row lock, so the SELECT waits for it and then re-checks. Rows locked here
 * make a later file insert's trigger wait until the bytes and row are gone.
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
      .$if(options.after !== null, (qb) => qb.where('hash', '>', options.after as string))
      .orderBy('hash')
      .limit(options.limit)
      .execute();
    return rows.map((r) => toCandidate(r as BlobRow));
  }

  async collectOrphans(
    hashes: readonly string[],
    cutoff: Date,
    deleteBytes: (locked: readonly OrphanBlobCandidate[]) => Promise<readonly string[]>,
  ): Promise<OrphanCollectResult> {
    if (hashes.length === 0) return { locked: [], deleted: [] };
    return this.#db.transaction().execute(async (trx) => {
      const { rows } = await sql<BlobRow>`
        SELECT hash, size, orphaned_at FROM storage.blobs
         WHERE hash = ANY(${[...hashes]}::text[]) AND ref_count = 0 AND orphaned_at < ${cutoff}
         ORDER BY hash
           FOR UPDATE`.execute(trx);
      const locked = rows.map(toCandidate);
      if (locked.length === 0) return { locked, deleted: [] };
      const lockedHashes = new Set(locked.map((b) => b.hash));
      const gone = (await deleteBytes(locked)).filter((h) => lockedHashes.has(h));
      if (gone.length === 0) return { locked, deleted: [] };
      const deleted = await sql<{ hash: string }>`
        DELETE FROM storage.blobs WHERE hash = ANY(${gone}::text[]) AND ref_count = 0
        RETURNING hash`.execute(trx);
      return { locked, deleted: deleted.rows.map((r) => r.hash).sort() };
    });
  }
}
