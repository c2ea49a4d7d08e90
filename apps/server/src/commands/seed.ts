import {
  backdateLocalBlob,
  DATASET_FLAGS,
  type DatasetFlags,
  type DatasetOptions,
  datasetOptionsFromFlags,
  describeDatasetReport,
  describeExpectedFindings,
  describeFaultResources,
  generateDataset,
  isDatasetError,
} from '@oxicloud/dataset';
import { LocalFsBlobStorage } from '@oxicloud/storage';
import type { Command } from 'commander';
import { createBlobStorage } from '../compose.js';
import type { ServerConfig } from '../config/server-config.js';
import { openDatabase } from '../database/open-database.js';
import { applyMigrations } from '../database/prepare-database.js';
import { createLogger } from '../logger.js';
import { ServerError } from '../server-error.js';

/** Adds every `@oxicloud/dataset` flag (`--users <value>`, …) to the `seed` command. */
export function addSeedFlags(command: Command): Command {
  for (const { flag, help } of DATASET_FLAGS) command.option(`--${flag} <value>`, help);
  return command;
}

/**
 * Turns commander's parsed options (camelCase keys) back into the dataset's
 * flag names and validates them; a bad value becomes one `BAD_ARGUMENT` line.
 */
export function seedOptionsFromCli(parsed: Readonly<Record<string, unknown>>): DatasetOptions {
  const flags: Record<string, string | undefined> = {};
  for (const { flag } of DATASET_FLAGS) {
    const key = flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const value = parsed[key];
    if (typeof value === 'string') flags[flag] = value;
  }
  try {
    return datasetOptionsFromFlags(flags as DatasetFlags);
  } catch (error) {
    if (isDatasetError(error)) throw new ServerError('BAD_ARGUMENT', error.message, { cause: error });
    throw error;
  }
}

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
