import { createHash } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeRecognition, migrate, type OxiCloudFacts, recogniseDatabase } from '../src/index.js';
import {
  OLD_MODEL_MARKERS,
  OLD_MODEL_MIGRATIONS,
  oldModelDatabaseSql,
} from './fixtures/old-model-database.js';
import {
  oxicloudSql,
  oxicloudStorageSql,
  SQLX_VERSIONS,
  sqlxMigrationsSql,
} from './fixtures/oxicloud-catalog.js';
import { recognise } from './recognise-on-pool.js';

/** Databases this file made, dropped at the end. */
const made: TestDatabase[] = [];

/** A blank database (Postgres' template0) with `sql` run in it. */
async function blankDatabase(sql = ''): Promise<TestDatabase> {
  const db = await createTestDatabase({ empty: true, max: 2 });
  made.push(db);
  if (sql) await db.pool.query(sql);
  return db;
}

afterAll(async () => {
  await Promise.all(made.map((db) => db.drop()));
});

const ALL_FACTS: OxiCloudFacts = {
  chunkManifests: true,
  driveEraD0: true,
  d7Done: true,
  deadPropertyRekey: true,
  personalQuotaPinned: true,
  grantRoleEnum: true,
  playlistGrants: true,
};

const START_FRESH =
  'to start fresh on the embedded Postgres, move the data folder aside (OXICLOUD_DATA_DIR, default ./.oxicloud; ' +
  'the old database stays in it) or point OXICLOUD_DATA_DIR at another folder, or with DATABASE_URL point it at an empty database';

describe('the fixture of OxiCloud migrations', () => {
  it('has 69 distinct versions from 20260307000000 to 20260921000000, as at OxiCloud HEAD', () => {
    expect(SQLX_VERSIONS).toHaveLength(69);
    expect(new Set(SQLX_VERSIONS).size).toBe(69);
    expect(SQLX_VERSIONS[0]).toBe(20260307000000);
    expect(SQLX_VERSIONS.at(-1)).toBe(20260921000000);
  });
});

describe('an empty database', () => {
  it('is empty with no tables, even with extensions (and the view one of them owns), a schema and a function', async () => {
    const db = await blankDatabase(`
      CREATE EXTENSION ltree;
      CREATE EXTENSION pg_buffercache;
      CREATE SCHEMA jobs;
      CREATE FUNCTION jobs.answer() RETURNS int LANGUAGE sql AS 'SELECT 42';`);
    // pg_buffercache's view is there, but it is the extension's.
    const { rows } = await db.pool.query(
      "SELECT to_regclass('public.pg_buffercache') IS NOT NULL AS present",
    );
    expect(rows[0].present).toBe(true);

    const found = await recognise(db);
    expect(found).toEqual({ kind: 'empty' });
    expect(describeRecognition(found)).toBe(
      "empty database: no tables in any schema (extensions' own objects aside)",
    );
  });

  it('is not empty once it has one table of its own', async () => {
    const db = await blankDatabase('CREATE TABLE public.notes (id int)');
    expect((await recognise(db)).kind).toBe('unknown');
  });
});

