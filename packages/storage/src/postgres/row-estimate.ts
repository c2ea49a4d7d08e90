import { type Kysely, sql } from 'kysely';

/**
 * The planner's row estimate (`pg_class.reltuples`) summed over `tables`
 * (schema-qualified names): cheap, for progress and ETA. Tables never
 * analysed yet (reltuples = -1) are counted exactly instead.
 */
export async function estimateRowsOf(
  // biome-ignore lint/suspicious/noExplicitAny: reads only the catalog and the tables it is named
  db: Kysely<any>,
  tables: readonly string[],
): Promise<number | null> {
  const { rows } = await sql<{ total: number | null }>`
    SELECT sum(reltuples)::float8 AS total
      FROM pg_class
     WHERE oid IN (${sql.join(tables.map((t) => sql`${t}::regclass`))})
       AND reltuples >= 0`.execute(db);
  const total = rows[0]?.total;
  if (total !== null && total !== undefined) return Math.round(total);
  // Never analysed (a fresh or freshly loaded table): count once, so the
  // first run still gets a total and an ETA.
  const counts = await Promise.all(
    tables.map((t) => sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(t)}`.execute(db)),
  );
  return counts.reduce((sum, r) => sum + Number(r.rows[0]?.n ?? 0), 0);
}
