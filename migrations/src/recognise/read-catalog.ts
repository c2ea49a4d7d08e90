import type { MigrationClient } from '../migrate.js';
import { FOUND_TABLES_LISTED } from './recognition.js';

/** A relation recognition looks at: its kind, columns and whether this role may read its rows. */
export interface ProbedRelation {
  /** `pg_class.relkind`: `r` table, `p` partitioned table, `v` view, … */
  readonly kind: string;
  /** Column name → its type as `format_type` prints it with an empty `search_path` (`storage.grant_role`) and NOT NULL. */
  readonly columns: ReadonlyMap<string, { readonly type: string; readonly notNull: boolean }>;
  /** USAGE on its schema and SELECT on it. */
  readonly readable: boolean;
}

/** What the catalog holds that recognition needs. Names are `schema.name`. */
export interface Catalog {
  /** The schema `_sqlx_migrations` was looked for in first (the connection's current schema). */
  readonly currentSchema: string | null;
  /** The schemas that are neither the system's nor an extension's. */
  readonly schemas: readonly string[];
  /** The relations of {@link PROBED_RELATIONS} (and `<current schema>._sqlx_migrations`) that exist. */
  readonly relations: ReadonlyMap<string, ProbedRelation>;
  /** `schema.table.constraint` → `pg_get_constraintdef`, for {@link PROBED_CONSTRAINTS} that exist. */
  readonly constraints: ReadonlyMap<string, string>;
  /** The functions of {@link PROBED_FUNCTIONS} that exist. */
  readonly functions: ReadonlySet<string>;
  /** The first {@link FOUND_TABLES_LISTED} user tables, views and foreign tables by name (extensions' own left out). */
  readonly tables: readonly string[];
  /** How many there are in all. */
  readonly tableCount: number;
}

/** Whether `relation` (`schema.name`) exists and has `column`. */
export function hasColumn(catalog: Catalog, relation: string, column: string): boolean {
  return catalog.relations.get(relation)?.columns.has(column) === true;
}

/** The relations whose presence, columns or rows recognition reads. */
export const PROBED_RELATIONS: readonly (readonly [schema: string, name: string])[] = [
  ['public', '_sqlx_migrations'],
  ['public', 'oxicloud_migrations'],
  ['auth', 'users'],
  ['storage', 'folders'],
  ['storage', 'files'],
  ['storage', 'drives'],
  ['storage', 'blobs'],
  ['storage', 'chunk_manifests'],
  ['storage', 'webdav_dead_properties'],
  ['storage', 'role_grants'],
  ['storage', 'trash_items'],
  ['jobs', 'recoverable_runs'],
  ['jobs', 'run_findings'],
];

/** The constraints whose presence or definition recognition reads: `[schema, table, constraint]`. */
export const PROBED_CONSTRAINTS: readonly (readonly [schema: string, table: string, name: string])[] = [
  ['storage', 'drives', 'drives_personal_quota_null'],
  ['storage', 'role_grants', 'role_grants_resource_type_check'],
];

/** The functions whose presence recognition reads: `[schema, name]`. */
export const PROBED_FUNCTIONS: readonly (readonly [schema: string, name: string])[] = [
  ['public', 'oxicloud_uuid_v7'],
];

/** Schemas of the system: `pg_catalog`, `information_schema`, and `pg_toast`, `pg_temp_N`, … */
const NOT_SYSTEM = (alias: string) =>
  `${alias}.nspname <> 'information_schema' AND ${alias}.nspname NOT LIKE 'pg\\_%'`;

/** Not a member of an extension (`pg_depend.deptype = 'e'`). */
const NOT_EXTENSIONS = (catalog: string, alias: string) =>
  `NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                WHERE d.classid = '${catalog}'::pg_catalog.regclass AND d.objid = ${alias}.oid AND d.deptype = 'e')`;

/**
 * Reads what recognition needs from the catalog, in the caller's
 * transaction; the caller has set an empty `search_path` after reading
 * `current_schema()`.
 */
