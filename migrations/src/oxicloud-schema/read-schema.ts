import type { MigrationClient } from '../migrate.js';
import type {
  CheckDescription,
  ColumnDescription,
  EnumDescription,
  ExtensionDescription,
  ForeignKeyDescription,
  IndexDescription,
  KeyDescription,
  OnDelete,
  SchemaDescription,
  TableDescription,
  TriggerDescription,
  TriggerEvent,
  ViewDescription,
} from './types.js';

type Row = Record<string, unknown>;

const ON_DELETE: Record<string, OnDelete> = {
  a: 'no action',
  r: 'restrict',
  c: 'cascade',
  n: 'set null',
  d: 'set default',
};

// pg_trigger.tgtype bits (src/include/catalog/pg_trigger.h).
const TRIGGER_ROW = 1;
const TRIGGER_BEFORE = 2;
const TRIGGER_INSERT = 4;
const TRIGGER_DELETE = 8;
const TRIGGER_UPDATE = 16;
const TRIGGER_TRUNCATE = 32;
const TRIGGER_INSTEAD = 64;

const key = (schema: unknown, name: unknown) => `${String(schema)}.${String(name)}`;

function groupBy(rows: Row[]): Map<string, Row[]> {
  const map = new Map<string, Row[]>();
  for (const row of rows) {
    const k = key(row['schema'], row['table']);
    const list = map.get(k);
    if (list) list.push(row);
    else map.set(k, [row]);
  }
  return map;
}

function triggerOf(row: Row): TriggerDescription {
  const type = Number(row['tgtype']);
  const events: TriggerEvent[] = [];
  if (type & TRIGGER_INSERT) events.push('insert');
  if (type & TRIGGER_UPDATE) events.push('update');
  if (type & TRIGGER_DELETE) events.push('delete');
  if (type & TRIGGER_TRUNCATE) events.push('truncate');
  const constraint = row['is_constraint'] === true;
  return {
    name: String(row['name']),
    timing: type & TRIGGER_INSTEAD ? 'instead of' : type & TRIGGER_BEFORE ? 'before' : 'after',
    events,
    level: type & TRIGGER_ROW ? 'row' : 'statement',
    updateOf: (row['update_of'] as string[] | null) ?? [],
    deferral: !constraint
      ? null
      : row['deferrable'] !== true
        ? 'not deferrable'
        : row['initially_deferred'] === true
          ? 'deferrable initially deferred'
          : 'deferrable initially immediate',
    function: String(row['function']),
  };
}

/**
 * The key columns of a `CREATE INDEX … USING method (a, b DESC, c public.gin_trgm_ops) …` as
 * `pg_get_indexdef` prints them: split at the commas outside parentheses and quotes.
 */
export function keyColumnsOf(definition: string): string[] {
  const start = definition.indexOf('(', definition.indexOf(' USING '));
  const columns: string[] = [];
  let depth = 0;
  let quoted = false;
  let current = '';
  for (let i = start + 1; i < definition.length; i++) {
    const ch = definition[i] as string;
    if (quoted) {
      current += ch;
      if (ch === "'") quoted = false;
      continue;
    }
    if (ch === "'") quoted = true;
    else if (ch === '(') depth++;
    else if (ch === ')') {
      if (depth === 0) break;
      depth--;
    } else if (ch === ',' && depth === 0) {
      columns.push(current.trim());
      current = '';
      continue;
    }
    current += ch;
  }
  columns.push(current.trim());
  return columns;
}

