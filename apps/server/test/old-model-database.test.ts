import { chmodSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  OLD_MODEL_PAUSED_RUN_ID,
  oldModelDatabaseSql,
} from '../../../migrations/test/fixtures/old-model-database.js';
import { loadConfig } from '../src/config/server-config.js';
import { startOrReuseEmbeddedPostgres } from '../src/database/embedded-postgres.js';
import { cleanEnv, runCli } from './cli-process.js';
import { databaseCatalog } from './database-catalog.js';
import { capturingLogger } from './fault-support.js';

/** What the refusal says besides what the database holds: the old model is gone, nothing migrated, an earlier version reads it. */
function expectRefusal(stderr: string): void {
  expect(stderr).toContain('engine database of the old storage model');
  expect(stderr).toContain("This version no longer runs the engine's old storage model");
  expect(stderr).toContain(
    "migrates nothing of the old model's data, runs, findings or cursors; nothing was written",
  );
  expect(stderr).toContain('move the data folder aside');
  expect(stderr).toContain(
    'An earlier version, one from before issue 30 removed the old model, can still read this database as it is',
  );
  expect(stderr).not.toContain('OXICLOUD_STORAGE_DOMAIN=engine');
}

/**
 * A database of the engine's old storage model (what an earlier version
 * made: `drives.owner_id`, `blobs.deleting_at`, `oxicloud_uuid_v7()`; built
 * here from `migrations/test/fixtures/old-model-database.ts`) met by this
 * version, which no longer runs that model: refused before any write, saying
 * what it holds, how to start fresh and that an earlier version reads it.
 */
describe('an old-model database at boot', () => {
  let db: TestDatabase;
  let before: string[];

  beforeAll(async () => {
    db = await createTestDatabase({ empty: true, max: 2 });
    await db.pool.query(oldModelDatabaseSql({ pausedRun: true }));
    before = await databaseCatalog(db);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it.each([
    ['migrate'],
    ['serve'],
  ])('`oxijobs %s` refuses it before any write: its paused run is named, and how to start fresh', async (command) => {
    const result = await runCli(
      [command],
      cleanEnv({
        DATABASE_URL: db.url,
        OXICLOUD_HTTP_PORT: String(await freePort()),
        OXICLOUD_LOG_FORMAT: 'json',
      }),
    );
    expect(result.code).not.toBe(0);
    expectRefusal(result.stderr);
    expect(result.stderr).toContain(
      "its 1 run (0 running, 1 paused) was recorded against that model, not OxiCloud's schema",
    );
    expect(result.stderr).toContain("the paused run's cursor is a place in that model's data");
    expect(await databaseCatalog(db)).toEqual(before);
    const { rows } = await db.pool.query('SELECT id::text AS id, status FROM jobs.recoverable_runs');
    expect(rows).toEqual([{ id: OLD_MODEL_PAUSED_RUN_ID, status: 'Paused' }]);
  });

  it('OXICLOUD_STORAGE_DOMAIN=engine no longer keeps it: a config error naming oxicloud, the database untouched', async () => {
    const result = await runCli(
      ['migrate'],
      cleanEnv({ DATABASE_URL: db.url, OXICLOUD_STORAGE_DOMAIN: 'engine' }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'OXICLOUD_STORAGE_DOMAIN="engine": must be oxicloud, the only storage domain',
    );
    expect(await databaseCatalog(db)).toEqual(before);
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
    // The embedded Postgres the server makes in that folder, holding what the old model left.
    const embedded = await startOrReuseEmbeddedPostgres(loadConfig(env), capturingLogger());
    try {
      const client = new pg.Client({ connectionString: embedded.url });
      await client.connect();
      try {
        await client.query(oldModelDatabaseSql());
      } finally {
        await client.end();
      }
    } finally {
      await embedded.stop();
    }
  });
  afterAll(() => {
    rmSync(parent, { recursive: true, force: true });
  });

  it('is refused; moved aside, a fresh folder starts on OxiCloud’s domain', async () => {
    const refused = await runCli(['migrate'], env);
    expect(refused.code).not.toBe(0);
    expectRefusal(refused.stderr);
    expect(refused.stderr).toContain('it holds no runs and no run findings');

    renameSync(dataDir, `${dataDir}.old-model`);
    const fresh = await runCli(['migrate'], env);
    expect(fresh.stderr).not.toContain('oxijobs:');
    expect(fresh.code).toBe(0);
    expect(fresh.stdout).toMatch(/^migrations: applied \d+ of \d+/m);
  });
});
