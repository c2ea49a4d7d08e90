import type { TestDatabase } from '@oxicloud/test-support';

/** Every schema, relation, function and extension of the database, for a before/after comparison ("nothing was written"). */
export async function databaseCatalog(db: TestDatabase): Promise<string[]> {
  const { rows } = await db.pool.query<{ item: string }>(`
    SELECT 'schema ' || nspname AS item FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'
    UNION ALL
    SELECT c.relkind::text || ' ' || n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
    UNION ALL
    SELECT 'function ' || n.nspname || '.' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
    UNION ALL
    SELECT 'extension ' || extname FROM pg_extension
    ORDER BY 1`);
  return rows.map((r) => r.item);
}
