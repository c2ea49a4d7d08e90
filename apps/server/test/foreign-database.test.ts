import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, runCli } from './cli-process.js';
import { databaseCatalog } from './database-catalog.js';

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

describe("OxiCloud's own database given as DATABASE_URL", () => {
  let db: TestDatabase;
  let before: string[];

  beforeAll(async () => {
    db = await createTestDatabase({ empty: true, max: 2 });
    await db.pool.query(OXICLOUD_CATALOG);
    before = await databaseCatalog(db);
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
    expect(await databaseCatalog(db)).toEqual(before);
    expect(before).not.toContain('r public.oxicloud_migrations');
  });
});
