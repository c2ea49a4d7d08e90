import type { BlobRow, BlobWalkRepository } from '@oxicloud/tenants';
import type { Kysely } from 'kysely';
import { bigintToNumber } from '../postgres/database.js';
import type { OxiCloudDatabase } from './database.js';

/**
 * {@link BlobWalkRepository} on OxiCloud's `storage.blobs`: every blob row
 * (CDC chunks, one-chunk files' shared hash, legacy whole-file blobs) in
 * hash order, for `storage_migration` and deep verify. The rows are exactly
 * the objects of the blob store (fact sheet §7 "Object naming");
 * `storage.chunk_manifests` rows have no object and are never listed. Keyset
 * pages over the primary key (`WHERE hash > $after ORDER BY hash LIMIT $n`);
 * the catch-up pages (`created_at >= since`) walk
 * the same index and filter.
 */
export class OxiBlobWalkRepository implements BlobWalkRepository {
  readonly #db: Kysely<OxiCloudDatabase>;

  constructor(db: Kysely<OxiCloudDatabase>) {
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
