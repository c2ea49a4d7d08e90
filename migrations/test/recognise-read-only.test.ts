import { randomBytes } from 'node:crypto';
import { ADMIN_URL_ENV, createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeRecognition, MigrationError, migrate, recogniseDatabase } from '../src/index.js';
import { oldModelDatabaseSql } from './fixtures/old-model-database.js';
import { oxicloudSql } from './fixtures/oxicloud-catalog.js';

/**
 * Everything recognition could change if it wrote: schemas, relations (and
 * their files), columns, constraints, functions, triggers, roles' grants on
 * the database, and every user table's rows.
 */
async function snapshot(client: pg.Client | pg.PoolClient) {
  const q = async (sql: string) => (await client.query(sql)).rows;
  const tables = await q(
    `SELECT format('%I.%I', n.nspname, c.relname) AS name
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
        AND n.nspname NOT LIKE 'pg\\_%'
      ORDER BY 1`,
  );
  const rows: Record<string, unknown> = {};
  for (const { name } of tables) {
    rows[name] = (
      await q(`SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS md5 FROM ${name} t`)
    )[0]?.md5;
  }
  return {
    schemas: await q('SELECT nspname, nspowner::regrole::text, nspacl::text FROM pg_namespace ORDER BY 1'),
    relations: await q(
      `SELECT n.nspname, c.relname, c.relkind, c.relfilenode, c.relacl::text
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace ORDER BY 1, 2`,
    ),
    columns: await q(
      `SELECT attrelid::regclass::text, attname, atttypid::regtype::text, attnotnull, attnum
         FROM pg_attribute WHERE attrelid >= 16384 ORDER BY 1, attnum`,
    ),
    constraints: await q(
      `SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint
        WHERE connamespace::regnamespace::text NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2`,
    ),
    functions: await q(
      `SELECT p.oid::regprocedure::text, md5(p.prosrc) FROM pg_proc p
         JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
    ),
    triggers: await q('SELECT tgrelid::regclass::text, tgname FROM pg_trigger ORDER BY 1, 2'),
    database: await q('SELECT datacl::text FROM pg_database WHERE datname = current_database()'),
    rows,
  };
}

const adminUrl = () => process.env[ADMIN_URL_ENV] ?? process.env['TEST_DATABASE_URL'] ?? '';

async function asAdmin(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** A login role of this file (roles belong to the server, not to a database: dropped at the end). */
function roleName(what: string): string {
  return `recognise_${what}_${randomBytes(4).toString('hex')}`;
}

async function connectAs(db: TestDatabase, role: string, password: string): Promise<pg.Client> {
  const url = new URL(db.url);
  url.username = role;
  url.password = password;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  return client;
}

const madeRoles: string[] = [];
const made: TestDatabase[] = [];

afterAll(async () => {
  await Promise.all(made.map((db) => db.drop()));
  for (const role of madeRoles) await asAdmin(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
});

describe('recognition changes nothing', () => {
  let oldModel: TestDatabase;
  let oxicloud: TestDatabase;
  beforeAll(async () => {
    [oldModel, oxicloud] = await Promise.all([
      createTestDatabase({ empty: true, max: 2 }),
      createTestDatabase({ empty: true, max: 2 }),
    ]);
    made.push(oldModel, oxicloud);
    await oldModel.pool.query(oldModelDatabaseSql());
    await oxicloud.pool.query(oxicloudSql('head'));
    expect((await migrate(oxicloud.pool, { files: [] })).error).toBeUndefined(); // a sidecar's tables too
    await oldModel.pool.query(
      `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at, cursor)
       VALUES ('0190f5a0-0000-7000-8000-000000000001', 'blob_gc', 'Paused', now(), now(), '\\x01')`,
    );
  });

  it.each([
    ['the old model', () => oldModel, 'engine-old-model'],
    ['an OxiCloud database with a sidecar', () => oxicloud, 'oxicloud'],
  ])('leaves %s as it was, and the session as it was (no transaction, same search_path)', async (_, db, kind) => {
    const client = await db().pool.connect();
    try {
      await client.query('SET search_path = storage, public');
      const before = await snapshot(client);
      const found = await recogniseDatabase(client);
      expect(found.kind).toBe(kind);
      expect(await snapshot(client)).toEqual(before);
      const { rows } = await client.query(
        `SELECT current_setting('search_path') AS path, current_setting('transaction_read_only') AS read_only,
                now() = statement_timestamp() AS outside_transaction`,
      );
      expect(rows[0]).toEqual({ path: 'storage, public', read_only: 'off', outside_transaction: true });
    } finally {
      await client.query('RESET search_path');
      client.release();
    }
  });

  it('sends nothing but its read-only transaction and reads (every statement between BEGIN and COMMIT is a SELECT or the SET LOCAL of search_path)', async () => {
    const client = await oldModel.pool.connect();
    const sent: string[] = [];
    try {
      await recogniseDatabase({
        query: (sql: string, values?: unknown[]) => {
          sent.push(sql.trim());
          return client.query(sql, values);
        },
      });
    } finally {
      client.release();
    }
    expect(sent[0]).toMatch(/^SELECT /); // is the session outside a transaction?
    expect(sent[1]).toBe('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    expect(sent.at(-1)).toBe('COMMIT');
    expect(sent.length).toBeGreaterThan(5);
    for (const sql of sent.slice(2, -1)) expect(sql).toMatch(/^(SELECT |SET LOCAL search_path = ''$)/);
  });

  it('refuses a session inside a transaction of the caller, and leaves that transaction alone', async () => {
    const client = await oxicloud.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query("INSERT INTO auth.users (email) VALUES ('in-flight@example.org')");
      const error = await recogniseDatabase(client).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MigrationError);
      expect(error).toMatchObject({ code: 'RECOGNITION_FAILED' });
      expect((error as Error).message).toContain('inside a transaction');
      // The caller's transaction is still open and its row still there: recognition did not commit or roll back.
      const { rows } = await client.query(
        "SELECT count(*)::int AS n FROM auth.users WHERE email = 'in-flight@example.org'",
      );
      expect(rows[0].n).toBe(1);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });

  it('fails with RECOGNITION_FAILED and the cause when the session is gone', async () => {
    const client = new pg.Client({ connectionString: oxicloud.url });
    await client.connect();
    await client.end();
    const error = await recogniseDatabase(client).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationError);
    expect(error).toMatchObject({ code: 'RECOGNITION_FAILED' });
    expect((error as MigrationError).cause).toBeInstanceOf(Error);
  });
});

describe('recognition with few privileges', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ empty: true, max: 2 });
    made.push(db);
    await db.pool.query(oldModelDatabaseSql());
    await db.pool.query(
      `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at)
       VALUES ('0190f5a0-0000-7000-8000-000000000001', 'blob_gc', 'Running', now(), now())`,
    );
    // Nothing for PUBLIC: a role has what it is granted below and no more (no TEMP, no CONNECT).
    await db.pool.query(`REVOKE ALL ON DATABASE ${db.name} FROM PUBLIC`);
  });

  it('works for a role with only CONNECT, USAGE on the schemas and SELECT on the tables, with the same result', async () => {
    const role = roleName('reader');
    const password = randomBytes(12).toString('hex');
    madeRoles.push(role);
    await asAdmin(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    await db.pool.query(`
      GRANT CONNECT ON DATABASE ${db.name} TO ${role};
      GRANT USAGE ON SCHEMA public, auth, storage, jobs TO ${role};
      GRANT SELECT ON ALL TABLES IN SCHEMA public, auth, storage, jobs TO ${role};`);
    const admin = await db.pool.connect();
    const reader = await connectAs(db, role, password);
    try {
      const { rows } = await reader.query(
        `SELECT has_database_privilege(current_database(), 'CREATE, TEMP') AS creates,
                has_schema_privilege('jobs', 'CREATE') AS creates_in_jobs,
                has_table_privilege('jobs.recoverable_runs', 'INSERT, UPDATE, DELETE, TRUNCATE') AS writes`,
      );
      expect(rows[0]).toEqual({ creates: false, creates_in_jobs: false, writes: false });
      const before = await snapshot(admin);
      const asReader = await recogniseDatabase(reader);
      expect(asReader).toEqual(await recogniseDatabase(admin));
      expect(asReader).toMatchObject({
        kind: 'engine-old-model',
        jobs: { runs: { total: 1, running: 1, paused: 0 }, runFindings: 0 },
      });
      expect(await snapshot(admin)).toEqual(before);
    } finally {
      admin.release();
      await reader.end();
    }
  });

  it('still recognises the kind for a role with CONNECT only, and says which counts it may not read', async () => {
    const role = roleName('connect');
    const password = randomBytes(12).toString('hex');
    madeRoles.push(role);
    await asAdmin(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    await db.pool.query(`GRANT CONNECT ON DATABASE ${db.name} TO ${role}`);
    const client = await connectAs(db, role, password);
    try {
      const found = await recogniseDatabase(client);
      expect(found).toEqual({
        kind: 'engine-old-model',
        migrations: 'not-readable',
        markers: ['storage.drives.owner_id', 'storage.blobs.deleting_at', 'public.oxicloud_uuid_v7()'],
        jobs: { runs: 'not-readable', runFindings: 'not-readable' },
      });
      expect(describeRecognition(found)).toContain(
        '(public.oxicloud_migrations not readable by this role; storage.drives.owner_id, ' +
          'storage.blobs.deleting_at, public.oxicloud_uuid_v7(): names OxiCloud does not have): ' +
          'its runs and run findings are not readable by this role; to start fresh',
      );
    } finally {
      await client.end();
    }
  });
});
