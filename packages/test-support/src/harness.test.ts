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
    await a.pool.query("INSERT INTO auth.users (username, role) VALUES ('only-in-a', 'user')");
    const inA = await a.pool.query('SELECT count(*)::int AS n FROM auth.users');
    const inB = await b.pool.query('SELECT count(*)::int AS n FROM auth.users');
    expect(inA.rows[0].n).toBe(1);
    expect(inB.rows[0].n).toBe(0);
  });
});