describe('an OxiCloud database', () => {
  it('at HEAD: 69 migrations, the drive era with D7 done, every fact, no engine bookkeeping', async () => {
    const found = await recognise(await blankDatabase(oxicloudSql('head')));
    expect(found).toEqual({
      kind: 'oxicloud',
      era: 'drive-d7',
      migrations: { schema: 'public', count: 69, latest: 20260921000000, failed: 0 },
      facts: ALL_FACTS,
      engineSchema: 'oxijobs',
      engineMigrations: null,
      jobs: { runs: 'absent', runFindings: 'absent' },
    });
    expect(describeRecognition(found)).toBe(
      'OxiCloud database (public._sqlx_migrations: 69 migrations, latest 20260921000000; drive era, D7 done): ' +
        'has chunk manifests, drive era D0, D7 done, dead-property rekey, personal quota pinned, grant_role enum, ' +
        "playlist grants; the engine's own schema (oxijobs.migrations) is not there yet",
    );
  });

  it('after D0 but before D7: files.user_id is still there, and the later eras are missing', async () => {
    const found = await recognise(await blankDatabase(oxicloudSql('drive-d0')));
    expect(found).toMatchObject({
      kind: 'oxicloud',
      era: 'drive-d0',
      migrations: { schema: 'public', count: 55, latest: 20260825000000, failed: 0 },
      facts: {
        chunkManifests: true,
        driveEraD0: true,
        d7Done: false,
        deadPropertyRekey: false,
        personalQuotaPinned: false,
        grantRoleEnum: true,
        playlistGrants: false,
      },
    });
    expect(describeRecognition(found)).toBe(
      'OxiCloud database (public._sqlx_migrations: 55 migrations, latest 20260825000000; drive era D0, D7 not done): ' +
        'has chunk manifests, drive era D0, grant_role enum; ' +
        'lacks D7 done, dead-property rekey, personal quota pinned, playlist grants; ' +
        "the engine's own schema (oxijobs.migrations) is not there yet",
    );
  });

  it('before the drive era: no drives, role still text, only chunk manifests', async () => {
    const found = await recognise(await blankDatabase(oxicloudSql('pre-drive')));
    expect(found).toMatchObject({
      kind: 'oxicloud',
      era: 'pre-drive',
      migrations: { count: 43, latest: 20260701000000 },
      facts: {
        chunkManifests: true,
        driveEraD0: false,
        d7Done: false,
        deadPropertyRekey: false,
        personalQuotaPinned: false,
        grantRoleEnum: false,
        playlistGrants: false,
      },
    });
    expect(describeRecognition(found)).toContain('before the drive era (no D0)');
  });

  it('D0 needs drive_id NOT NULL on files too, D7 needs drive_id in storage.trash_items', async () => {
    const db = await blankDatabase(oxicloudSql('head'));
    await db.pool.query(`
      ALTER TABLE storage.files ALTER COLUMN drive_id DROP NOT NULL;
      DROP VIEW storage.trash_items;
      CREATE VIEW storage.trash_items AS SELECT id, name, 'file'::text AS item_type FROM storage.files;`);
    const found = await recognise(db);
    expect(found).toMatchObject({
      era: 'pre-drive',
      facts: { ...ALL_FACTS, driveEraD0: false, d7Done: false },
    });
  });

  it('counts failed rows of _sqlx_migrations, which OxiCloud does not boot on', async () => {
    const db = await blankDatabase(oxicloudSql('head'));
    await db.pool.query('UPDATE public._sqlx_migrations SET success = false WHERE version = 20260921000000');
    const found = await recognise(db);
    expect(found).toMatchObject({ migrations: { count: 69, failed: 1 } });
    expect(describeRecognition(found)).toContain(
      '69 migrations, latest 20260921000000, 1 failed one (OxiCloud does not boot on one)',
    );
  });

  it('finds _sqlx_migrations in the connection’s schema when that is not public', async () => {
    const db = await blankDatabase(`
      CREATE SCHEMA oxi;
      ${sqlxMigrationsSql('head').replaceAll('public._sqlx_migrations', 'oxi._sqlx_migrations')}
      ${oxicloudStorageSql('head')}`);
    const client = await db.pool.connect();
    try {
      await client.query('SET search_path = oxi, public');
      const found = await recogniseDatabase(client);
      expect(found).toMatchObject({ kind: 'oxicloud', migrations: { schema: 'oxi', count: 69 } });
      await client.query('RESET search_path');
      expect((await recogniseDatabase(client)).kind).toBe('unknown');
    } finally {
      client.release();
    }
  });

  it('where a sidecar already ran: the engine bookkeeping and its tables in its own schema are reported beside it', async () => {
    const db = await blankDatabase(oxicloudSql('head'));
    const result = await migrate(db.pool, { sidecar: true });
    expect(result.error).toBeUndefined();
    const found = await recognise(db);
    expect(found).toMatchObject({
      kind: 'oxicloud',
      era: 'drive-d7',
      engineSchema: 'oxijobs',
      engineMigrations: { count: 1, latest: '0010_job_registrations.sql' },
      jobs: { runs: { total: 0, running: 0, paused: 0 }, runFindings: 0 },
    });
    expect(describeRecognition(found)).toMatch(
      /; the engine's own schema is there too, a sidecar migrated here \(oxijobs\.migrations: 1 migration, latest 0010_job_registrations\.sql; 0 runs \(0 running, 0 paused\), 0 run findings\)$/,
    );
  });
});

