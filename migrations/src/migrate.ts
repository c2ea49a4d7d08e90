import { applySchema } from '@oxicloud/recoverable';
import { MigrationError } from './errors.js';
import type { MigrationFile } from './files.js';
import {
  type RecordedStorageDomain,
  readOxiCloudDomainFiles,
  type StorageDomain,
  storageDomainFiles,
} from './oxicloud-domain.js';
import { PACKAGE_SCHEMAS } from './package-schemas.js';

/** The subset of `pg`'s Client / PoolClient this runner needs. */
export interface MigrationClient {
  query(sql: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/** The subset of `pg`'s Pool this runner needs (a Client works too, see {@link migrate}). */
export interface MigrationPool {
  connect(): Promise<MigrationClient & { release(err?: boolean | Error): void }>;
}

export interface MigrationResult {
  /** Names applied by this call, in order. */
  readonly applied: string[];
  /**
   * Names already recorded before this call: the server's files and the
   * packages' schema steps, named like `applied`, so `applied` +
   * `alreadyApplied` is every migration of this build.
   */
  readonly alreadyApplied: string[];
  /** Set when a migration failed; the failing one and those after it are not applied. */
  readonly error?: MigrationError;
}

export interface MigrateOptions {
  /**
   * The storage domain to build and keep: `oxicloud` (`oxicloud-domain/`,
   * see `storageDomainFiles`), the only one. It is recorded in
   * `public.oxicloud_storage_domain` at the first migration. A database that
   * recorded another domain (the engine's old model, `engine`, removed by
   * issue 30) is refused (`DOMAIN_MISMATCH`) before any write; a database
   * migrated before the record existed is judged by the files it recorded.
   * @defaultValue `oxicloud` when `files` is not given; with `files` and no
   * `domain`, no domain is checked or recorded
   */
  readonly domain?: StorageDomain;
  /** Defaults to the files of `domain` ({@link storageDomainFiles}). */
  readonly files?: MigrationFile[];
  /**
   * Apply the packages' `jobs` schemas after the files (`@oxicloud/recoverable`,
   * then `@oxicloud/consistency`). @defaultValue true
   */
  readonly packageSchemas?: boolean;
}

/** Advisory-lock key: one migration run at a time per database, across processes. */
const LOCK_KEY = 7_420_113_001;

/**
 * Applies every migration not yet recorded in `public.oxicloud_migrations`,
 * each in its own transaction, under an advisory lock, then the schemas the
 * packages own (their own runner and version rows in `jobs.schema_versions`;
 * applied names read `@oxicloud/recoverable/003_run_attempts.sql`). Never throws for a
 * failing migration: the result carries `error` (kysely's Migrator does the same).
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { migrate } from '@oxicloud/migrations';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const result = await migrate(pool);
 * if (result.error) throw result.error;
 * ```
 */
export async function migrate(pool: MigrationPool, options: MigrateOptions = {}): Promise<MigrationResult> {
  const domain = options.domain ?? (options.files === undefined ? 'oxicloud' : undefined);
  const files = options.files ?? storageDomainFiles(domain ?? 'oxicloud');
  const client = await pool.connect();
  const applied: string[] = [];
  const alreadyApplied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    if (domain !== undefined) {
      const recorded = await recordedDomain(client);
      if (recorded !== null && recorded.domain !== domain) {
        return {
          applied,
          alreadyApplied,
          error: new MigrationError(
            'DOMAIN_MISMATCH',
            recorded.domain === 'engine'
              ? `this database was migrated with the engine's old storage model "engine" (${recorded.source}), ` +
                  `which this version no longer runs; nothing is migrated from it. Nothing was written`
              : `this database was migrated with the storage domain "${recorded.domain}" (${recorded.source}), ` +
                  `not "${domain}"; a database keeps the storage domain it was first migrated with. Nothing was written`,
          ),
        };
      }
    }
    await client.query(`CREATE TABLE IF NOT EXISTS public.oxicloud_migrations (
        name        TEXT PRIMARY KEY,
        checksum    TEXT NOT NULL,
        applied_at  TIMESTAMPTZ NOT NULL DEFAULT NOW()
      )`);
    if (domain !== undefined) {
      await client.query(`CREATE TABLE IF NOT EXISTS public.oxicloud_storage_domain (
          domain       TEXT PRIMARY KEY CHECK (domain IN ('engine', 'oxicloud')),
          recorded_at  TIMESTAMPTZ NOT NULL DEFAULT NOW()
        )`);
      await client.query(
        'INSERT INTO public.oxicloud_storage_domain (domain) SELECT $1::text WHERE NOT EXISTS (SELECT 1 FROM public.oxicloud_storage_domain)',
        [domain],
      );
    }
    const { rows } = await client.query('SELECT name, checksum FROM public.oxicloud_migrations');
    const recorded = new Map(rows.map((r) => [String(r['name']), String(r['checksum'])]));
    for (const file of files) {
      const checksum = recorded.get(file.name);
      if (checksum !== undefined) {
        if (checksum !== file.checksum) {
          return {
            applied,
            alreadyApplied,
            error: new MigrationError(
              'CHECKSUM_MISMATCH',
              `migration ${file.name} was applied with checksum ${checksum} but the file now has ${file.checksum}; ` +
                'applied migrations must not be edited, add a new migration instead',
            ),
          };
        }
        alreadyApplied.push(file.name);
        continue;
      }
      try {
        await client.query('BEGIN');
        await client.query(file.sql);
        await client.query('INSERT INTO public.oxicloud_migrations (name, checksum) VALUES ($1, $2)', [
          file.name,
          file.checksum,
        ]);
        await client.query('COMMIT');
        applied.push(file.name);
      } catch (cause) {
        await client.query('ROLLBACK').catch(() => undefined);
        return {
          applied,
          alreadyApplied,
          error: new MigrationError(
            'MIGRATION_FAILED',
            `migration ${file.name} failed: ${(cause as Error).message}`,
            { cause },
          ),
        };
      }
    }
    if (options.packageSchemas !== false) {
      for (const schema of PACKAGE_SCHEMAS) {
        try {
          // The same session: a pool of one connection must not wait for a second one.
          const result = await applySchema(client, schema);
          applied.push(...result.applied.map((name) => `${schema.package}/${name}`));
          alreadyApplied.push(
            ...schema.steps
              .filter((step) => step.version <= result.from)
              .map((step) => `${schema.package}/${step.name}`),
          );
        } catch (cause) {
          return {
            applied,
            alreadyApplied,
            error: new MigrationError(
              'MIGRATION_FAILED',
              `schema of ${schema.package} failed: ${(cause as Error).message}`,
              {
                cause,
              },
            ),
          };
        }
      }
    }
    return { applied, alreadyApplied };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => undefined);
    client.release();
  }
}

