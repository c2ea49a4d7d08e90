import {
  createOxiCloudDatabase,
  readOnlyOxiCloudRole,
  type TestDatabase,
  type TestRole,
} from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isStorageError } from '../storage-error.js';
import type { OxiCloudDatabase } from './database.js';
import { OxiQueueBacklogReader } from './oxi-queue-backlog.js';

let db: TestDatabase;
let role: TestRole;
let roPool: pg.Pool;
let ro: Kysely<OxiCloudDatabase>;

/** `n` rows into the tree-ETag queue, as OxiCloud's triggers (or a forced bump, fact sheet §4) write them; their ids. */
async function enqueueTreeBumps(n: number): Promise<number[]> {
  const { rows } = await db.pool.query<{ id: string }>(
    `INSERT INTO storage.tree_etag_dirty (lpath) SELECT 'r'::ltree FROM generate_series(1, $1) RETURNING id`,
    [n],
  );
  return rows.map((r) => Number(r.id));
}

/**
 * Issue 32 (fact sheet §12 item 26): the backlog of OxiCloud's two queues,
 * read on a database as OxiCloud leaves it through the README's read-only
 * sidecar role (SELECT on OxiCloud's schemas, nothing else).
 */
describe('OxiQueueBacklogReader', () => {
  beforeAll(async () => {
    db = await createOxiCloudDatabase({ max: 2 });
    role = await readOnlyOxiCloudRole(db, 'oxijobs');
    roPool = new pg.Pool({ connectionString: role.url, max: 2 });
    ro = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: roPool }) });
  });

  afterAll(async () => {
    await ro?.destroy();
    await role?.drop();
    await db?.drop();
  });

  beforeEach(async () => {
    await db.pool.query('DELETE FROM storage.tree_etag_dirty; DELETE FROM storage.search_index_dirty');
  });

  it('reads both queues as the read-only role: empty, then rows counted exactly with the lowest id', async () => {
    const reader = new OxiQueueBacklogReader(ro);
    expect(await reader.read()).toEqual([
      expect.objectContaining({
        queue: 'tree_etag_dirty',
        table: 'storage.tree_etag_dirty',
        rows: 0,
        exact: true,
        oldestId: null,
      }),
      expect.objectContaining({
        queue: 'search_index_dirty',
        table: 'storage.search_index_dirty',
        rows: 0,
        exact: true,
        oldestId: null,
      }),
    ]);

    const ids = await enqueueTreeBumps(3);
    await db.pool.query(
      `INSERT INTO storage.search_index_dirty (file_id, op)
       VALUES (gen_random_uuid(), 'upsert'), (gen_random_uuid(), 'delete')`,
    );
    const [tree, search] = await reader.read();
    expect(tree).toMatchObject({ rows: 3, exact: true, oldestId: ids[0] });
    expect(tree?.drainer).toMatch(/TreeEtagFlushService/);
    expect(search).toMatchObject({ rows: 2, exact: true });
    expect(search?.drainer).toMatch(/ContentIndexWorker/);

    // The drainer takes the oldest row: the lowest id moves.
    await db.pool.query('DELETE FROM storage.tree_etag_dirty WHERE id = $1', [ids[0]]);
    expect((await reader.read())[0]).toMatchObject({ rows: 2, exact: true, oldestId: ids[1] });
    // The role really is read-only on OxiCloud's tables.
    await expect(roPool.query('DELETE FROM storage.tree_etag_dirty')).rejects.toThrow(/permission denied/);
  });

  it('above the count cap: the planner estimate, at least the cap + 1 and at most the id span', async () => {
    const reader = new OxiQueueBacklogReader(ro, { countCap: 2 });
    // Analysed while empty (reltuples 0), then 5 rows: the estimate is below what was counted, so the cap + 1.
    await db.pool.query('VACUUM (ANALYZE) storage.tree_etag_dirty');
    const ids = await enqueueTreeBumps(5);
    expect((await reader.read())[0]).toMatchObject({ rows: 3, exact: false, oldestId: ids[0] });
    // Analysed: the estimate is the table's.
    await db.pool.query('ANALYZE storage.tree_etag_dirty');
    expect((await reader.read())[0]).toMatchObject({ rows: 5, exact: false });
    // A stale estimate above what the ids can hold is cut to the span (max - min + 1).
    await db.pool.query('DELETE FROM storage.tree_etag_dirty WHERE id = ANY($1::bigint[])', [ids.slice(3)]);
    expect((await reader.read())[0]).toMatchObject({ rows: 3, exact: false, oldestId: ids[0] });
    // At or under the cap, the count is exact again.
    await db.pool.query('DELETE FROM storage.tree_etag_dirty WHERE id = $1', [ids[0]]);
    expect((await reader.read())[0]).toMatchObject({ rows: 2, exact: true, oldestId: ids[1] });
  });

  it('refuses a count cap out of range, naming it', () => {
    for (const countCap of [0, 1.5, 2_000_000]) {
      let error: unknown;
      try {
        new OxiQueueBacklogReader(ro, { countCap });
      } catch (e) {
        error = e;
      }
      expect(isStorageError(error, 'INVALID_CONFIG'), String(countCap)).toBe(true);
      expect((error as Error).message).toMatch(/countCap must be a whole number of rows from 1 to 1000000/);
    }
  });
});
