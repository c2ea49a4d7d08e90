import { readOxiCloudDomainFiles } from '@oxicloud/migrations';
import pg from 'pg';
import { adminUrl, createTestDatabase, type TestDatabase, withAdmin, withDatabase } from './test-database.js';

/**
 * The template of {@link createOxiCloudDatabase}: a database as a real
 * OxiCloud leaves it (fact sheet §1), made once per Postgres server.
 */
export const OXICLOUD_TEMPLATE_DATABASE = 'oxicloud_real_template';

/** The last migration version at OxiCloud's HEAD (fact sheet §1). */
export const OXICLOUD_LATEST_MIGRATION = 20260921000000;

/**
 * 69 versions as at OxiCloud's HEAD: the first (20260307000000) and the last
 * ({@link OXICLOUD_LATEST_MIGRATION}) are OxiCloud's, the others stand in
 * for the files between (recognition reads the count and the latest).
 */
export const OXICLOUD_SQLX_VERSIONS: readonly number[] = Array.from({ length: 69 }, (_, i) =>
  i === 0 ? 20260307000000 : i === 68 ? OXICLOUD_LATEST_MIGRATION : 20260400000000 + i * 1_000_000,
);

/** `public._sqlx_migrations` as sqlx 0.8 makes it, one row per version, each a success. */
export function sqlxMigrationsSql(versions: readonly number[] = OXICLOUD_SQLX_VERSIONS): string {
  return `
    CREATE TABLE public._sqlx_migrations (
      version bigint PRIMARY KEY,
      description text NOT NULL,
      installed_on timestamptz NOT NULL DEFAULT now(),
      success boolean NOT NULL,
      checksum bytea NOT NULL,
      execution_time bigint NOT NULL
    );
    INSERT INTO public._sqlx_migrations (version, description, success, checksum, execution_time)
    SELECT v, 'migration ' || v, true, sha384(v::text::bytea), 1000000
      FROM unnest(ARRAY[${versions.join(', ')}]::bigint[]) AS v;`;
}

async function prepareOxiCloudTemplate(): Promise<void> {
  await withAdmin(async (admin) => {
    await admin.query('SELECT pg_advisory_lock(7420113003)');
    try {
      const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [
        OXICLOUD_TEMPLATE_DATABASE,
      ]);
      if (exists.rowCount !== 0) return;
      const building = `${OXICLOUD_TEMPLATE_DATABASE}_building`;
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${building} TEMPLATE template0`);
      const client = new pg.Client({ connectionString: withDatabase(adminUrl(), building) });
      await client.connect();
      try {
        for (const file of readOxiCloudDomainFiles()) await client.query(file.sql);
        await client.query(sqlxMigrationsSql());
      } finally {
        await client.end();
      }
      // Renamed only when whole: a half-built template is never used.
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${OXICLOUD_TEMPLATE_DATABASE}`);
    } finally {
      await admin.query('SELECT pg_advisory_unlock(7420113003)');
    }
  });
}

/**
 * A fresh database as a real OxiCloud at its HEAD leaves it: OxiCloud's
 * drive-era schema (this project's SQL of it, `@oxicloud/migrations`'
 * `oxicloud-domain/`) and its `public._sqlx_migrations` with 69 rows, and
 * nothing of the engine (no `public.oxicloud_migrations`, no `jobs`). What
 * sidecar mode is tested on.
 */
export async function createOxiCloudDatabase(options: { max?: number } = {}): Promise<TestDatabase> {
  await prepareOxiCloudTemplate();
  return createTestDatabase({ ...options, template: OXICLOUD_TEMPLATE_DATABASE });
}

/** A login role on a test database, and how to remove it (roles outlive their database). */
export interface TestRole {
  readonly role: string;
  /** `db`'s URL, connecting as this role. */
  readonly url: string;
  /** Drops what the role owns in `db` and the role itself. */
  drop(): Promise<void>;
}

/**
 * A role with only the read part of the README's grants beside OxiCloud
 * (USAGE and SELECT on OxiCloud's schemas), owning the engine schema
 * `engineSchema` a DBA made for it in advance: what a read-only sidecar runs as.
 */
export async function readOnlyOxiCloudRole(db: TestDatabase, engineSchema: string): Promise<TestRole> {
  const role = `ro_${db.name}`;
  const password = 'ro-secret';
  await db.pool.query(`
    CREATE ROLE ${role} LOGIN PASSWORD '${password}';
    GRANT USAGE ON SCHEMA auth, storage, audio, caldav, carddav, faces TO ${role};
    GRANT SELECT ON ALL TABLES IN SCHEMA auth, storage, audio, caldav, carddav, faces TO ${role};
    CREATE SCHEMA ${engineSchema} AUTHORIZATION ${role};`);
  const url = new URL(db.url);
  url.username = role;
  url.password = password;
  return {
    role,
    url: url.toString(),
    drop: async () => {
      await db.pool.query(`DROP OWNED BY ${role}; DROP ROLE ${role}`).catch(() => undefined);
    },
  };
}
