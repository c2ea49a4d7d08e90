import { type Kysely, sql } from 'kysely';
import type { StorageDatabase } from './database.js';

/**
 * The planner's row estimate (`pg_class.reltuples`) summed over `tables`
 * (schema-qualified names): cheap, for progress and ETA. `null` when none
 * of them has been analysed yet (reltuples = -1).
 */
export async function estimateRowsOf(
  db: Kysely<StorageDatabase>,
  tables: readonly string[],
): Promise<number | null> {
  const { rows } = await sql<{ total: number | null }>`
    SELECT sum(reltuples)::float8 AS total
      FROM pg_class
     WHERE oid IN (${sql.join(tables.map((t) => sql`${t}::regclass`))})
       AND reltuples >= 0`.execute(db);
  const total = rows[0]?.total;
  return total === null || total === undefined ? null : Math.round(total);
}
