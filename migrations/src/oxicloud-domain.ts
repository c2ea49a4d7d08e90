import { fileURLToPath } from 'node:url';
import { type MigrationFile, readMigrationFiles } from './files.js';

/**
 * The folder of the OxiCloud-compatible storage domain (`oxicloud-domain/`):
 * this project's own SQL for the schema {@link OXICLOUD_SCHEMA} describes
 * (auth, storage, audio, caldav, carddav, faces), with the triggers a job or
 * a repair meets. Applied by {@link migrate} ({@link storageDomainFiles}).
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

/** The folder of the engine's own files on OxiCloud's domain (`oxicloud-jobs/`: the `jobs` schema). */
export const oxiCloudJobsFolder: string = fileURLToPath(new URL('../oxicloud-jobs/', import.meta.url));

/**
 * The storage domains {@link migrate} can build on an empty database: only
 * `oxicloud`, OxiCloud's drive-era schema (`oxicloud-domain/`). The engine's
 * old model (`engine`) was removed by issue 30; a database that recorded it
 * is refused ({@link RecordedStorageDomain}).
 */
export const STORAGE_DOMAINS = ['oxicloud'] as const;
export type StorageDomain = (typeof STORAGE_DOMAINS)[number];

/** What a database may have recorded: a domain of {@link STORAGE_DOMAINS}, or the removed `engine` model. */
export type RecordedStorageDomain = StorageDomain | 'engine';

/** The server's files of `sql/`, which belong to the engine, not to a storage domain. */
const ENGINE_FILES = new Set(['0010_job_registrations.sql']);

/**
 * The files {@link migrate} applies, in order: `oxicloud-domain/`, then the
 * `jobs` schema (`oxicloud-jobs/`) and the server's jobs table of `sql/`
 * (`0010_job_registrations.sql`).
 */
export function storageDomainFiles(_domain: StorageDomain = 'oxicloud'): MigrationFile[] {
  return [
    ...readOxiCloudDomainFiles(),
    ...readMigrationFiles(oxiCloudJobsFolder),
    ...readMigrationFiles().filter((file) => ENGINE_FILES.has(file.name)),
  ];
}

/**
 * The engine's own files of `sql/` (`0010_job_registrations.sql`): what
 * {@link migrate} applies beside a real OxiCloud (`sidecar`), placed in the
 * engine's schema. No storage-domain file and no file creating a schema:
 * the runner creates the engine's schema unless it exists.
 */
export function engineFiles(): MigrationFile[] {
  return readMigrationFiles().filter((file) => ENGINE_FILES.has(file.name));
}
