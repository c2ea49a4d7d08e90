import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  diffSchema,
  migrate,
  OXICLOUD_SCHEMA,
  oxiCloudDomainFolder,
  readMigrationFiles,
  readOxiCloudDomainFiles,
  readSchema,
} from '../src/index.js';
import { applyInTransactions } from './oxicloud-domain-fixtures.js';

const files = readOxiCloudDomainFiles();

/** What the database has, against what OXICLOUD_SCHEMA says OxiCloud's has: one line per difference. */
async function differences(db: TestDatabase): Promise<string[]> {
  const client = await db.pool.connect();
  try {
    return diffSchema(OXICLOUD_SCHEMA, await readSchema(client, OXICLOUD_SCHEMA.schemas));
  } finally {
    client.release();
  }
}

/** The objects a second application could duplicate or drop, counted from the catalog. */
async function catalogCounts(db: TestDatabase): Promise<Record<string, unknown>> {
  const { rows } = await db.pool.query(
    `SELECT (SELECT count(*) FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
               JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = ANY($1) AND NOT t.tgisinternal)::int AS triggers,
            (SELECT count(*) FROM pg_catalog.pg_constraint k JOIN pg_catalog.pg_namespace n ON n.oid = k.connamespace
              WHERE n.nspname = ANY($1))::int AS constraints,
            (SELECT count(*) FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
              WHERE n.nspname = ANY($1))::int AS functions,
            (SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = ANY($1) AND c.relkind = 'i')::int AS indexes`,
    [OXICLOUD_SCHEMA.schemas],
  );
  return rows[0] as Record<string, unknown>;
}

describe('the OxiCloud-compatible storage domain (oxicloud-domain/)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
    const client = await db.pool.connect();
    try {
      await applyInTransactions(client, files);
    } finally {
      client.release();
    }
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('is a list of NNNN_lower_snake.sql files in name order, read from its own folder', () => {
    const names = files.map((f) => f.name);
    expect(names.length).toBeGreaterThan(0);
    expect(names).toEqual([...names].sort());
    for (const name of names) expect(name).toMatch(/^\d{4}_[a-z0-9_]+\.sql$/);
    expect(new Set(names).size).toBe(names.length);
    expect(readMigrationFiles(oxiCloudDomainFolder).map((f) => f.name)).toEqual(names);
    expect(oxiCloudDomainFolder).toMatch(/oxicloud-domain\/$/);
  });

  it('gives ids gen_random_uuid() and never uses the old model’s oxicloud_uuid_v7()', () => {
    expect(files.filter((f) => f.sql.includes('oxicloud_uuid_v7')).map((f) => f.name)).toEqual([]);
  });

  it('builds, on a blank database, exactly the schema OXICLOUD_SCHEMA describes', async () => {
    expect(await differences(db)).toEqual([]);
  });

  it('seeds the virtual Internal group, and no member rows for it', async () => {
    const { rows } = await db.pool.query(
      `SELECT id, name::text, is_virtual,
              (SELECT count(*)::int FROM auth.subject_group_members m WHERE m.group_id = g.id) AS members
         FROM auth.subject_groups g`,
    );
    expect(rows).toEqual([
      { id: '00000000-0000-0000-0000-000000000001', name: 'Internal', is_virtual: true, members: 0 },
    ]);
  });

  it('is idempotent: applied a second time it succeeds, changes no object and keeps every row', async () => {
    const user = await db.pool.query(
      `INSERT INTO auth.users (username, email, role) VALUES ('twice', 'twice@example.test', 'user') RETURNING id`,
    );
    const before = await catalogCounts(db);
    const client = await db.pool.connect();
    try {
      await applyInTransactions(client, files);
    } finally {
      client.release();
    }
    expect(await catalogCounts(db)).toEqual(before);
    expect(await differences(db)).toEqual([]);
    const { rows } = await db.pool.query(
      `SELECT (SELECT count(*)::int FROM auth.users WHERE id = $1) AS users,
              (SELECT count(*)::int FROM auth.subject_groups) AS groups`,
      [user.rows[0]?.['id']],
    );
    expect(rows[0]).toEqual({ users: 1, groups: 1 });
  });
});

describe('the domain through migrate()', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('is applied and recorded by migrate({ files }), which then finds nothing to apply', async () => {
    const first = await migrate(db.pool, { files, packageSchemas: false });
    expect(first.error).toBeUndefined();
    expect(first.applied).toEqual(files.map((f) => f.name));
    const second = await migrate(db.pool, { files, packageSchemas: false });
    expect(second).toEqual({ applied: [], alreadyApplied: files.map((f) => f.name) });
    expect(await differences(db)).toEqual([]);
  });
});
