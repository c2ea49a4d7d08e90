import { chmodSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, runCli } from './cli-process.js';
import { databaseCatalog } from './database-catalog.js';

/**
 * A database of the engine's old storage model (what an earlier version made:
 * `drives.owner_id`, `blobs.deleting_at`, `oxicloud_uuid_v7()`) met by this
 * version, whose default storage domain is OxiCloud's: refused before any
 * write, saying what it holds and how to start fresh; kept as it is with
 * `OXICLOUD_STORAGE_DOMAIN=engine`.
 */
describe('an old-model database at boot', () => {
  let db: TestDatabase;
  let before: string[];

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'engine', max: 2 });
    await db.pool.query(
      `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at, cursor)
       VALUES ('0190f5a0-0000-7000-8000-000000000001', 'files_consistency', 'Paused', now(), now(), '\\x01')`,
    );
    before = await databaseCatalog(db);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it.each([
    ['migrate'],
    ['serve'],
  ])('`oxijobs %s` on the default domain refuses it before any write: its paused run is named, and how to start fresh', async (command) => {
    const result = await runCli(
      [command],
      cleanEnv({
        DATABASE_URL: db.url,
        OXICLOUD_HTTP_PORT: String(await freePort()),
        OXICLOUD_LOG_FORMAT: 'json',
      }),
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('engine database of the old storage model');
    expect(result.stderr).toContain(
      "its 1 run (0 running, 1 paused) was recorded against that model, not OxiCloud's schema",
    );
    expect(result.stderr).toContain("the paused run's cursor is a place in that model's data");
    expect(result.stderr).toContain('does not migrate the old model');
    expect(result.stderr).toContain('nothing was written');
    expect(result.stderr).toContain('set OXICLOUD_STORAGE_DOMAIN=engine');
    expect(await databaseCatalog(db)).toEqual(before);
    const { rows } = await db.pool.query('SELECT status FROM jobs.recoverable_runs');
    expect(rows).toEqual([{ status: 'Paused' }]);
  });

  it('with OXICLOUD_STORAGE_DOMAIN=engine it is kept as it is (up to date, its paused run untouched)', async () => {
    const result = await runCli(
      ['migrate'],
      cleanEnv({ DATABASE_URL: db.url, OXICLOUD_STORAGE_DOMAIN: 'engine' }),
    );
    expect(result.stderr).not.toContain('oxijobs:');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^migrations: up to date/m);
    const { rows } = await db.pool.query('SELECT status FROM jobs.recoverable_runs');
    expect(rows).toEqual([{ status: 'Paused' }]);
  });
});

/** The embedded `.oxicloud` folder of an earlier version: the advice ("move the data folder aside") works as written. */
describe('an old-model embedded data folder', () => {
  let parent: string;
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    parent = join(tmpdir(), `oxijobs-old-model-${process.pid}-${Date.now()}`);
    mkdirSync(parent, { recursive: true });
    chmodSync(parent, 0o755); // the `postgres` user must enter it when running as root
    dataDir = join(parent, '.oxicloud');
    env = cleanEnv({ OXICLOUD_DATA_DIR: dataDir, OXICLOUD_EMBEDDED_POSTGRES_PORT: String(await freePort()) });
    const made = await runCli(['migrate'], { ...env, OXICLOUD_STORAGE_DOMAIN: 'engine' });
    expect(made.code).toBe(0);
  });
  afterAll(() => {
    rmSync(parent, { recursive: true, force: true });
  });

  it('is refused on the default domain; moved aside, a fresh folder starts on OxiCloud’s domain', async () => {
    const refused = await runCli(['migrate'], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('engine database of the old storage model');
    expect(refused.stderr).toContain('it holds no runs and no run findings');
    expect(refused.stderr).toContain('move the data folder aside');

    renameSync(dataDir, `${dataDir}.old-model`);
    const fresh = await runCli(['migrate'], env);
    expect(fresh.stderr).not.toContain('oxijobs:');
    expect(fresh.code).toBe(0);
    expect(fresh.stdout).toMatch(/^migrations: applied \d+ of \d+/m);
    const again = await runCli(['migrate'], { ...env, OXICLOUD_STORAGE_DOMAIN: 'engine' });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('OXICLOUD_STORAGE_DOMAIN=engine does not match this database');
  });
});
