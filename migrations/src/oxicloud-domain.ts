import { fileURLToPath } from 'node:url';
import { type MigrationFile, readMigrationFiles } from './files.js';

/**
 * The folder of the OxiCloud-compatible storage domain (`oxicloud-domain/`):
 * this project's own SQL for the schema {@link OXICLOUD_SCHEMA} describes
 * (auth, storage, audio, caldav, carddav, faces), with the triggers a job or
 * a repair meets. Not applied by {@link migrate} yet: `sql/` is still the
 * default storage domain (issue 30 moves the default over).
 */
export const oxiCloudDomainFolder: string = fileURLToPath(new URL('../oxicloud-domain/', import.meta.url));

/**
 * The OxiCloud-compatible storage domain's files, sorted by name
 * (`NNNN_lower_snake.sql`, as in `sql/`). Each file is safe to run twice.
 *
 * @example
 * ```ts
 * import { migrate, readOxiCloudDomainFiles } from '@oxicloud/migrations';
 * const result = await migrate(pool, { files: readOxiCloudDomainFiles(), packageSchemas: false });
 * if (result.error) throw result.error;
 * ```
 */
export function readOxiCloudDomainFiles(): MigrationFile[] {
  return readMigrationFiles(oxiCloudDomainFolder);
}
