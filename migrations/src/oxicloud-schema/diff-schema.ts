import {
  ANY_DEFAULT,
  type ColumnDefault,
  type SchemaDescription,
  type TableDescription,
  type TriggerDescription,
} from './types.js';

const list = (items: readonly string[]) => `(${items.join(', ')})`;
const show = (value: ColumnDefault | undefined) =>
  value === null || value === undefined ? 'none' : value === ANY_DEFAULT ? 'any' : value;
const same = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);
const qualified = (t: { schema: string; name: string }) => `${t.schema}.${t.name}`;

function diffTable(want: TableDescription, have: TableDescription, out: string[]): void {
  const at = qualified(want);
  const push = (line: string) => out.push(`${at}: ${line}`);

  const haveColumns = new Map(have.columns.map((c) => [c.name, c]));
  for (const col of want.columns) {
    const got = haveColumns.get(col.name);
    if (!got) {
      push(`missing column ${col.name} ${col.type}`);
      continue;
    }
    if (got.type !== col.type) push(`column ${col.name}: type ${col.type} described, ${got.type} found`);
    if (got.nullable !== col.nullable) {
      const word = (n: boolean) => (n ? 'nullable' : 'NOT NULL');
      push(`column ${col.name}: ${word(col.nullable)} described, ${word(got.nullable)} found`);
    }
    if (col.default !== ANY_DEFAULT && got.default !== col.default) {
      push(`column ${col.name}: default ${show(col.default)} described, ${show(got.default)} found`);
    }
    if ((col.identity ?? null) !== (got.identity ?? null)) {
      push(
        `column ${col.name}: identity ${col.identity ?? 'none'} described, ${got.identity ?? 'none'} found`,
      );
    }
  }
  const wantColumns = new Set(want.columns.map((c) => c.name));
  for (const col of have.columns) {
    if (!wantColumns.has(col.name)) push(`extra column ${col.name} ${col.type}`);
  }

  if (want.primaryKey && !have.primaryKey) push(`missing primary key ${list(want.primaryKey.columns)}`);
  else if (!want.primaryKey && have.primaryKey) push(`extra primary key ${list(have.primaryKey.columns)}`);
  else if (want.primaryKey && have.primaryKey && !same(want.primaryKey.columns, have.primaryKey.columns)) {
    push(`primary key ${list(want.primaryKey.columns)} described, ${list(have.primaryKey.columns)} found`);
  }

  for (const u of want.uniques) {
    const got = have.uniques.find((h) => same(h.columns, u.columns));
    if (!got) push(`missing unique constraint ${u.name ? `${u.name} ` : ''}${list(u.columns)}`);
    else if (u.name !== undefined && got.name !== u.name) {
      push(`unique constraint ${list(u.columns)}: named ${u.name} described, ${got.name} found`);
    }
  }
  for (const u of have.uniques) {
    if (!want.uniques.some((w) => same(w.columns, u.columns))) {
      push(`extra unique constraint ${u.name} ${list(u.columns)}`);
    }
  }

  for (const c of want.checks) {
    const got = have.checks.find((h) => h.name === c.name);
    if (!got) push(`missing check ${c.name}${c.meaning ? ` (${c.meaning})` : ''}`);
    else if (c.definition !== undefined && got.definition !== c.definition) {
      push(`check ${c.name}: ${c.definition} described, ${got.definition} found`);
    }
  }
  for (const c of have.checks) {
    if (!want.checks.some((w) => w.name === c.name)) push(`extra check ${c.name}: ${c.definition}`);
  }

  for (const fk of want.foreignKeys) {
    const got = have.foreignKeys.find((h) => same(h.columns, fk.columns));
    const target = `${fk.references.schema}.${fk.references.table}${list(fk.references.columns)}`;
    if (!got) {
      push(`missing foreign key ${list(fk.columns)} → ${target} on delete ${fk.onDelete}`);
      continue;
    }
    const found = `${got.references.schema}.${got.references.table}${list(got.references.columns)}`;
    if (found !== target) push(`foreign key ${list(fk.columns)}: → ${target} described, → ${found} found`);
    if (got.onDelete !== fk.onDelete) {
      push(`foreign key ${list(fk.columns)}: on delete ${fk.onDelete} described, ${got.onDelete} found`);
    }
    if (fk.name !== undefined && got.name !== fk.name) {
      push(`foreign key ${list(fk.columns)}: named ${fk.name} described, ${got.name} found`);
    }
  }
  for (const fk of have.foreignKeys) {
    if (!want.foreignKeys.some((w) => same(w.columns, fk.columns))) {
      const target = `${fk.references.schema}.${fk.references.table}${list(fk.references.columns)}`;
      push(`extra foreign key ${fk.name} ${list(fk.columns)} → ${target} on delete ${fk.onDelete}`);
    }
  }

  // Indexes: only the described ones matter (a database may have more).
  for (const ix of want.indexes) {
    const got = have.indexes.find((h) => h.name === ix.name);
    if (!got) {
      push(`missing index ${ix.name}${ix.columns ? ` ${list(ix.columns)}` : ''}`);
      continue;
    }
    if (ix.unique !== undefined && got.unique !== ix.unique) {
      push(
        `index ${ix.name}: ${ix.unique ? 'unique' : 'not unique'} described, ${got.unique ? 'unique' : 'not unique'} found`,
      );
    }
    if (ix.method !== undefined && got.method !== ix.method) {
      push(`index ${ix.name}: method ${ix.method} described, ${got.method} found`);
    }
    if (ix.columns !== undefined && !same(ix.columns, got.columns ?? [])) {
      push(`index ${ix.name}: columns ${list(ix.columns)} described, ${list(got.columns ?? [])} found`);
    }
    if (ix.predicate !== undefined && (got.predicate ?? null) !== ix.predicate) {
      push(`index ${ix.name}: WHERE ${ix.predicate ?? 'none'} described, ${got.predicate ?? 'none'} found`);
    }
  }

  for (const t of want.triggers) {
    const got = have.triggers.find((h) => h.name === t.name);
    if (!got) push(`missing trigger ${t.name} (${triggerShape(t)})`);
    else {
      const wantShape = triggerShape(t);
      const haveShape = triggerShape(got);
      if (wantShape !== haveShape) push(`trigger ${t.name}: ${wantShape} described, ${haveShape} found`);
      if (t.function !== undefined && got.function !== t.function) {
        push(`trigger ${t.name}: function ${t.function} described, ${got.function} found`);
      }
    }
  }
  for (const t of have.triggers) {
    if (!want.triggers.some((w) => w.name === t.name)) push(`extra trigger ${t.name} (${triggerShape(t)})`);
  }
}

