import {
  applySchema,
  DEFAULT_ENGINE_SCHEMA,
  engineSchema,
  inEngineSchema,
  SIDECAR_ENGINE_SCHEMA,
} from '@oxicloud/recoverable';
import { MigrationError } from './errors.js';
import type { MigrationFile } from './files.js';
import {
  engineFiles,
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
   * Not used with `sidecar`.
   * @defaultValue `oxicloud` when `files` is not given; with `files` and no
   * `domain`, no domain is checked or recorded
   */
  readonly domain?: StorageDomain;
  /** Defaults to the files of `domain` ({@link storageDomainFiles}), or {@link engineFiles} with `sidecar`. */
  readonly files?: MigrationFile[];
  /**
   * Apply the packages' schemas after the files (`@oxicloud/recoverable`,
   * then `@oxicloud/consistency`, `@oxicloud/cluster`). @defaultValue true
   */
  readonly packageSchemas?: boolean;
  /**
   * Beside a real OxiCloud (its own database): apply only the engine's own
   * tables, all in {@link engineSchema}, with the bookkeeping there too
   * (`<engineSchema>.migrations`): no storage domain, no extension, nothing in
   * `public` or in any schema of OxiCloud's, `_sqlx_migrations` never read
   * or written. @defaultValue false
   */
  readonly sidecar?: boolean;
  /**
   * The Postgres schema of the engine's own tables (`@oxicloud/recoverable`'s
   * `engine-schema.ts`); a schema a DBA created in advance is used as is.
   * With `sidecar` it may not be `jobs`, which OxiCloud's plans keep for
   * OxiCloud's own tables.
   * @defaultValue `jobs`; {@link SIDECAR_ENGINE_SCHEMA} (`oxijobs`) with `sidecar`
   */
  readonly engineSchema?: string;
}

/** Advisory-lock key: one migration run at a time per database, across processes. */
const LOCK_KEY = 7_420_113_001;

/** Where a run of {@link migrate} keeps its bookkeeping, and what it applies. */
interface MigrationPlan {
  readonly files: readonly MigrationFile[];
  readonly engineSchema: string;
  /** The table of applied names and checksums. */
  readonly bookkeeping: string;
  readonly domain: StorageDomain | undefined;
}

/** The engine's own bookkeeping in sidecar mode: `<engineSchema>.migrations`. */
export function sidecarBookkeeping(engineSchemaName: string): string {
  return `${engineSchemaName}.migrations`;
}

function planOf(options: MigrateOptions): MigrationPlan {
  if (options.sidecar === true) {
    const schema = engineSchema(options.engineSchema ?? SIDECAR_ENGINE_SCHEMA);
    if (schema === DEFAULT_ENGINE_SCHEMA) {
      throw new MigrationError(
        'MIGRATION_FAILED',
        `beside OxiCloud the engine may not use the schema "${DEFAULT_ENGINE_SCHEMA}": OxiCloud's plans keep it for OxiCloud's own tables; ` +
          `use a schema of the engine's own (the default is ${SIDECAR_ENGINE_SCHEMA})`,
      );
    }
    return {
      files: options.files ?? engineFiles(),
      engineSchema: schema,
      bookkeeping: sidecarBookkeeping(schema),
      domain: undefined,
    };
  }
  const domain = options.domain ?? (options.files === undefined ? 'oxicloud' : undefined);
  return {
    files: options.files ?? storageDomainFiles(domain ?? 'oxicloud'),
    engineSchema: engineSchema(options.engineSchema),
    bookkeeping: 'public.oxicloud_migrations',
    domain,
  };
}

/**
 * Applies every migration not yet recorded, then the schemas the packages
 * own (their own runner and version rows in `<engineSchema>.schema_versions`;
 * applied names read `@oxicloud/recoverable/003_run_attempts.sql`), all in
 * **one transaction** under an advisory lock: a run that fails anywhere
 * leaves nothing behind (no table, no schema, no bookkeeping row), and a
 * concurrent run waits, then finds nothing to do. Never throws for a
 * failing migration: the result carries `error` (kysely's Migrator does the
 * same), and `applied` is then empty.
 *
 * By default it builds the storage domain (OxiCloud's schema in this
 * project's SQL) and keeps the engine's tables in `jobs`, its bookkeeping in
 * `public.oxicloud_migrations`. With `sidecar` it writes only the engine's
 * own schema (see {@link MigrateOptions.sidecar}).
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { migrate } from '@oxicloud/migrations';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const result = await migrate(pool);
 * if (result.error) throw result.error;
 * // beside a real OxiCloud: only the schema oxijobs is written
 * await migrate(pool, { sidecar: true });
 * ```
 */
