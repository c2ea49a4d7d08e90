import type pg from 'pg';

/** The subset of a pg client the generator uses (a `pg.PoolClient` fits). */
export type SqlClient = Pick<pg.PoolClient, 'query'>;

/** Runs one statement and returns its rows. */
export async function rows<T extends object>(
  client: SqlClient,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const result = await client.query(sql, params);
  return result.rows as T[];
}

/**
 * BIGINT and NUMERIC arrive from pg as strings: the one place they become
 * numbers. Values beyond 2^53 would lose precision, which byte counts of a
 * generated dataset never reach.
 */
export function toInt(value: unknown): number {
  if (value === null || value === undefined) return 0;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(n))
    throw new TypeError(`expected a whole number from Postgres, got ${JSON.stringify(value)}`);
  return n;
}
