import {
  backdateLocalBlob,
  type DatasetOptions,
  type DatasetReport,
  describeDatasetReport,
  describeExpectedFindings,
  describeFaultResources,
  generateDataset,
  isDatasetError,
} from '@oxicloud/dataset';
import { EncryptedBlobStorage, LocalFsBlobStorage } from '@oxicloud/storage';
import type { BlobStorage } from '@oxicloud/tenants';
import { createBlobStorage } from '../compose.js';
import type { ServerConfig } from '../config/server-config.js';
import { openDatabase } from '../database/open-database.js';
import { applyMigrations } from '../database/prepare-database.js';
import { createLogger } from '../logger.js';
import { ServerError } from '../server-error.js';
import { recordBlobDirs } from './new-blob-dirs.js';
import { terminalSeedProgress } from './seed-progress.js';

/** The local store whose files hold `blobs`' bytes (encrypted or not), or `null` on S3. */
function localFiles(blobs: BlobStorage): LocalFsBlobStorage | null {
  const base = blobs instanceof EncryptedBlobStorage ? blobs.inner : blobs;
  return base instanceof LocalFsBlobStorage ? base : null;
}

/**
 * `oxijobs seed`: fills the database and the configured blob backend with a
 * generated dataset (`generateDataset` from `@oxicloud/dataset`), with the
 * named faults injected; prints the report's summary on stdout, and with
 * `--list-resources` every resource each fault touched.
 *
 * At a terminal, stderr shows one progress bar and the log lines above it
 * (never on the bar's line). A failed generation rolls its rows back, deletes
 * the bytes no row describes and (local backend) removes the blob folders it
 * made that are then empty.
 */
export async function seedCommand(
  config: ServerConfig,
  options: DatasetOptions,
  output: { readonly listResources?: boolean } = {},
): Promise<void> {
  if (config.storageDomain === 'oxicloud') {
    // The generator writes the engine's own model; OxiCloud's domain has its own (generateOxiCloudDataset), not mapped onto seed's flags yet.
    throw new ServerError(
      'NOT_AVAILABLE',
      "seed writes the engine's own storage model and does not run with OXICLOUD_STORAGE_DOMAIN=oxicloud yet; nothing was written. " +
        "Generate OxiCloud-shaped data with generateOxiCloudDataset of @oxicloud/dataset, or seed a database of the engine's domain (OXICLOUD_STORAGE_DOMAIN=engine)",
    );
  }
  const progress = process.stderr.isTTY === true ? terminalSeedProgress(process.stderr) : undefined;
  const logger = createLogger({
    level: config.logLevel,
    destination: 'stderr',
    format: config.logFormat,
    sink: progress === undefined ? undefined : (line) => progress.log(line),
  });
  const madeDirs = config.storage.backend === 'local' ? await recordBlobDirs(config.storage.root) : undefined;
  let report: DatasetReport;
  try {
    const blobs = createBlobStorage(config.storage, config.storageEncryption);
    const files = localFiles(blobs);
    const db = await openDatabase(config, logger, { max: 4 });
    try {
      await applyMigrations(db.pool, logger, config.storageDomain);
      report = await generateDataset({
        pool: db.pool,
        blobs,
        options,
        logger,
        ...(files === null ? {} : { backdateBlob: backdateLocalBlob((h) => files.pathOf(h)) }),
        ...(progress ? { onProgress: (p) => progress.update(p) } : {}),
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
  process.stdout.write(`${describeDatasetReport(report)}\n`);
  if (output.listResources) process.stdout.write(`${describeFaultResources(report)}\n`);
  if (report.faults.length > 0) process.stdout.write(`${describeExpectedFindings(report)}\n`);
}
