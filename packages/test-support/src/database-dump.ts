import type pg from 'pg';

/** What {@link dumpDatabase} leaves out. */
export interface DumpOptions {
  /** Schemas whose objects and rows are left out (e.g. the engine's own). */
  readonly excludeSchemas?: readonly string[];
}

/**
 * A logical dump of a database as one text, for a before/after comparison
 * ("nothing of it changed"): every schema, extension, table with its columns,
 * constraints, indexes, triggers, views, functions and enum types (their
 * definitions as Postgres prints them), the sequences' values, and every
 * table's rows (each row as text, in text order). Two dumps are equal when
 * nothing outside `excludeSchemas` changed, `_sqlx_migrations` included.
 *
 * Done in SQL rather than with `pg_dump`, whose client must not be older than
 * the server (the test servers are Postgres 15 and 18).
 */
export async function dumpDatabase(pool: pg.Pool, options: DumpOptions = {}): Promise<string> {
  const excluded = [...(options.excludeSchemas ?? [])];
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const ours = `n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema' AND NOT (n.nspname = ANY($1::text[]))`;
    const { rows: catalog } = await client.query<{ item: string }>(
      `SELECT 'schema ' || n.nspname AS item FROM pg_namespace n WHERE ${ours}
       UNION ALL
       SELECT 'extension ' || extname || ' ' || extversion FROM pg_extension
       UNION ALL
       SELECT 'column ' || n.nspname || '.' || c.relname || '.' || a.attname || ' ' ||
              pg_catalog.format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END ||
              COALESCE(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '')
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND ${ours}
       UNION ALL
       SELECT 'constraint ' || n.nspname || '.' || c.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid)
         FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${ours}
       UNION ALL
       SELECT 'index ' || pg_get_indexdef(i.indexrelid)
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${ours}
       UNION ALL
       SELECT 'trigger ' || pg_get_triggerdef(t.oid) || CASE t.tgenabled WHEN 'D' THEN ' (disabled)' ELSE '' END
         FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE NOT t.tgisinternal AND ${ours}
       UNION ALL
       SELECT 'view ' || n.nspname || '.' || c.relname || ' ' || pg_get_viewdef(c.oid)
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('v', 'm') AND ${ours}
       UNION ALL
       SELECT 'function ' || pg_get_functiondef(p.oid)
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE p.prokind IN ('f', 'p') AND ${ours}
          AND NOT EXISTS (SELECT 1 FROM pg_depend dep WHERE dep.objid = p.oid AND dep.deptype = 'e')
       UNION ALL
       SELECT 'enum ' || n.nspname || '.' || t.typname || ' ' || string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
         FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace JOIN pg_enum e ON e.enumtypid = t.oid
        WHERE ${ours} GROUP BY n.nspname, t.typname
       UNION ALL
       SELECT 'sequence ' || n.nspname || '.' || c.relname
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'S' AND ${ours}
       ORDER BY 1`,
      [excluded],
    );
    const lines = catalog.map((row) => row.item);
    const { rows: tables } = await client.query<{ schema: string; name: string; kind: string }>(
      `SELECT n.nspname AS schema, c.relname AS name, c.relkind::text AS kind
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p', 'S') AND ${ours}
          AND NOT EXISTS (SELECT 1 FROM pg_depend dep WHERE dep.objid = c.oid AND dep.deptype = 'e')
        ORDER BY 1, 2`,
      [excluded],
    );
    for (const table of tables) {
      const name = `"${table.schema.replaceAll('"', '""')}"."${table.name.replaceAll('"', '""')}"`;
      if (table.kind === 'S') {
        const { rows } = await client.query(`SELECT last_value::text AS v, is_called FROM ${name}`);
        lines.push(
          `sequence value ${table.schema}.${table.name} ${rows[0]?.['v']} ${rows[0]?.['is_called']}`,
        );
        continue;
      }
      const { rows } = await client.query<{ row: string }>(`SELECT t::text AS row FROM ${name} t ORDER BY 1`);
      lines.push(`rows ${table.schema}.${table.name} (${rows.length})`, ...rows.map((r) => `  ${r.row}`));
    }
    await client.query('COMMIT');
    return lines.join('\n');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
