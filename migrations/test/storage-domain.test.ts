import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, migrationStatus, storageDomainFiles } from '../src/index.js';
import { recognise } from './recognise-on-pool.js';

/** Databases this file made, dropped at the end. */
const made: TestDatabase[] = [];

afterAll(async () => {
  await Promise.all(made.map((db) => db.drop()));
});

async function emptyDatabase(): Promise<TestDatabase> {
  const db = await createTestDatabase({ empty: true, max: 2 });
  made.push(db);
  return db;
}

/** What a refused migration must leave as it was: every table and function outside the system schemas, and the bookkeeping. */
async function footprint(db: TestDatabase) {
  const { rows: tables } = await db.pool.query(
    `SELECT table_schema || '.' || table_name AS name FROM information_schema.tables
      WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
  );
  const { rows: functions } = await db.pool.query(
    `SELECT n.nspname || '.' || p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname IN ('public', 'auth', 'storage', 'jobs') AND p.prokind = 'f'
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
      ORDER BY 1`,
  );
  const { rows: migrations } = await db.pool.query(
    'SELECT name, checksum, applied_at FROM public.oxicloud_migrations ORDER BY name',
  );
  const { rows: domain } = await db.pool.query('SELECT * FROM public.oxicloud_storage_domain');
  return { tables, functions, migrations, domain };
}

describe('migrate({ domain })', () => {
  it("oxicloud: OxiCloud's domain, the jobs schemas and the server's jobs table, no old-model file; recorded; up to date by its files", async () => {
    const db = await emptyDatabase();
    const result = await migrate(db.pool, { domain: 'oxicloud' });
    expect(result.error).toBeUndefined();
    expect(result.applied).toContain('0002_auth.sql');
    expect(result.applied).toContain('0010_job_registrations.sql');
    expect(result.applied).not.toContain('0003_storage_domain.sql');
    expect(result.applied.some((name) => name.startsWith('@oxicloud/recoverable/'))).toBe(true);
    const found = await recognise(db);
    expect(found.kind).toBe('engine');
    if (found.kind === 'engine') expect(found.era).toBe('drive-d7');
    const { rows } = await db.pool.query('SELECT domain FROM public.oxicloud_storage_domain');
    expect(rows).toEqual([{ domain: 'oxicloud' }]);
    const { rows: tables } = await db.pool.query(
      "SELECT to_regclass('jobs.job_registrations') IS NOT NULL AS registrations, to_regclass('jobs.recoverable_runs') IS NOT NULL AS runs, to_regprocedure('public.oxicloud_uuid_v7()') IS NULL AS no_uuid_v7",
    );
    expect(tables[0]).toEqual({ registrations: true, runs: true, no_uuid_v7: true });
    const status = await migrationStatus(db.pool, storageDomainFiles());
    expect(status).toMatchObject({ pending: [], changed: [], unknown: [] });
    expect(status.current).toBe(status.expected);
    const again = await migrate(db.pool, { domain: 'oxicloud' });
    expect(again.error).toBeUndefined();
    expect(again.applied).toEqual([]);
  });

  it('a database that recorded the old model (engine) is refused with DOMAIN_MISMATCH, writing nothing', async () => {
    const db = await emptyDatabase();
    expect((await migrate(db.pool)).error).toBeUndefined();
    await db.pool.query("UPDATE public.oxicloud_storage_domain SET domain = 'engine'");
    const before = await footprint(db);
    const result = await migrate(db.pool);
    expect(result.error?.code).toBe('DOMAIN_MISMATCH');
    expect(result.error?.message).toContain(
      'the engine\'s old storage model "engine" (recorded in public.oxicloud_storage_domain)',
    );
    expect(result.error?.message).toContain(
      'which this version no longer runs; nothing is migrated from it. Nothing was written',
    );
    expect(result.applied).toEqual([]);
    expect(await footprint(db)).toEqual(before);
  });

  it('a database migrated before the record is judged by its recorded files (and then recorded)', async () => {
    const db = await emptyDatabase();
    expect((await migrate(db.pool)).error).toBeUndefined();
    await db.pool.query('DROP TABLE public.oxicloud_storage_domain');
    expect((await migrate(db.pool)).error).toBeUndefined();
    const { rows } = await db.pool.query('SELECT domain FROM public.oxicloud_storage_domain');
    expect(rows).toEqual([{ domain: 'oxicloud' }]);
    await db.pool.query('DROP TABLE public.oxicloud_storage_domain');
    await db.pool.query(
      "INSERT INTO public.oxicloud_migrations (name, checksum) VALUES ('0003_storage_domain.sql', 'x')",
    );
    const refused = await migrate(db.pool);
    expect(refused.error?.code).toBe('DOMAIN_MISMATCH');
    expect(refused.error?.message).toContain("lists the engine's storage files");
    expect(
      (await db.pool.query("SELECT to_regclass('public.oxicloud_storage_domain') AS t")).rows[0]?.['t'],
    ).toBeNull();
  });
});
