/**
 * The shape of a schema description: what {@link OXICLOUD_SCHEMA} says
 * OxiCloud's schema is, and what `readSchema` reads from a live database.
 * Names and expressions are spelled as Postgres prints them with an empty
 * `search_path` (as `pg_dump` does): `public.ltree`, `storage.grant_role`,
 * `character varying(64)`, `'{}'::jsonb`.
 *
 * @module
 */

/** Marks a column whose default the description does not care about (any, or none, is fine). */
export const ANY_DEFAULT: unique symbol = Symbol('any default');

/** A column's default: the expression as `pg_get_expr` prints it, `null` for none, or {@link ANY_DEFAULT}. */
export type ColumnDefault = string | null | typeof ANY_DEFAULT;

export interface ColumnDescription {
  readonly name: string;
  /** As `format_type(atttypid, atttypmod)` prints it: `uuid`, `character varying(64)`, `public.ltree`. */
  readonly type: string;
  readonly nullable: boolean;
  readonly default: ColumnDefault;
  /** `always` / `by default` for an identity column; absent (or `null` when read) otherwise. */
  readonly identity?: 'always' | 'by default' | null;
}

export interface CheckDescription {
  readonly name: string;
  /** What the check means, in words (descriptions only). */
  readonly meaning?: string;
  /** As `pg_get_constraintdef(oid)` prints it (`CHECK (...)`); compared only when given. */
  readonly definition?: string;
}

export interface KeyDescription {
  /** Compared only when given. */
  readonly name?: string;
  readonly columns: readonly string[];
}

/** What an `ON DELETE` clause says (`no action` when none was written). */
export type OnDelete = 'no action' | 'restrict' | 'cascade' | 'set null' | 'set default';

export interface ForeignKeyDescription {
  /** Compared only when given (OxiCloud's are Postgres's generated `<table>_<column>_fkey`). */
  readonly name?: string;
  readonly columns: readonly string[];
  readonly references: {
    readonly schema: string;
    readonly table: string;
    readonly columns: readonly string[];
  };
  readonly onDelete: OnDelete;
}

export interface IndexDescription {
  readonly name: string;
  /** Each compared only when given. */
  readonly unique?: boolean;
  /** The access method: `btree`, `gin`, `gist`. */
  readonly method?: string;
  /** Key columns (or expressions) as `pg_get_indexdef` prints them in the full definition: `b DESC`, `name public.gin_trgm_ops`. */
  readonly columns?: readonly string[];
  /** The partial index's predicate as `pg_get_expr(indpred, indrelid)` prints it; `null` for none. */
  readonly predicate?: string | null;
}

export type TriggerEvent = 'insert' | 'update' | 'delete' | 'truncate';

export interface TriggerDescription {
  readonly name: string;
  readonly timing: 'before' | 'after' | 'instead of';
  /** In the order insert, update, delete, truncate. */
  readonly events: readonly TriggerEvent[];
  readonly level: 'row' | 'statement';
  /** For `UPDATE OF a, b`: the columns, in table order; absent or empty for any update. */
  readonly updateOf?: readonly string[];
  /** A constraint trigger's deferral; absent or `null` for an ordinary trigger. */
  readonly deferral?:
    | 'not deferrable'
    | 'deferrable initially immediate'
    | 'deferrable initially deferred'
    | null;
  /** The trigger function, schema-qualified; compared only when given. */
  readonly function?: string;
}

export interface TableDescription {
  readonly schema: string;
  readonly name: string;
  readonly columns: readonly ColumnDescription[];
  readonly primaryKey: KeyDescription | null;
  readonly uniques: readonly KeyDescription[];
  readonly checks: readonly CheckDescription[];
  readonly foreignKeys: readonly ForeignKeyDescription[];
  /** The indexes the jobs rely on (a description); every index not backing a constraint (a read). */
  readonly indexes: readonly IndexDescription[];
  readonly triggers: readonly TriggerDescription[];
}

export interface ViewDescription {
  readonly schema: string;
  readonly name: string;
  readonly columns: ReadonlyArray<{ readonly name: string; readonly type: string }>;
}

export interface EnumDescription {
  readonly schema: string;
  readonly name: string;
  /** In sort order. */
  readonly labels: readonly string[];
}

export interface ExtensionDescription {
  readonly name: string;
  readonly schema: string;
}

/** A table the description knowingly leaves out: the diff does not call it extra. */
export interface OutOfScopeTable {
  readonly schema: string;
  readonly name: string;
  readonly why: string;
}

export interface SchemaDescription {
  readonly schemas: readonly string[];
  readonly extensions: readonly ExtensionDescription[];
  readonly enums: readonly EnumDescription[];
  readonly tables: readonly TableDescription[];
  readonly views: readonly ViewDescription[];
  readonly outOfScope: readonly OutOfScopeTable[];
}
