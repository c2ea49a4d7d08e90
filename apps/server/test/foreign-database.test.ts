import {
  createOxiCloudDatabase,
  createTestDatabase,
  dumpDatabase,
  type TestDatabase,
} from '@oxicloud/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, runCli } from './cli-process.js';

const made: TestDatabase[] = [];
afterAll(async () => {
  await Promise.all(made.map((db) => db.drop()));
});

/**
 * What `oxijobs migrate` does with a database given as DATABASE_URL, decided
 * from its catalog before any write: OxiCloud's own gets sidecar mode (the
 * engine's own schema only); an empty one and one that is something else are
 * refused and left as they were.
 */
describe('a database given as DATABASE_URL', () => {
  it("OxiCloud's own: `oxijobs migrate` creates only the engine's schema oxijobs; every other schema and _sqlx_migrations dump the same", async () => {
    const db = await createOxiCloudDatabase({ max: 2 });
    made.push(db);
    const before = await dumpDatabase(db.pool);
    const result = await runCli(['migrate'], cleanEnv({ DATABASE_URL: db.url, OXICLOUD_LOG_FORMAT: 'json' }));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/beside OxiCloud in schema oxijobs/);
    expect(result.stderr).toContain('"event":"database.sidecar"');
    expect(await dumpDatabase(db.pool, { excludeSchemas: ['oxijobs'] })).toBe(before);
    const { rows } = await db.pool.query(
      "SELECT count(*)::int AS n FROM pg_namespace WHERE nspname IN ('jobs', 'oxijobs')",
    );
    expect(rows[0].n).toBe(1);
  });

  it.each([
    ['seed', '--users', '2', '--files-per-user', '5'],
    ['users', 'set-email', 'admin', 'ops@example.org'],
  ])("OxiCloud's own: `oxijobs %s` is refused before any write (the engine creates and changes no user there)", async (...args) => {
    const db = await createOxiCloudDatabase({ max: 2 });
    made.push(db);
    const before = await dumpDatabase(db.pool);
    const result = await runCli(args, cleanEnv({ DATABASE_URL: db.url, OXICLOUD_LOG_FORMAT: 'json' }));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('OxiCloud database (public._sqlx_migrations: 69 migrations');
    expect(result.stderr).toContain("never runs on OxiCloud's own database");
    expect(await dumpDatabase(db.pool)).toBe(before);
  });

  it('an empty one is refused (an OxiCloud not yet started may be meant to own it), naming the explicit command, and left empty', async () => {
    const db = await createTestDatabase({ empty: true, max: 2 });
    made.push(db);
    const before = await dumpDatabase(db.pool);
    for (const command of ['migrate', 'serve']) {
      const result = await runCli([command], cleanEnv({ DATABASE_URL: db.url, OXICLOUD_LOG_FORMAT: 'json' }));
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('empty database');
      expect(result.stderr).toContain('oxijobs migrate --create-storage-domain');
      expect(await dumpDatabase(db.pool)).toBe(before);
    }
  });

  it('one that is something else is refused, naming what it found, and left unchanged', async () => {
    const db = await createTestDatabase({ empty: true, max: 2 });
    made.push(db);
    await db.pool.query('CREATE SCHEMA shop; CREATE TABLE shop.orders (id int PRIMARY KEY)');
    const before = await dumpDatabase(db.pool);
    const result = await runCli(['migrate'], cleanEnv({ DATABASE_URL: db.url, OXICLOUD_LOG_FORMAT: 'json' }));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('unrecognised database (found schema shop, shop.orders)');
    expect(result.stderr).toContain('nothing was written');
    expect(await dumpDatabase(db.pool)).toBe(before);
  });
});
