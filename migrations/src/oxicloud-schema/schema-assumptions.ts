import type { MigrationClient } from '../migrate.js';
import { OXICLOUD_SCHEMA } from './description.js';
import { diffSchema } from './diff-schema.js';
import { readSchema } from './read-schema.js';
import type { SchemaDescription } from './types.js';

/** A line of {@link diffSchema} about what a reader relies on: a missing table, a missing or changed column or trigger. */
const RELIED_ON = /^missing table |: (missing column |column |missing trigger |trigger )/;

/**
 * What a job that reads `tables` (schema-qualified, `storage.files`)
 * relies on and the live database no longer has as {@link OXICLOUD_SCHEMA}
 * describes it: each table, its described columns (name, type, nullability,
 * default) and its described triggers. One readable line each; an empty
 * list when all of it holds. What a newer OxiCloud added (columns, triggers,
 * tables, indexes) is not a problem: a reader never sees it. A table the
 * description does not know is reported as such.
 *
 * Reads the catalog in a read-only transaction on `client` (a dedicated
 * connection, as for {@link readSchema}).
 *
 * @example
 * ```ts
 * const problems = await schemaAssumptionProblems(client, ['storage.files', 'storage.blobs']);
 * // ['storage.files: missing column blob_hash character varying(64)']
 * ```
 */
export async function schemaAssumptionProblems(
  client: MigrationClient,
  tables: readonly string[],
): Promise<string[]> {
  const wanted = new Set(tables);
  const known = OXICLOUD_SCHEMA.tables.filter((t) => wanted.has(`${t.schema}.${t.name}`));
  const unknown = [...wanted].filter((name) => !known.some((t) => `${t.schema}.${t.name}` === name));
  const schemas = [...new Set(known.map((t) => t.schema))].sort();
  const want: SchemaDescription = {
    schemas,
    extensions: [],
    enums: [],
    tables: known,
    views: [],
    outOfScope: [],
  };
  const live = await readSchema(client, schemas);
  const have: SchemaDescription = {
    ...live,
    enums: [],
    views: [],
    tables: live.tables.filter((t) => wanted.has(`${t.schema}.${t.name}`)),
  };
  return [
    ...unknown.map((name) => `${name}: not a table of OxiCloud's schema as this engine knows it`),
    ...diffSchema(want, have).filter((line) => RELIED_ON.test(line)),
  ];
}
