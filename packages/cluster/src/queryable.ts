/** Rows of one statement. */
export interface QueryResult {
  readonly rows: Array<Record<string, unknown>>;
  readonly rowCount: number | null;
}

/** The subset of pg's `Pool` (or `Client`) the package uses: one statement at a time. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<QueryResult>;
}

/** A `timestamptz` column as a `Date` (pg parses it), or `null`. */
export function dateOrNull(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  return value instanceof Date ? value : new Date(String(value));
}
