import { randomBytes } from 'node:crypto';
import { migrate } from '@oxicloud/migrations';
import pg from 'pg';

/** Env var through which the global setup hands the server URL to test workers. */
export const ADMIN_URL_ENV = 'OXICLOUD_TEST_ADMIN_URL';
/**
 * Name of the migrated template database every test database is copied
 * from: what the server makes of an empty database (`migrate()` of
 * `@oxicloud/migrations`: OxiCloud's storage domain, the `jobs` schema, the
 * registrations, the packages' schemas).
 */
export const TEMPLATE_DATABASE = 'oxicloud_test_template';

/** The template of `createTestDatabase({ domain: 'oxicloud' })`: the same one since the old model went (issue 30). */
export const OXICLOUD_DOMAIN_TEMPLATE = TEMPLATE_DATABASE;

/** A fresh, migrated database of its own for one test file. */
export interface TestDatabase {
  /** Connection URL of this database. */
  readonly url: string;
  readonly name: string;
  /** A pool on this database (closed by {@link TestDatabase.drop}). */
  readonly pool: pg.Pool;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** The URL of the test Postgres server's admin database (the global setup's, or TEST_DATABASE_URL). */
export function adminUrl(): string {
  const url = process.env[ADMIN_URL_ENV] ?? process.env['TEST_DATABASE_URL'];
  if (!url) {
    throw new Error(
      `no test Postgres: ${ADMIN_URL_ENV} is not set. Add globalSetup: ['@oxicloud/test-support/global-setup'] ` +
        'to vitest.config.ts, or set TEST_DATABASE_URL',
    );
  }
  return url;
}

export async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates the migrated template database (idempotent); called once by the global setup. */
export async function prepareTemplate(url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock(7420113002)');
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [TEMPLATE_DATABASE]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
    const pool = new pg.Pool({ connectionString: withDatabase(url, TEMPLATE_DATABASE), max: 1 });
    try {
      const result = await migrate(pool);
      if (result.error) throw result.error;
    } finally {
      await pool.end();
    }
    await admin.query('SELECT pg_advisory_unlock(7420113002)');
  } finally {
    await admin.end();
  }
}

/**
 * Creates a fresh database for the calling test file, copied from the
 * migrated template (or, with `empty: true`, from Postgres' empty
 * `template0`: no schema at all, what a consumer of a package starts from),
 * and returns a pool on it. `domain: 'oxicloud'` names the storage domain
 * the template holds, the only one.
 *
 * @example
 * ```ts
 * let db: TestDatabase;
 * beforeAll(async () => { db = await createTestDatabase(); });
 * afterAll(async () => { await db.drop(); });
 * ```
 */
export async function createTestDatabase(
  options: { max?: number; empty?: boolean; domain?: 'oxicloud'; template?: string } = {},
): Promise<TestDatabase> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const template = options.template ?? (options.empty ? 'template0' : TEMPLATE_DATABASE);
  await withAdmin(async (c) => {
    // CREATE DATABASE ... TEMPLATE needs no other session on the template; retry briefly if one is there.
    for (let attempt = 0; ; attempt++) {
      try {
        await c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
        return;
      } catch (err) {
        if (attempt >= 50 || !/being accessed by other users/.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });
  const url = withDatabase(adminUrl(), name);
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10 });
  pool.on('error', () => undefined);
  return {
    url,
    name,
    pool,
    drop: async () => {
      await pool.end().catch(() => undefined);
      await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => undefined);
    },
  };
}