/** The old model's storage files (removed by issue 30), one of which every engine-domain database recorded. */
const ENGINE_DOMAIN_MARKERS = new Set(['0001_schemas.sql', '0002_auth_users.sql', '0003_storage_domain.sql']);

/**
 * The storage domain this database was migrated with: the row of
 * `public.oxicloud_storage_domain`, else (a database migrated before that
 * table) what `public.oxicloud_migrations` recorded; `null` when neither
 * says (an empty database). Reads only.
 */
async function recordedDomain(
  client: MigrationClient,
): Promise<{ readonly domain: RecordedStorageDomain; readonly source: string } | null> {
  const { rows: tables } = await client.query(
    `SELECT to_regclass('public.oxicloud_storage_domain') IS NOT NULL AS has_domain,
            to_regclass('public.oxicloud_migrations') IS NOT NULL AS has_migrations`,
  );
  if (tables[0]?.['has_domain'] === true) {
    const { rows } = await client.query('SELECT domain FROM public.oxicloud_storage_domain LIMIT 1');
    const found = rows[0]?.['domain'];
    if (found === 'engine' || found === 'oxicloud') {
      return { domain: found, source: 'recorded in public.oxicloud_storage_domain' };
    }
  }
  if (tables[0]?.['has_migrations'] !== true) return null;
  const { rows } = await client.query('SELECT name FROM public.oxicloud_migrations');
  const names = rows.map((row) => String(row['name']));
  if (names.some((name) => ENGINE_DOMAIN_MARKERS.has(name))) {
    return { domain: 'engine', source: "its public.oxicloud_migrations lists the engine's storage files" };
  }
  const oxicloud = new Set(readOxiCloudDomainFiles().map((file) => file.name));
  if (names.some((name) => oxicloud.has(name))) {
    return { domain: 'oxicloud', source: "its public.oxicloud_migrations lists OxiCloud's domain files" };
  }
  return null;
}
