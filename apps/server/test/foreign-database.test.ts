import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, runCli } from './cli-process.js';

/**
 * Just enough of OxiCloud's catalog to be recognised as OxiCloud's database:
 * sqlx's bookkeeping with one row, and the storage tables.
 */
const OXICLOUD_CATALOG = `
  CREATE TABLE public._sqlx_migrations (
    version bigint PRIMARY KEY, description text NOT NULL, installed_on timestamptz NOT NULL DEFAULT now(),
    success boolean NOT NULL, checksum bytea NOT NULL, execution_time bigint NOT NULL);
  INSERT INTO public._sqlx_migrations (version, description, success, checksum, execution_time)
       VALUES (20260307000000, 'initial schema', true, '\\x00', 1);
  CREATE SCHEMA auth;
  CREATE SCHEMA storage;
  CREATE TABLE auth.users (id uuid PRIMARY KEY);
  CREATE TABLE storage.folders (id uuid PRIMARY KEY);
  CREATE TABLE storage.files (id uuid PRIMARY KEY, drive_id uuid NOT NULL);`;

/** Every schema, relation, function and index of the database, for a before/after comparison. */
async function catalog(db: TestDatabase): Promise<string[]> {
  const { rows } = await db.pool.query<{ item: string }>(`
    SELECT 'schema ' || nspname AS item FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'
    UNION ALL
    SELECT c.relkind::text || ' ' || n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
    UNION ALL
    SELECT 'function ' || n.nspname || '.' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
    UNION ALL
    SELECT 'extension ' || extname FROM pg_extension
    ORDER BY 1`);
  return rows.map((r) => r.item);
}

describe("OxiCloud's own database given as DATABASE_URL", () => {
  let db: TestDatabase;
  let before: string[];

  beforeAll(async () => {
    db = await createTestDatabase({ empty: true, max: 2 });
    await db.pool.query(OXICLOUD_CATALOG);
    before = await catalog(db);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it.each([
    ['migrate'],
    ['token', '--user', 'admin'],
  ])('`oxijobs %s` refuses it before any write, naming what it found, and leaves its catalog unchanged', async (...args) => {
    const result = await runCli(args, cleanEnv({ DATABASE_URL: db.url, OXICLOUD_LOG_FORMAT: 'json' }));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('OxiCloud database (public._sqlx_migrations: 1 migration');
    expect(result.stderr).toContain('nothing was written');
    expect(await catalog(db)).toEqual(before);
    expect(before).not.toContain('r public.oxicloud_migrations');
  });
});
