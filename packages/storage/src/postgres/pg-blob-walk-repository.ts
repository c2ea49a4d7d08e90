import type { BlobRow, BlobWalkRepository } from '@oxicloud/tenants';
import type { Kysely } from 'kysely';
import { bigintToNumber, type StorageDatabase } from './database.js';

/**
 * {@link BlobWalkRepository} on `storage.blobs`: keyset pages in hash order
 * over the primary key (`WHERE hash > $after ORDER BY hash LIMIT $n`), so a
 * page costs the same at the start and at the end of a million-row walk.
 * The catch-up pages (`created_at >= since`) walk the same index and filter,
 * so the whole catch-up pass reads the index once however few rows match.
 */
export class PgBlobWalkRepository implements BlobWalkRepository {
  readonly #db: Kysely<StorageDatabase>;

  constructor(db: Kysely<StorageDatabase>) {
    this.#db = db;
  }

  async listBlobsAfter(afterHash: string | null, limit: number): Promise<BlobRow[]> {
    const rows = await this.#db
      .selectFrom('storage.blobs')
      .select(['hash', 'size'])
      .$if(afterHash !== null, (qb) => qb.where('hash', '>', afterHash as string))
      .orderBy('hash')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ hash: r.hash, size: bigintToNumber(r.size) }));
  }

  async listBlobsCreatedSince(since: Date, afterHash: string | null, limit: number): Promise<BlobRow[]> {
    const rows = await this.#db
      .selectFrom('storage.blobs')
      .select(['hash', 'size'])
      .where('created_at', '>=', since)
      .$if(afterHash !== null, (qb) => qb.where('hash', '>', afterHash as string))
      .orderBy('hash')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ hash: r.hash, size: bigintToNumber(r.size) }));
  }

  async countBlobs(): Promise<number> {
    const row = await this.#db
      .selectFrom('storage.blobs')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    return bigintToNumber(row.n);
  }
}
