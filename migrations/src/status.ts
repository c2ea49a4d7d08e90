import { schemaStatus } from '@oxicloud/recoverable';
import type { MigrationFile } from './files.js';
import type { MigrationClient } from './migrate.js';
import { storageDomainFiles } from './oxicloud-domain.js';
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
  files: readonly MigrationFile[] = storageDomainFiles(),
): Promise<MigrationStatus> {
  const { rows: exists } = await client.query(
    "SELECT to_regclass('public.oxicloud_migrations') IS NOT NULL AS present",
  );
  const recorded = new Map<string, string>();
  if (exists[0]?.['present'] === true) {
    const { rows } = await client.query('SELECT name, checksum FROM public.oxicloud_migrations');
    for (const row of rows) recorded.set(String(row['name']), String(row['checksum']));
  }
  const known = new Set(files.map((f) => f.name));
  const names = [...recorded.keys()].filter((n) => !RETIRED_MIGRATIONS.has(n)).sort();
  const pendingSchemas: string[] = [];
  for (const schema of PACKAGE_SCHEMAS) {
    const status = await schemaStatus(client, schema);
    for (let v = status.found + 1; v <= status.needed; v++) pendingSchemas.push(`${schema.package}@${v}`);
  }
  return {
    expected: files.at(-1)?.name ?? null,
    current: names.at(-1) ?? null,
    pending: [...files.filter((f) => !recorded.has(f.name)).map((f) => f.name), ...pendingSchemas],
    changed: files
      .filter((f) => recorded.has(f.name) && recorded.get(f.name) !== f.checksum)
      .map((f) => f.name),
    unknown: names.filter((n) => !known.has(n)),
  };
}
