import { CompiledQuery, type Kysely } from 'kysely';

/** Rows of one SQL statement (or of the last one of a script). */
export type SchemaRows = Array<Record<string, unknown>>;

/** One connection to run SQL on, in order: what the schema functions need. */
export type SchemaQuery = (text: string, values?: readonly unknown[]) => Promise<SchemaRows>;

/** The subset of pg's `Pool` the schema functions use. */
export interface SchemaPool {
  readonly totalCount: number;
  connect(): Promise<{
    query(text: string, values?: unknown[]): Promise<{ rows: SchemaRows }>;
    release(err?: boolean | Error): void;
  }>;
}

/** A connected pg `Client` or `PoolClient` (the caller's session, used as is). */
export interface SchemaClient {
  query(text: string, values?: unknown[]): Promise<{ rows: SchemaRows }>;
}

/**
 * Where `migrate()` and the schema checks run: a pg `Pool`, a connected pg
 * `Client`/`PoolClient`, or a consumer's `Kysely` instance (any database type).
 */
// biome-ignore lint/suspicious/noExplicitAny: a consumer's Kysely has its own database type
export type SchemaDatabase = SchemaPool | SchemaClient | Kysely<any>;

function isKysely(db: SchemaDatabase): db is Kysely<unknown> {
  return typeof (db as Kysely<unknown>).executeQuery === 'function' && 'connection' in db;
}

function isPool(db: SchemaDatabase): db is SchemaPool {
  return (
    typeof (db as SchemaPool).connect === 'function' && typeof (db as SchemaPool).totalCount === 'number'
  );
}

/** Runs `fn` on one connection of `db` (a pool's connection is released after). */
export async function withSchemaSession<T>(
  db: SchemaDatabase,
  fn: (query: SchemaQuery) => Promise<T>,
): Promise<T> {
  if (isKysely(db)) {
    return db
      .connection()
      .execute((conn) =>
        fn(
          async (text, values = []) =>
            (await conn.executeQuery(CompiledQuery.raw(text, [...values]))).rows as SchemaRows,
        ),
      );
  }
  if (isPool(db)) {
    const client = await db.connect();
    try {
      return await fn(
        async (text, values) => (await client.query(text, values ? [...values] : undefined)).rows,
      );
    } finally {
      client.release();
    }
  }
  if (typeof (db as SchemaClient)?.query !== 'function') {
    throw new TypeError('expected a pg Pool, a connected pg Client or a Kysely instance');
  }
  return fn(async (text, values) => (await db.query(text, values ? [...values] : undefined)).rows);
}
