import { createHash } from 'node:crypto';
import {
  createOxiCloudDatabase,
  createTestDatabase,
  dumpDatabase,
  type TestDatabase,
} from '@oxicloud/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import {
  engineFiles,
  type MigrationFile,
  migrate,
  recogniseDatabase,
  storageDomainFiles,
} from '../src/index.js';

const made: TestDatabase[] = [];
afterAll(async () => {
  await Promise.all(made.map((db) => db.drop()));
});

async function oxicloud(): Promise<TestDatabase> {
  const db = await createOxiCloudDatabase({ max: 2 });
  made.push(db);
  return db;
}

const failing: MigrationFile = {
  name: '0099_fails.sql',
  sql: 'CREATE TABLE jobs.half_done (id int); SELECT 1 / 0;',
  checksum: createHash('sha256').update('fails').digest('hex'),
};

async function schemas(db: TestDatabase): Promise<string[]> {
  const { rows } = await db.pool.query<{ nspname: string }>(
    "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema' ORDER BY 1",
  );
  return rows.map((r) => r.nspname);
}

describe('migrate({ sidecar: true }) on a database as OxiCloud leaves it', () => {
  it("creates only the engine's own schema: every other schema and _sqlx_migrations dump the same", async () => {
    const db = await oxicloud();
    const before = await dumpDatabase(db.pool);
    const schemasBefore = await schemas(db);
    const result = await migrate(db.pool, { sidecar: true });
    expect(result.error).toBeUndefined();
    expect(result.applied).toContain('0010_job_registrations.sql');
    expect(result.applied).toContain('@oxicloud/recoverable/001_recoverable_runs.sql');
    expect(await schemas(db)).toEqual([...schemasBefore, 'oxijobs'].sort());
    expect(await dumpDatabase(db.pool, { excludeSchemas: ['oxijobs'] })).toBe(before);
    const { rows } = await db.pool.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'oxijobs' ORDER BY 1",
    );
    expect(rows.map((r) => r.name)).toEqual(
      expect.arrayContaining([
        'migrations',
        'schema_versions',
        'recoverable_runs',
        'run_findings',
        'job_registrations',
      ]),
    );
    const again = await migrate(db.pool, { sidecar: true });
    expect(again.error).toBeUndefined();
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied).toEqual(result.applied);
  });

  it('is recognised afterwards as OxiCloud with the engine beside it, never as the engine', async () => {
    const db = await oxicloud();
    expect((await migrate(db.pool, { sidecar: true })).error).toBeUndefined();
    const client = await db.pool.connect();
    try {
      const found = await recogniseDatabase(client);
      expect(found).toMatchObject({
        kind: 'oxicloud',
        migrations: { count: 69, latest: 20260921000000 },
        engineSchema: 'oxijobs',
        engineMigrations: { count: 1 },
      });
    } finally {
      client.release();
    }
  });

  it('uses a schema a DBA created in advance, owned by someone else, as is', async () => {
    const db = await oxicloud();
    await db.pool.query('CREATE SCHEMA engine_prepared');
    const result = await migrate(db.pool, { sidecar: true, engineSchema: 'engine_prepared' });
    expect(result.error).toBeUndefined();
    const { rows } = await db.pool.query(
      "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'engine_prepared'",
    );
    expect(rows[0].n).toBeGreaterThan(4);
    expect(await schemas(db)).not.toContain('oxijobs');
  });

  it('refuses `jobs` (OxiCloud keeps it for its own tables) and an invalid name, writing nothing', async () => {
    const db = await oxicloud();
    const before = await dumpDatabase(db.pool);
    const jobs = await migrate(db.pool, { sidecar: true, engineSchema: 'jobs' });
    expect(jobs.error?.message).toMatch(/may not use the schema "jobs".*oxijobs/);
    const storage = await migrate(db.pool, { sidecar: true, engineSchema: 'storage' });
    expect(storage.error?.message).toMatch(/schema of OxiCloud or of Postgres/);
    const bad = await migrate(db.pool, { sidecar: true, engineSchema: 'Bad-Name' });
    expect(bad.error?.message).toMatch(/lower-case letters, digits and _/);
    expect(await dumpDatabase(db.pool)).toBe(before);
  });

  it('a failure anywhere leaves nothing behind: no schema, no bookkeeping, no table', async () => {
    const db = await oxicloud();
    const before = await dumpDatabase(db.pool);
    const result = await migrate(db.pool, { sidecar: true, files: [...engineFiles(), failing] });
    expect(result.error?.code).toBe('MIGRATION_FAILED');
    expect(result.error?.message).toMatch(/0099_fails\.sql failed: division by zero.*Nothing was written/);
    expect(result.applied).toEqual([]);
    expect(await dumpDatabase(db.pool)).toBe(before);
  });
});

describe('migrate() on an empty database of its own', () => {
  it('a failure in the last file leaves the database as empty as it was', async () => {
    const db = await createTestDatabase({ empty: true, max: 2 });
    made.push(db);
    const before = await dumpDatabase(db.pool);
    const result = await migrate(db.pool, { domain: 'oxicloud', files: [...storageDomainFiles(), failing] });
    expect(result.error?.code).toBe('MIGRATION_FAILED');
    expect(await dumpDatabase(db.pool)).toBe(before);
  });
});
