import {
  backdateLocalBlob,
  type DatasetOptions,
  describeDatasetReport,
  describeExpectedFindings,
  describeFaultResources,
  generateDataset,
  isDatasetError,
} from '@oxicloud/dataset';
import { LocalFsBlobStorage } from '@oxicloud/storage';
import { createBlobStorage } from '../compose.js';
import type { ServerConfig } from '../config/server-config.js';
import { openDatabase } from '../database/open-database.js';
import { applyMigrations } from '../database/prepare-database.js';
import { createLogger } from '../logger.js';
import { ServerError } from '../server-error.js';

/**
 * `oxijobs seed`: fills the database and the configured blob backend with a
 * generated dataset (`generateDataset` from `@oxicloud/dataset`), with the
 * named faults injected; prints the report's summary on stdout, and with
 * `--list-resources` every resource each fault touched.
 */
export async function seedCommand(
  config: ServerConfig,
  options: DatasetOptions,
  output: { readonly listResources?: boolean } = {},
): Promise<void> {
  const logger = createLogger({ level: config.logLevel, destination: 'stderr', format: config.logFormat });
  const blobs = createBlobStorage(config.storage);
  const db = await openDatabase(config, logger, { max: 4 });
  try {
    await applyMigrations(db.pool, logger);
    const showProgress = process.stderr.isTTY === true;
    const report = await generateDataset({
      pool: db.pool,
      blobs,
      options,
      logger,
      ...(blobs instanceof LocalFsBlobStorage
        ? { backdateBlob: backdateLocalBlob((h) => blobs.pathOf(h)) }
        : {}),
      ...(showProgress
        ? {
            onProgress: (p) => {
              process.stderr.write(`\r${p.phase}: ${p.done}/${p.total}   `);
            },
          }
        : {}),
    });
    if (showProgress) process.stderr.write('\n');
    process.stdout.write(`${describeDatasetReport(report)}\n`);
    if (output.listResources) process.stdout.write(`${describeFaultResources(report)}\n`);
    if (report.faults.length > 0) process.stdout.write(`${describeExpectedFindings(report)}\n`);
  } catch (error) {
    if (isDatasetError(error)) throw new ServerError('BAD_ARGUMENT', error.message, { cause: error });
    throw error;
  } finally {
    await db.close();
  }
}
