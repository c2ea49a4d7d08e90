import type { ColumnType } from 'kysely';

/**
 * The Postgres column types every table typing shares (OxiCloud's, in
 * `../oxicloud/database.ts`). `BIGINT` columns arrive from `pg` as strings:
 * select them as {@link PgBigint} and convert with {@link bigintToNumber},
 * in one place.
 */

/** A `BIGINT` column: a string when read, a number/bigint/string when written. */
export type PgBigint = ColumnType<string, number | bigint | string, number | bigint | string>;
/** A nullable `BIGINT` column. */
export type PgNullableBigint = ColumnType<
  string | null,
  number | bigint | string | null,
  number | bigint | string | null
>;
/** A `TIMESTAMPTZ` column with a default. */
export type PgTimestampDefault = ColumnType<Date, Date | string | undefined, Date | string>;
/** A nullable `TIMESTAMPTZ` column. */
export type PgNullableTimestamp = ColumnType<
  Date | null,
  Date | string | null | undefined,
  Date | string | null
>;

/** The subset of `pg`'s Pool (or Client) a plain-SQL repository needs. */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/**
 * A `BIGINT` (or `COUNT(*)`) value from `pg` → number. Throws when it is
 * beyond 2^53 − 1, where a JS number would silently lose precision.
 */
export function bigintToNumber(value: string | number | bigint | null | undefined): number {
  if (value === null || value === undefined) return 0;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) {
    throw new RangeError(`BIGINT value ${String(value)} is not a safe integer (beyond 2^53 - 1)`);
  }
  return n;
}