export async function readCatalog(
  client: MigrationClient,
  currentSchema: string | null,
  sidecarSchema?: string,
): Promise<Catalog> {
  const probed = [
    ...PROBED_RELATIONS,
    ...(currentSchema ? [[currentSchema, '_sqlx_migrations'] as const] : []),
    // The engine's own schema beside OxiCloud: its bookkeeping, runs and findings.
    ...(sidecarSchema
      ? ([
          [sidecarSchema, 'migrations'],
          [sidecarSchema, 'recoverable_runs'],
          [sidecarSchema, 'run_findings'],
        ] as const)
      : []),
  ];

  const schemas = (
    await client.query(
      `SELECT n.nspname AS name,
              EXISTS (SELECT 1 FROM pg_catalog.pg_class c
                       WHERE c.relnamespace = n.oid AND ${NOT_EXTENSIONS('pg_catalog.pg_class', 'c')}) AS holds_relations
         FROM pg_catalog.pg_namespace n
        WHERE ${NOT_SYSTEM('n')} AND ${NOT_EXTENSIONS('pg_catalog.pg_namespace', 'n')}
        ORDER BY 1`,
    )
  ).rows
    .filter((r) => r['name'] !== 'public' || r['holds_relations'] === true)
    .map((r) => String(r['name']));

  const relationRows = (
    await client.query(
      `SELECT n.nspname AS schema, c.relname AS name, c.relkind::text AS kind,
              pg_catalog.has_schema_privilege(n.oid, 'USAGE')
                AND pg_catalog.has_table_privilege(c.oid, 'SELECT') AS readable,
              a.attname AS column, pg_catalog.format_type(a.atttypid, a.atttypmod) AS type,
              a.attnotnull AS not_null
         FROM pg_catalog.pg_class c
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE (n.nspname, c.relname) IN (SELECT * FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[])))
          AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
        ORDER BY 1, 2, a.attnum`,
      [probed.map(([s]) => s), probed.map(([, n]) => n)],
    )
  ).rows;
  const relations = new Map<
    string,
    { kind: string; readable: boolean; columns: Map<string, { type: string; notNull: boolean }> }
  >();
  for (const row of relationRows) {
    const name = `${String(row['schema'])}.${String(row['name'])}`;
    let relation = relations.get(name);
    if (!relation) {
      relation = { kind: String(row['kind']), readable: row['readable'] === true, columns: new Map() };
      relations.set(name, relation);
    }
    if (row['column'] !== null) {
      relation.columns.set(String(row['column']), {
        type: String(row['type']),
        notNull: row['not_null'] === true,
      });
    }
  }

  const constraints = new Map(
    (
      await client.query(
        `SELECT n.nspname || '.' || c.relname || '.' || k.conname AS name,
                pg_catalog.pg_get_constraintdef(k.oid) AS definition
           FROM pg_catalog.pg_constraint k
           JOIN pg_catalog.pg_class c ON c.oid = k.conrelid
           JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
          WHERE (n.nspname, c.relname, k.conname)
                IN (SELECT * FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::text[])))`,
        [
          PROBED_CONSTRAINTS.map(([s]) => s),
          PROBED_CONSTRAINTS.map(([, t]) => t),
          PROBED_CONSTRAINTS.map(([, , k]) => k),
        ],
      )
    ).rows.map((r) => [String(r['name']), String(r['definition'])] as const),
  );

  const functions = new Set(
    (
      await client.query(
        `SELECT DISTINCT n.nspname || '.' || p.proname AS name
           FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
          WHERE (n.nspname, p.proname) IN (SELECT * FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[])))`,
        [PROBED_FUNCTIONS.map(([s]) => s), PROBED_FUNCTIONS.map(([, f]) => f)],
      )
    ).rows.map((r) => String(r['name'])),
  );

  const tableRows = (
    await client.query(
      `SELECT n.nspname || '.' || c.relname AS name, pg_catalog.count(*) OVER () AS total
         FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND ${NOT_SYSTEM('n')}
          AND ${NOT_EXTENSIONS('pg_catalog.pg_class', 'c')}
        ORDER BY n.nspname, c.relname
        LIMIT $1`,
      [FOUND_TABLES_LISTED],
    )
  ).rows;

  return {
    currentSchema,
    schemas,
    relations,
    constraints,
    functions,
    tables: tableRows.map((r) => String(r['name'])),
    tableCount: Number(tableRows[0]?.['total'] ?? 0),
  };
}
