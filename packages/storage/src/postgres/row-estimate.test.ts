import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OxiCloudDatabase } from '../oxicloud/database.js';
import { estimateOxiRows } from '../oxicloud/oxi-tree-support.js';
import { estimateRowsOf } from './row-estimate.js';

// estimateRowsOf sends raw SQL only; it is the same function on either domain (estimateOxiRows on OxiCloud's).
describe('estimateRowsOf (on OxiCloud’s storage.blobs)', () => {
  let db: TestDatabase;
  let kdb: Kysely<OxiCloudDatabase>;
  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    kdb = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
  });
  afterAll(async () => {
    await db.drop();
  });

  it('counts a table that was never analysed, so a first run still has a total', async () => {
    await db.pool.query(
      `INSERT INTO storage.blobs (hash, size)
       SELECT lpad(to_hex(g), 64, '0'), g FROM generate_series(1, 250) g`,
    );
    expect(await estimateOxiRows(kdb, ['storage.blobs'])).toBe(250);
  });

  it('uses the planner estimate once the table is analysed', async () => {
    await db.pool.query('ANALYZE storage.blobs');
    await db.pool.query(`DELETE FROM storage.blobs WHERE size <= 50`);
    // The estimate is as of the last ANALYZE (250), not an exact count (200).
    expect(await estimateOxiRows(kdb, ['storage.blobs'])).toBe(250);
    expect(await estimateRowsOf(kdb as never, ['storage.blobs'])).toBe(250);
  });
});
