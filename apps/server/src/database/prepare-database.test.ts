import {
  CapturingLogger,
  createOxiCloudDatabase,
  createTestDatabase,
  dumpDatabase,
  OXICLOUD_LATEST_MIGRATION,
  readOnlyOxiCloudRole,
  type TestDatabase,
} from '@oxicloud/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMigrations } from './prepare-database.js';

describe('applyMigrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('the first boot says "applied N of M", a later one "up to date (M)": the same M', async () => {
    const first = new CapturingLogger();
    const { applied } = await applyMigrations(db.pool, first, { source: 'embedded' });
    const total = applied.length;
    expect(total).toBeGreaterThan(10);
    // The packages' schema steps are counted too.
    expect(applied.some((name) => name.startsWith('@oxicloud/recoverable/'))).toBe(true);
    expect(first.events('database.migrated')[0]?.message).toBe(`applied ${total} of ${total} migration(s)`);

    const later = new CapturingLogger();
    await applyMigrations(db.pool, later, { source: 'embedded' });
    const line = later.events('database.migrated')[0];
    expect(line?.message).toBe(`database schema up to date (${total} migration(s))`);
    expect(line?.fields).toMatchObject({ applied: [], already_applied: total, total });
  });
});

describe('applyMigrations decides the mode from the catalog, before any write', () => {
  const made: TestDatabase[] = [];
  afterAll(async () => {
    await Promise.all(made.map((db) => db.drop()));
  });
  const fresh = async (make: () => Promise<TestDatabase>) => {
    const db = await make();
    made.push(db);
    return db;
  };

  it('an empty DATABASE_URL is refused (an OxiCloud not yet started may own it) unless told, and left empty', async () => {
    const db = await fresh(() => createTestDatabase({ empty: true, max: 2 }));
    const before = await dumpDatabase(db.pool);
    const refused = applyMigrations(db.pool, new CapturingLogger(), { source: 'DATABASE_URL' });
    await expect(refused).rejects.toMatchObject({ code: 'DATABASE_REFUSED' });
    await expect(refused).rejects.toThrow(
      /empty database.*oxijobs migrate --create-storage-domain.*Nothing was written/,
    );
    expect(await dumpDatabase(db.pool)).toBe(before);
    const told = await applyMigrations(db.pool, new CapturingLogger(), {
      source: 'DATABASE_URL',
      createStorageDomain: true,
    });
    expect(told.mode).toEqual({ kind: 'owned', engineSchema: 'jobs' });
  });

  it("OxiCloud's database gets sidecar mode: the engine's own schema only; seed and users are refused first", async () => {
    const db = await fresh(() => createOxiCloudDatabase({ max: 2 }));
    const before = await dumpDatabase(db.pool);
    await expect(
      applyMigrations(db.pool, new CapturingLogger(), {
        source: 'DATABASE_URL',
        refuseBesideOxiCloud: '`oxijobs seed` writes users, drives, folders and files',
      }),
    ).rejects.toThrow(/OxiCloud database .*`oxijobs seed` writes users.*nothing was written/);
    expect(await dumpDatabase(db.pool)).toBe(before);
    const logger = new CapturingLogger();
    const { mode } = await applyMigrations(db.pool, logger, { source: 'DATABASE_URL' });
    expect(mode).toMatchObject({
      kind: 'sidecar',
      engineSchema: 'oxijobs',
      oxicloudLatest: OXICLOUD_LATEST_MIGRATION,
      newerOxiCloud: false,
      privileges: { canRead: true, missingWrites: [] },
    });
    expect(logger.events('database.sidecar')[0]?.message).toMatch(/writes only its schema oxijobs/);
    expect(await dumpDatabase(db.pool, { excludeSchemas: ['oxijobs'] })).toBe(before);
  });

  it("a read-only role (SELECT on OxiCloud's schemas, a schema of its own a DBA made) migrates its schema and is said read-only", async () => {
    const db = await fresh(() => createOxiCloudDatabase({ max: 2 }));
    const { role, url, drop } = await readOnlyOxiCloudRole(db, 'oxijobs');
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    try {
      const logger = new CapturingLogger();
      const { mode } = await applyMigrations(pool, logger, { source: 'DATABASE_URL' });
      expect(mode).toMatchObject({ kind: 'sidecar', privileges: { role, canRead: true } });
      if (mode.kind !== 'sidecar') throw new Error('not sidecar');
      expect(mode.privileges.missingWrites).toContain('storage.files: UPDATE');
      expect(logger.events('database.role')[0]?.message).toMatch(
        new RegExp(
          `database role ${role} reads OxiCloud's tables and is read-only for OxiCloud .*repairs and write jobs are refused`,
        ),
      );
    } finally {
      await pool.end();
      await drop();
    }
  });

  it('a newer OxiCloud is said at boot', async () => {
    const db = await fresh(() => createOxiCloudDatabase({ max: 2 }));
    await db.pool.query(
      "INSERT INTO public._sqlx_migrations VALUES (20270101000000, 'later', now(), true, '\\x00', 1)",
    );
    const logger = new CapturingLogger();
    const { mode } = await applyMigrations(db.pool, logger, { source: 'DATABASE_URL' });
    expect(mode).toMatchObject({ kind: 'sidecar', newerOxiCloud: true, oxicloudLatest: 20270101000000 });
    expect(logger.events('database.oxicloud_newer')[0]?.message).toMatch(/newer than the 20260921000000/);
  });

  it('a database that is something else is refused, naming what it found, and left unchanged', async () => {
    const db = await fresh(() => createTestDatabase({ empty: true, max: 2 }));
    await db.pool.query('CREATE SCHEMA shop; CREATE TABLE shop.orders (id int)');
    const before = await dumpDatabase(db.pool);
    await expect(applyMigrations(db.pool, new CapturingLogger(), { source: 'DATABASE_URL' })).rejects.toThrow(
      /unrecognised database \(found schema shop, shop\.orders\).*nothing was written/,
    );
    expect(await dumpDatabase(db.pool)).toBe(before);
  });
});
