import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './index.js';

describe('test harness', () => {
  let a: TestDatabase;
  let b: TestDatabase;
  beforeAll(async () => {
    a = await createTestDatabase();
    b = await createTestDatabase();
  });
  afterAll(async () => {
    await a.drop();
    await b.drop();
  });

  it('gives each caller its own migrated database', async () => {
    expect(a.name).not.toBe(b.name);
    await a.pool.query(
      "INSERT INTO auth.users (username, email, role) VALUES ('only-in-a', 'only-in-a@example.org', 'user')",
    );
    const inA = await a.pool.query('SELECT count(*)::int AS n FROM auth.users');
    const inB = await b.pool.query('SELECT count(*)::int AS n FROM auth.users');
    expect(inA.rows[0].n).toBe(1);
    expect(inB.rows[0].n).toBe(0);
  });
});

describe("test harness, OxiCloud's storage domain", () => {
  let a: TestDatabase;
  let b: TestDatabase;
  beforeAll(async () => {
    // Two at once: the template is made once, under its lock.
    [a, b] = await Promise.all([
      createTestDatabase({ domain: 'oxicloud' }),
      createTestDatabase({ domain: 'oxicloud' }),
    ]);
  });
  afterAll(async () => {
    await a.drop();
    await b.drop();
  });

  it("gives each caller its own database with OxiCloud's tables and the packages' schemas", async () => {
    await a.pool.query("INSERT INTO auth.users (email, role) VALUES ('only-in-a@example.org', 'user')");
    const inA = await a.pool.query('SELECT count(*)::int AS n FROM auth.users');
    const inB = await b.pool.query('SELECT count(*)::int AS n FROM auth.users');
    expect(inA.rows[0].n).toBe(1);
    expect(inB.rows[0].n).toBe(0);
    const { rows } = await b.pool.query<{ t: string }>(
      `SELECT to_regclass('storage.chunk_manifests')::text AS t
       UNION ALL SELECT to_regclass('jobs.recoverable_runs')::text
       UNION ALL SELECT column_name FROM information_schema.columns
        WHERE table_schema = 'storage' AND table_name = 'drives' AND column_name = 'owner_id'`,
    );
    expect(rows.map((r) => r.t)).toEqual(['storage.chunk_manifests', 'jobs.recoverable_runs']);
  });
});
