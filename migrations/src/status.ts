import { engineSchema, SIDECAR_ENGINE_SCHEMA, schemaStatus } from '@oxicloud/recoverable';
import type { MigrationFile } from './files.js';
import { type MigrationClient, sidecarBookkeeping } from './migrate.js';
import { engineFiles, storageDomainFiles } from './oxicloud-domain.js';
import { PACKAGE_SCHEMAS, RETIRED_MIGRATIONS } from './package-schemas.js';

/** Where a database stands against the migrations this build carries. */
export interface MigrationStatus {
  /** The newest migration this build knows (`null` when it carries none). */
  readonly expected: string | null;
  /** The newest migration recorded in the database (`null` when none is). */
  readonly current: string | null;
  /**
   * Migrations of this build not yet applied, in order; then package schema
   * versions not yet applied, as `@oxicloud/recoverable@3`.
   */
  readonly pending: string[];
  /** Applied migrations whose file changed since (checksum differs). */
  readonly changed: string[];
  /** Recorded migrations this build does not know (a newer build migrated the database). */
  readonly unknown: string[];
}

/**
 * Compares `public.oxicloud_migrations` with this build's SQL files ({@link storageDomainFiles} by default), read
 * only (no lock, no table created): what a readiness probe asks. A database
 * never migrated has every file pending.
 *
 * @example
 * ```ts
 * const status = await migrationStatus(pool);
 * const ready = status.pending.length === 0 && status.changed.length === 0 && status.unknown.length === 0;
 * ```
 */
export async function migrationStatus(
  client: MigrationClient,
  files?: readonly MigrationFile[],
  options: { readonly sidecar?: boolean; readonly engineSchema?: string } = {},
): Promise<MigrationStatus> {
  const sidecar = options.sidecar === true;
  const engine = engineSchema(options.engineSchema ?? (sidecar ? SIDECAR_ENGINE_SCHEMA : undefined));
  const expectedFiles = files ?? (sidecar ? engineFiles() : storageDomainFiles());
  const bookkeeping = sidecar ? sidecarBookkeeping(engine) : 'public.oxicloud_migrations';
  const { rows: exists } = await client.query('SELECT to_regclass($1) IS NOT NULL AS present', [bookkeeping]);
  const recorded = new Map<string, string>();
  if (exists[0]?.['present'] === true) {
    const { rows } = await client.query(`SELECT name, checksum FROM ${bookkeeping}`);
    for (const row of rows) recorded.set(String(row['name']), String(row['checksum']));
  }
  const known = new Set(expectedFiles.map((f) => f.name));
  const names = [...recorded.keys()].filter((n) => !RETIRED_MIGRATIONS.has(n)).sort();
  const pendingSchemas: string[] = [];
  for (const schema of PACKAGE_SCHEMAS) {
    const status = await schemaStatus(client, schema, { schema: engine });
    for (let v = status.found + 1; v <= status.needed; v++) pendingSchemas.push(`${schema.package}@${v}`);
  }
  return {
    expected: expectedFiles.at(-1)?.name ?? null,
    current: names.at(-1) ?? null,
    pending: [...expectedFiles.filter((f) => !recorded.has(f.name)).map((f) => f.name), ...pendingSchemas],
    changed: expectedFiles
      .filter((f) => recorded.has(f.name) && recorded.get(f.name) !== f.checksum)
      .map((f) => f.name),
    unknown: names.filter((n) => !known.has(n)),
  };
}