describe("the engine's old storage model", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await blankDatabase(oldModelDatabaseSql()); // what an earlier version's old model left
  });

  it('is recognised with every marker, and says its runs and findings are none', async () => {
    const found = await recognise(db);
    expect(found).toEqual({
      kind: 'engine-old-model',
      migrations: { count: OLD_MODEL_MIGRATIONS.length, latest: '0010_job_registrations.sql' },
      markers: [...OLD_MODEL_MARKERS],
      jobs: { runs: { total: 0, running: 0, paused: 0 }, runFindings: 0 },
    });
    expect(describeRecognition(found)).toBe(
      `engine database of the old storage model (public.oxicloud_migrations: ${OLD_MODEL_MIGRATIONS.length} migrations, ` +
        'latest 0010_job_registrations.sql; storage.drives.owner_id, storage.blobs.deleting_at, ' +
        `public.oxicloud_uuid_v7(): names OxiCloud does not have): it holds no runs and no run findings; ${START_FRESH}`,
    );
  });

  it('counts its runs (running, paused) and run findings, and names the paused cursors', async () => {
    const run = (n: number) => `0190f5a0-0000-7000-8000-00000000000${n}`;
    await db.pool.query(
      `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at, cursor)
       VALUES ($1, 'storage_reconcile', 'Running', now(), now(), NULL),
              ($2, 'blob_gc', 'Paused', now(), now(), '\\x01'),
              ($3, 'blob_gc', 'Completed', now(), now(), NULL),
              ($4, 'orphan_scan', 'Paused', now(), now(), '\\x02')`,
      [run(1), run(2), run(3), run(4)],
    );
    await db.pool.query(
      `INSERT INTO jobs.run_findings (id, run_id, kind, severity, resource_id)
       VALUES ('0190f5a0-0000-7000-8000-0000000000f1', $1, 'orphan_blob', 'Warning', 'a'),
              ('0190f5a0-0000-7000-8000-0000000000f2', $1, 'orphan_blob', 'Warning', 'b')`,
      [run(3)],
    );
    const found = await recognise(db);
    expect(found).toMatchObject({
      kind: 'engine-old-model',
      jobs: { runs: { total: 4, running: 1, paused: 2 }, runFindings: 2 },
    });
    expect(describeRecognition(found)).toMatch(
      new RegExp(
        `: names OxiCloud does not have\\): its 4 runs \\(1 running, 2 paused\\) and 2 run findings were recorded against ` +
          `that model, not OxiCloud's schema, and the paused runs' cursors are places in that model's data; ` +
          `${START_FRESH.replaceAll('.', '\\.').replaceAll('(', '\\(').replaceAll(')', '\\)')}$`,
      ),
    );
  });

  it('needs one marker only: a database where only 0001 ran (its uuid function) is the old model', async () => {
    const one = await blankDatabase(`
      CREATE TABLE public.oxicloud_migrations (name text PRIMARY KEY, checksum text NOT NULL,
                                               applied_at timestamptz NOT NULL DEFAULT now());
      INSERT INTO public.oxicloud_migrations (name, checksum) VALUES ('0001_schemas.sql', 'x');
      CREATE FUNCTION public.oxicloud_uuid_v7() RETURNS uuid LANGUAGE sql AS 'SELECT gen_random_uuid()';`);
    const found = await recognise(one);
    expect(found).toEqual({
      kind: 'engine-old-model',
      migrations: { count: 1, latest: '0001_schemas.sql' },
      markers: ['public.oxicloud_uuid_v7()'],
      jobs: { runs: 'absent', runFindings: 'absent' },
    });
    expect(describeRecognition(found)).toContain('): it holds no runs and no run findings; ');
  });
});

describe("the engine's bookkeeping on OxiCloud's schema", () => {
  it('is the engine kind, with the eras of its storage domain and its jobs', async () => {
    const db = await blankDatabase();
    const sql = oxicloudStorageSql('head');
    const file = {
      name: '0001_oxicloud_schema.sql',
      sql,
      checksum: createHash('sha256').update(sql).digest('hex'),
    };
    const result = await migrate(db.pool, { files: [file] });
    expect(result.error).toBeUndefined();
    const found = await recognise(db);
    expect(found).toEqual({
      kind: 'engine',
      era: 'drive-d7',
      migrations: { count: 1, latest: '0001_oxicloud_schema.sql' },
      facts: ALL_FACTS,
      jobs: { runs: { total: 0, running: 0, paused: 0 }, runFindings: 0 },
    });
    expect(describeRecognition(found)).toBe(
      "engine database on OxiCloud's storage schema (public.oxicloud_migrations: 1 migration, latest " +
        '0001_oxicloud_schema.sql; drive era, D7 done): has chunk manifests, drive era D0, D7 done, ' +
        'dead-property rekey, personal quota pinned, grant_role enum, playlist grants; 0 runs (0 running, 0 paused), ' +
        '0 run findings',
    );
  });
});

describe('an unknown database', () => {
  it('lists its schemas and up to ten tables, and how many more there are', async () => {
    const tables = Array.from(
      { length: 12 },
      (_, i) => `CREATE TABLE app.t${String(i).padStart(2, '0')} (id int);`,
    );
    const found = await recognise(await blankDatabase(`CREATE SCHEMA app; ${tables.join('\n')}`));
    expect(found).toEqual({
      kind: 'unknown',
      found: ['schema app', ...Array.from({ length: 10 }, (_, i) => `app.t${String(i).padStart(2, '0')}`)],
      tableCount: 12,
    });
    expect(describeRecognition(found)).toBe(
      'unrecognised database (found schema app, app.t00, app.t01, app.t02, app.t03, app.t04, app.t05, app.t06, ' +
        "app.t07, app.t08, app.t09 and 2 more tables): neither empty, nor OxiCloud's (_sqlx_migrations with " +
        "auth.users, storage.folders, storage.files), nor the engine's (public.oxicloud_migrations with those " +
        'tables or with its old storage model)',
    );
  });

  it('is what _sqlx_migrations without the storage tables is', async () => {
    const found = await recognise(await blankDatabase(sqlxMigrationsSql('head')));
    expect(found).toEqual({
      kind: 'unknown',
      found: ['schema public', 'public._sqlx_migrations'],
      tableCount: 1,
    });
  });

  it('is what the engine bookkeeping alone is (no storage domain, no marker)', async () => {
    const db = await blankDatabase();
    expect((await migrate(db.pool, { files: [], packageSchemas: false })).error).toBeUndefined();
    const found = await recognise(db);
    expect(found).toEqual({
      kind: 'unknown',
      found: ['schema public', 'public.oxicloud_migrations'],
      tableCount: 1,
    });
  });
});