export async function migrate(pool: MigrationPool, options: MigrateOptions = {}): Promise<MigrationResult> {
  let plan: MigrationPlan;
  try {
    plan = planOf(options);
  } catch (cause) {
    const error =
      cause instanceof MigrationError
        ? cause
        : new MigrationError('MIGRATION_FAILED', (cause as Error).message, { cause });
    return { applied: [], alreadyApplied: [], error };
  }
  const { files, domain, bookkeeping } = plan;
  const engine = plan.engineSchema;
  const client = await pool.connect();
  const applied: string[] = [];
  const alreadyApplied: string[] = [];
  // Anything but the COMMIT at the end rolls the whole run back (`finally`): a failure leaves no trace.
  let committed = false;
  const fail = (error: MigrationError): MigrationResult => ({ applied: [], alreadyApplied, error });
  try {
    await client.query('BEGIN');
    // Nodes booting together wait here for the one that migrates, however long it takes: the
    // connection's own lock_timeout (the server sets one on a shared database) is not for this wait.
    await client.query('SET LOCAL lock_timeout = 0');
    await client.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
    if (domain !== undefined) {
      const recorded = await recordedDomain(client);
      if (recorded !== null && recorded.domain !== domain) {
        return fail(
          new MigrationError(
            'DOMAIN_MISMATCH',
            recorded.domain === 'engine'
              ? `this database was migrated with the engine's old storage model "engine" (${recorded.source}), ` +
                  `which this version no longer runs; nothing is migrated from it. Nothing was written`
              : `this database was migrated with the storage domain "${recorded.domain}" (${recorded.source}), ` +
                  `not "${domain}"; a database keeps the storage domain it was first migrated with. Nothing was written`,
          ),
        );
      }
    }
    if (options.sidecar === true) {
      // A schema a DBA created in advance is used as is: CREATE SCHEMA needs a right on the database.
      const { rows } = await client.query('SELECT 1 AS found FROM pg_namespace WHERE nspname = $1', [engine]);
      if (rows.length === 0) await client.query(`CREATE SCHEMA ${engine}`);
    }
    await client.query(`CREATE TABLE IF NOT EXISTS ${bookkeeping} (
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
    const { rows } = await client.query(`SELECT name, checksum FROM ${bookkeeping}`);
    const recorded = new Map(rows.map((r) => [String(r['name']), String(r['checksum'])]));
    for (const file of files) {
      const checksum = recorded.get(file.name);
      if (checksum !== undefined) {
        if (checksum !== file.checksum) {
          return fail(
            new MigrationError(
              'CHECKSUM_MISMATCH',
              `migration ${file.name} was applied with checksum ${checksum} but the file now has ${file.checksum}; ` +
                'applied migrations must not be edited, add a new migration instead. Nothing was written',
            ),
          );
        }
        alreadyApplied.push(file.name);
        continue;
      }
      try {
        await client.query(inEngineSchema(file.sql, engine));
        await client.query(`INSERT INTO ${bookkeeping} (name, checksum) VALUES ($1, $2)`, [
          file.name,
          file.checksum,
        ]);
        applied.push(file.name);
      } catch (cause) {
        return fail(
          new MigrationError(
            'MIGRATION_FAILED',
            `migration ${file.name} failed: ${(cause as Error).message}. Nothing was written (the whole run was rolled back)`,
            { cause },
          ),
        );
      }
    }
    if (options.packageSchemas !== false) {
      for (const schema of PACKAGE_SCHEMAS) {
        try {
          // The same session and transaction: a pool of one connection must not wait for a second one.
          const result = await applySchema(client, schema, { schema: engine, inCallersTransaction: true });
          applied.push(...result.applied.map((name) => `${schema.package}/${name}`));
          alreadyApplied.push(
            ...schema.steps
              .filter((step) => step.version <= result.from)
              .map((step) => `${schema.package}/${step.name}`),
          );
        } catch (cause) {
          return fail(
            new MigrationError(
              'MIGRATION_FAILED',
              `schema of ${schema.package} failed: ${(cause as Error).message}. Nothing was written (the whole run was rolled back)`,
              { cause },
            ),
          );
        }
      }
    }
    await client.query('COMMIT');
    committed = true;
    return { applied, alreadyApplied };
  } catch (cause) {
    return fail(
      new MigrationError('MIGRATION_FAILED', `migrations could not run: ${(cause as Error).message}`, {
        cause,
      }),
    );
  } finally {
    if (!committed) await client.query('ROLLBACK').catch(() => undefined);
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
