import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MigrationError } from './errors.js';
import { RETIRED_MIGRATIONS } from './package-schemas.js';

/** One SQL migration file, in the order it is applied. */
export interface MigrationFile {
  /** File name without the folder, e.g. `0010_job_registrations.sql`. */
  readonly name: string;
  readonly sql: string;
  /** SHA-256 of the SQL text, recorded when applied. */
  readonly checksum: string;
}

const NAME = /^\d{4}_[a-z0-9_]+\.sql$/;

/** The folder holding this package's SQL files. */
export const migrationsFolder: string = fileURLToPath(new URL('../sql/', import.meta.url));

/** Reads every `NNNN_name.sql` in `folder`, sorted by name, except the retired ones (their SQL lives in a package). */
export function readMigrationFiles(folder: string = migrationsFolder): MigrationFile[] {
  const names = readdirSync(folder)
    .filter((n) => n.endsWith('.sql') && !RETIRED_MIGRATIONS.has(n))
    .sort();
  return names.map((name) => {
    if (!NAME.test(name)) {
      throw new MigrationError(
        'BAD_MIGRATION_NAME',
        `migration file ${name} in ${folder} is not named NNNN_lower_snake.sql`,
      );
    }
    const sql = readFileSync(`${folder}/${name}`, 'utf8');
    return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
  });
}
