import { engineSchema, SIDECAR_ENGINE_SCHEMA } from '@oxicloud/recoverable';
import { MigrationError } from '../errors.js';
import { type MigrationClient, sidecarBookkeeping } from '../migrate.js';
import { countEngineMigrations, countJobs, countSqlxMigrations, sqlxSchemaOf } from './count-rows.js';
import { oldModelMarkers } from './old-model-markers.js';
import { eraOf, hasStorageDomain, oxicloudFacts } from './oxicloud-facts.js';
import { type Catalog, readCatalog } from './read-catalog.js';
import type { Recognition } from './recognition.js';

/** {@link recogniseDatabase}'s options. */
export interface RecogniseOptions {
  /**
   * The engine's own schema beside OxiCloud, whose bookkeeping, runs and
   * findings an `oxicloud` database reports. @defaultValue `oxijobs`
   */
  readonly sidecarSchema?: string;
}

/**
 * Says what a database is before anything writes to it: empty, OxiCloud's
 * own (with its migration eras), the engine's on its old storage model, the
 * engine's on OxiCloud's schema, or unknown (with what was found).
 *
 * Decided in this order:
 * 1. `empty`: no table, view or foreign table outside the system schemas
 *    (extensions' own left out); schemas or functions alone do not count.
 * 2. `oxicloud`: `_sqlx_migrations` in the connection's schema (else
 *    `public`) and the storage tables `auth.users`, `storage.folders`,
 *    `storage.files`. The engine's bookkeeping beside it (sidecar mode,
 *    `<sidecarSchema>.migrations`) is reported (`engineMigrations`, `jobs`),
 *    not a reason for another kind.
 * 3. `engine-old-model`: `public.oxicloud_migrations` and an old-model
 *    marker (`storage.drives.owner_id`, `storage.blobs.deleting_at`,
 *    `public.oxicloud_uuid_v7()`).
 * 4. `engine`: `public.oxicloud_migrations` and the storage tables, no marker.
 * 5. `unknown`: the rest.
 *
 * Runs only reads, in one `REPEATABLE READ READ ONLY` transaction (one
 * snapshot; Postgres refuses any write in it) with an empty `search_path`,
 * and ends it, so the session is left as it was. It needs no privilege to
 * recognise the kind; counting rows (`_sqlx_migrations`,
 * `public.oxicloud_migrations`, the runs and findings) needs USAGE on their
 * schema and SELECT on them, and a count this role may not read is
 * `'not-readable'`. `client` must be one session (a `pg` Client or a pool's
 * client, not a Pool) outside any transaction.
 *
 * @throws {@link MigrationError} `RECOGNITION_FAILED` when a read fails (the
 * connection went away, a lock wait was cancelled; `cause` is Postgres'
 * error), or when the session is inside a transaction: that transaction is
 * the caller's and is left as it was (not committed, not rolled back).
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { describeRecognition, recogniseDatabase } from '@oxicloud/migrations';
 * const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
 * await client.connect();
 * const found = await recogniseDatabase(client);
 * console.log(describeRecognition(found));
 * if (found.kind === 'engine-old-model') process.exit(1);
 * ```
 */
export async function recogniseDatabase(
  client: MigrationClient,
  options: RecogniseOptions = {},
): Promise<Recognition> {
  const sidecarSchema = engineSchema(options.sidecarSchema ?? SIDECAR_ENGINE_SCHEMA);
  let outside: unknown;
  try {
    // Outside a transaction block each statement is its own transaction and starts it: the two times are equal.
    const { rows } = await client.query(
      'SELECT pg_catalog.now() = pg_catalog.statement_timestamp() AS outside_transaction',
    );
    outside = rows[0]?.['outside_transaction'];
  } catch (cause) {
    throw failed(cause);
  }
  if (outside !== true) {
    // The transaction is the caller's, and may write: BEGIN would only warn, COMMIT would end it. Leave it be.
    throw new MigrationError(
      'RECOGNITION_FAILED',
      'recogniseDatabase was given a session inside a transaction; ' +
        'give it a session of its own, outside any transaction',
    );
  }
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  } catch (cause) {
    throw failed(cause);
  }
  try {
    const { rows } = await client.query(
      "SELECT pg_catalog.current_schema() AS schema, pg_catalog.current_setting('transaction_read_only') AS read_only",
    );
    if (rows[0]?.['read_only'] !== 'on') throw new Error('the transaction is not read only');
    const schema = rows[0]?.['schema'];
    const currentSchema = typeof schema === 'string' ? schema : null;
    await client.query("SET LOCAL search_path = ''");
    const result = await recogniseInTransaction(
      client,
      await readCatalog(client, currentSchema, sidecarSchema),
      sidecarSchema,
    );
    await client.query('COMMIT');
    return result;
  } catch (cause) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw failed(cause);
  }
}

function failed(cause: unknown): MigrationError {
  return new MigrationError(
    'RECOGNITION_FAILED',
    `could not read the database's catalog to recognise it: ${(cause as Error).message}`,
    { cause },
  );
}

async function recogniseInTransaction(
  client: MigrationClient,
  catalog: Catalog,
  sidecarSchema: string,
): Promise<Recognition> {
  if (catalog.tableCount === 0) return { kind: 'empty' };

  const storage = hasStorageDomain(catalog);
  const sqlxSchema = sqlxSchemaOf(catalog);
  if (sqlxSchema !== null && storage) {
    const facts = oxicloudFacts(catalog);
    return {
      kind: 'oxicloud',
      era: eraOf(facts),
      migrations: await countSqlxMigrations(client, catalog, sqlxSchema),
      facts,
      engineSchema: sidecarSchema,
      engineMigrations: await countEngineMigrations(client, catalog, sidecarBookkeeping(sidecarSchema)),
      jobs: await countJobs(client, catalog, sidecarSchema),
    };
  }

  const engineMigrations = await countEngineMigrations(client, catalog);
  if (engineMigrations !== null) {
    const markers = oldModelMarkers(catalog);
    if (markers.length > 0) {
      return {
        kind: 'engine-old-model',
        migrations: engineMigrations,
        markers,
        jobs: await countJobs(client, catalog),
      };
    }
    if (storage) {
      const facts = oxicloudFacts(catalog);
      return {
        kind: 'engine',
        era: eraOf(facts),
        migrations: engineMigrations,
        facts,
        jobs: await countJobs(client, catalog),
      };
    }
  }

  return {
    kind: 'unknown',
    found: [...catalog.schemas.map((schema) => `schema ${schema}`), ...catalog.tables],
    tableCount: catalog.tableCount,
  };
}
