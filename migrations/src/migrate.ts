import { applySchema } from '@oxicloud/recoverable';
import { MigrationError } from './errors.js';
import { type MigrationFile, readMigrationFiles } from './files.js';
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
  /** Defaults to this package's own SQL files. */
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
  const files = options.files ?? readMigrationFiles();
  const client = await pool.connect();
  const applied: string[] = [];
  const alreadyApplied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS public.oxicloud_migrations (
        name        TEXT PRIMARY KEY,
        checksum    TEXT NOT NULL,
        applied_at  TIMESTAMPTZ NOT NULL DEFAULT NOW()
      )`);
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