/**
 * Reads a live database's catalog into a {@link SchemaDescription}: for the
 * schemas named, every table (columns, primary key, unique and check
 * constraints, foreign keys, the indexes that back no constraint, the
 * triggers Postgres does not make for itself), view, and enum type; and
 * every extension of the database. `outOfScope` is empty.
 *
 * Runs in one read-only transaction with an empty `search_path`, so names
 * and expressions print as `pg_dump` prints them (`public.ltree`,
 * `'{}'::jsonb`). `client` must be one session (a `pg` Client or a pool's
 * client, not a Pool).
 *
 * @example
 * ```ts
 * const client = await pool.connect();
 * try {
 *   const live = await readSchema(client, OXICLOUD_SCHEMA.schemas);
 *   console.log(diffSchema(OXICLOUD_SCHEMA, live).join('\n'));
 * } finally {
 *   client.release();
 * }
 * ```
 */
export async function readSchema(
  client: MigrationClient,
  schemas: readonly string[],
): Promise<SchemaDescription> {
  await client.query('BEGIN READ ONLY');
  try {
    await client.query("SET LOCAL search_path = ''");
    const result = await readInTransaction(client, [...schemas]);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

async function readInTransaction(client: MigrationClient, schemas: string[]): Promise<SchemaDescription> {
  const q = async (sql: string) => (await client.query(sql, [schemas])).rows;

  const present = await q('SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname = ANY($1) ORDER BY 1');
  const extensions = (
    await client.query(
      `SELECT e.extname AS name, n.nspname AS schema
         FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
        ORDER BY 1`,
    )
  ).rows.map((r): ExtensionDescription => ({ name: String(r['name']), schema: String(r['schema']) }));

  const enums = (
    await q(
      `SELECT n.nspname AS schema, t.typname AS name,
              array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS labels
         FROM pg_catalog.pg_type t
         JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
         JOIN pg_catalog.pg_enum e ON e.enumtypid = t.oid
        WHERE n.nspname = ANY($1)
        GROUP BY 1, 2 ORDER BY 1, 2`,
    )
  ).map(
    (r): EnumDescription => ({
      schema: String(r['schema']),
      name: String(r['name']),
      labels: r['labels'] as string[],
    }),
  );

  const relations = await q(
    `SELECT n.nspname AS schema, c.relname AS table, c.relkind::text AS kind
       FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ANY($1) AND c.relkind IN ('r', 'p', 'v', 'm')
      ORDER BY 1, 2`,
  );

  const columns = groupBy(
    await q(
      `SELECT n.nspname AS schema, c.relname AS table, a.attname AS name,
              pg_catalog.format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null,
              pg_catalog.pg_get_expr(d.adbin, d.adrelid) AS default, a.attidentity::text AS identity
         FROM pg_catalog.pg_attribute a
         JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE n.nspname = ANY($1) AND c.relkind IN ('r', 'p', 'v', 'm') AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY 1, 2, a.attnum`,
    ),
  );

  const constraints = groupBy(
    await q(
      `SELECT n.nspname AS schema, c.relname AS table, k.conname AS name, k.contype::text AS type,
              pg_catalog.pg_get_constraintdef(k.oid) AS definition,
              ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY u(attnum, i)
                      JOIN pg_catalog.pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.attnum
                     ORDER BY u.i) AS columns,
              fn.nspname AS ref_schema, fc.relname AS ref_table,
              ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY u(attnum, i)
                      JOIN pg_catalog.pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.attnum
                     ORDER BY u.i) AS ref_columns,
              k.confdeltype::text AS on_delete
         FROM pg_catalog.pg_constraint k
         JOIN pg_catalog.pg_class c ON c.oid = k.conrelid
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_catalog.pg_class fc ON fc.oid = k.confrelid
         LEFT JOIN pg_catalog.pg_namespace fn ON fn.oid = fc.relnamespace
        WHERE n.nspname = ANY($1) AND k.contype IN ('p', 'u', 'c', 'f')
        ORDER BY 1, 2, k.conname`,
    ),
  );

  const indexes = groupBy(
    await q(
      `SELECT n.nspname AS schema, c.relname AS table, ic.relname AS name, i.indisunique AS unique,
              am.amname AS method,
              pg_catalog.pg_get_indexdef(i.indexrelid) AS definition,
              pg_catalog.pg_get_expr(i.indpred, i.indrelid) AS predicate
         FROM pg_catalog.pg_index i
         JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
         JOIN pg_catalog.pg_class c ON c.oid = i.indrelid
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_catalog.pg_am am ON am.oid = ic.relam
        WHERE n.nspname = ANY($1)
          AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint k WHERE k.conindid = i.indexrelid)
        ORDER BY 1, 2, 3`,
    ),
  );

  const triggers = groupBy(
    await q(
      `SELECT n.nspname AS schema, c.relname AS table, t.tgname AS name, t.tgtype::int AS tgtype,
              t.tgconstraint <> 0 AS is_constraint, t.tgdeferrable AS deferrable,
              t.tginitdeferred AS initially_deferred,
              ARRAY(SELECT a.attname::text FROM unnest(t.tgattr::int2[]) u(attnum)
                      JOIN pg_catalog.pg_attribute a ON a.attrelid = t.tgrelid AND a.attnum = u.attnum
                     ORDER BY u.attnum) AS update_of,
              fnn.nspname || '.' || p.proname AS function
         FROM pg_catalog.pg_trigger t
         JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid
         JOIN pg_catalog.pg_namespace fnn ON fnn.oid = p.pronamespace
        WHERE n.nspname = ANY($1) AND NOT t.tgisinternal
        ORDER BY 1, 2, 3`,
    ),
  );

  const tables: TableDescription[] = [];
  const views: ViewDescription[] = [];
  for (const rel of relations) {
    const k = key(rel['schema'], rel['table']);
    const schema = String(rel['schema']);
    const name = String(rel['table']);
    const cols = columns.get(k) ?? [];
    if (rel['kind'] === 'v' || rel['kind'] === 'm') {
      views.push({
        schema,
        name,
        columns: cols.map((c) => ({ name: String(c['name']), type: String(c['type']) })),
      });
      continue;
    }
    const cons = constraints.get(k) ?? [];
    const keyOf = (c: Row): KeyDescription => ({
      name: String(c['name']),
      columns: c['columns'] as string[],
    });
    const primary = cons.find((c) => c['type'] === 'p');
    tables.push({
      schema,
      name,
      columns: cols.map(
        (c): ColumnDescription => ({
          name: String(c['name']),
          type: String(c['type']),
          nullable: c['not_null'] !== true,
          default: c['default'] === null ? null : String(c['default']),
          identity: c['identity'] === 'a' ? 'always' : c['identity'] === 'd' ? 'by default' : null,
        }),
      ),
      primaryKey: primary ? keyOf(primary) : null,
      uniques: cons.filter((c) => c['type'] === 'u').map(keyOf),
      checks: cons
        .filter((c) => c['type'] === 'c')
        .map((c): CheckDescription => ({ name: String(c['name']), definition: String(c['definition']) })),
      foreignKeys: cons
        .filter((c) => c['type'] === 'f')
        .map(
          (c): ForeignKeyDescription => ({
            name: String(c['name']),
            columns: c['columns'] as string[],
            references: {
              schema: String(c['ref_schema']),
              table: String(c['ref_table']),
              columns: c['ref_columns'] as string[],
            },
            onDelete: ON_DELETE[String(c['on_delete'])] ?? 'no action',
          }),
        ),
      indexes: (indexes.get(k) ?? []).map(
        (i): IndexDescription => ({
          name: String(i['name']),
          unique: i['unique'] === true,
          method: String(i['method']),
          columns: keyColumnsOf(String(i['definition'])),
          predicate: i['predicate'] === null ? null : String(i['predicate']),
        }),
      ),
      triggers: (triggers.get(k) ?? []).map(triggerOf),
    });
  }

  return {
    schemas: present.map((r) => String(r['nspname'])),
    extensions,
    enums,
    tables,
    views,
    outOfScope: [],
  };
}
