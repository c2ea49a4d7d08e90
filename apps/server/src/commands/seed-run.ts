import { type DatasetLogger, isDatasetError } from '@oxicloud/dataset';
import { EncryptedBlobStorage, LocalFsBlobStorage } from '@oxicloud/storage';
import type { BlobStorage } from '@oxicloud/tenants';
import type pg from 'pg';
import { createBlobStorage } from '../compose.js';
import type { ServerConfig } from '../config/server-config.js';
import { openDatabase } from '../database/open-database.js';
import { applyMigrations } from '../database/prepare-database.js';
import { createLogger } from '../logger.js';
import { ServerError } from '../server-error.js';
import { recordBlobDirs } from './new-blob-dirs.js';
import { terminalSeedProgress } from './seed-progress.js';

/** What a generator gets from {@link runSeed}: the migrated database, the blob store and the progress sink. */
export interface SeedTarget {
  readonly pool: pg.Pool;
  readonly blobs: BlobStorage;
  /** The local store whose files hold the blobs' bytes (encrypted or not), or `null` on S3. */
  readonly files: LocalFsBlobStorage | null;
  /** The local storage root (`OXICLOUD_STORAGE_PATH`), or `undefined` on S3. */
  readonly storageRoot: string | undefined;
  readonly logger: DatasetLogger;
  /** Set at a terminal only: draws the generation's progress bar. */
  readonly onProgress: ((progress: SeedPhaseProgress) => void) | undefined;
}

/** One phase's progress, as the generator reports it. */
export interface SeedPhaseProgress {
  readonly phase: string;
  readonly done: number;
  readonly total: number;
  readonly elapsedMs: number;
}

function localFiles(blobs: BlobStorage): LocalFsBlobStorage | null {
  const base = blobs instanceof EncryptedBlobStorage ? blobs.inner : blobs;
  return base instanceof LocalFsBlobStorage ? base : null;
}

/**
 * The frame of `oxijobs seed` around its generator: the progress bar at a
 * terminal (log lines above it), the database opened and migrated with
 * `config.storageDomain`, the configured blob store, and
 * on failure the local blob folders it made removed once empty (the
 * generators roll their rows back and delete the bytes no row describes).
 * A bad option or a fault that does not apply becomes `BAD_ARGUMENT`, any
 * other generation error (already seeded, a failed write) `SEED_FAILED`.
 */
export async function runSeed<R>(
  config: ServerConfig,
  generate: (target: SeedTarget) => Promise<R>,
): Promise<R> {
  const progress = process.stderr.isTTY === true ? terminalSeedProgress(process.stderr) : undefined;
  const logger = createLogger({
    level: config.logLevel,
    destination: 'stderr',
    format: config.logFormat,
    sink: progress === undefined ? undefined : (line) => progress.log(line),
  });
  const madeDirs = config.storage.backend === 'local' ? await recordBlobDirs(config.storage.root) : undefined;
  try {
    const blobs = createBlobStorage(config.storage, config.storageEncryption);
    const db = await openDatabase(config, logger, { max: 4 });
    try {
      await applyMigrations(db.pool, logger, {
        source: db.source,
        engineSchema: config.engineSchema,
        refuseBesideOxiCloud: '`oxijobs seed` writes users, drives, folders and files',
      });
      return await generate({
        pool: db.pool,
        blobs,
        files: localFiles(blobs),
        storageRoot: config.storage.backend === 'local' ? config.storage.root : undefined,
        logger,
        // The bar shows the phase as text.
        onProgress: progress ? (p) => progress.update(p) : undefined,
      });
    } finally {
      progress?.stop();
      await db.close();
    }
  } catch (error) {
    progress?.stop();
    await madeDirs?.removeEmpty().catch(() => undefined);
    if (isDatasetError(error, 'INVALID_OPTIONS') || isDatasetError(error, 'FAULT_NOT_APPLICABLE')) {
      throw new ServerError('BAD_ARGUMENT', error.message, { cause: error });
    }
    if (isDatasetError(error)) throw new ServerError('SEED_FAILED', error.message, { cause: error });
    throw error;
  }
}