/** `after insert or update of name, parent_id, for each row, deferrable initially deferred`. */
function triggerShape(t: TriggerDescription): string {
  const events = t.events.map((e) =>
    e === 'update' && t.updateOf?.length ? `update of ${t.updateOf.join(', ')}` : e,
  );
  const deferral = t.deferral && t.deferral !== null ? `, constraint trigger ${t.deferral}` : '';
  return `${t.timing} ${events.join(' or ')}, for each ${t.level}${deferral}`;
}

/**
 * Compares a description (what the schema should be) with what
 * `readSchema` read. Returns one readable line per difference, in the
 * order schemas, extensions, enums, tables, views; an empty list when the
 * database has everything described. Extra tables, columns, constraints,
 * foreign keys, triggers, enums and views of the described schemas count as
 * differences (unless the table is in `outOfScope`); extra indexes and
 * extensions do not (a database may index more than the jobs rely on).
 *
 * @example
 * ```ts
 * const lines = diffSchema(OXICLOUD_SCHEMA, await readSchema(client, OXICLOUD_SCHEMA.schemas));
 * // ['storage.drives: missing column kind text', 'missing table storage.chunk_manifests']
 * ```
 */
export function diffSchema(want: SchemaDescription, have: SchemaDescription): string[] {
  const out: string[] = [];
  for (const schema of want.schemas) if (!have.schemas.includes(schema)) out.push(`missing schema ${schema}`);

  for (const ext of want.extensions) {
    const got = have.extensions.find((e) => e.name === ext.name);
    if (!got) out.push(`missing extension ${ext.name}`);
    else if (got.schema !== ext.schema) {
      out.push(`extension ${ext.name}: in schema ${ext.schema} described, ${got.schema} found`);
    }
  }

  for (const e of want.enums) {
    const got = have.enums.find((h) => h.schema === e.schema && h.name === e.name);
    if (!got) out.push(`missing enum ${qualified(e)} ${list(e.labels)}`);
    else if (!same(got.labels, e.labels)) {
      out.push(`enum ${qualified(e)}: labels ${list(e.labels)} described, ${list(got.labels)} found`);
    }
  }
  for (const e of have.enums) {
    if (
      want.schemas.includes(e.schema) &&
      !want.enums.some((w) => w.schema === e.schema && w.name === e.name)
    ) {
      out.push(`extra enum ${qualified(e)} ${list(e.labels)}`);
    }
  }

  const outOfScope = new Set(want.outOfScope.map(qualified));
  for (const t of want.tables) {
    const got = have.tables.find((h) => h.schema === t.schema && h.name === t.name);
    if (!got) out.push(`missing table ${qualified(t)}`);
    else diffTable(t, got, out);
  }
  for (const t of have.tables) {
    const name = qualified(t);
    if (
      want.schemas.includes(t.schema) &&
      !outOfScope.has(name) &&
      !want.tables.some((w) => w.schema === t.schema && w.name === t.name)
    ) {
      out.push(`extra table ${name}`);
    }
  }

  for (const v of want.views) {
    const got = have.views.find((h) => h.schema === v.schema && h.name === v.name);
    const cols = (view: typeof v) => view.columns.map((c) => `${c.name} ${c.type}`);
    if (!got) out.push(`missing view ${qualified(v)}`);
    else if (!same(cols(v), cols(got))) {
      out.push(`view ${qualified(v)}: columns ${list(cols(v))} described, ${list(cols(got))} found`);
    }
  }
  for (const v of have.views) {
    if (
      want.schemas.includes(v.schema) &&
      !outOfScope.has(qualified(v)) &&
      !want.views.some((w) => w.schema === v.schema && w.name === v.name)
    ) {
      out.push(`extra view ${qualified(v)}`);
    }
  }
  return out;
}
