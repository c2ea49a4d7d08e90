import {
  backdateLocalBlob,
  describeDatasetReport,
  describeExpectedFindings,
  describeFaultResources,
  generateDataset,
} from '@oxicloud/dataset';
import type { ServerConfig } from '../config/server-config.js';
import type { SeedRequest } from './seed-flags.js';
import { seedOxiCloud } from './seed-oxicloud.js';
import { oxiCloudSeedOptions } from './seed-oxicloud-flags.js';
import { runSeed } from './seed-run.js';

/**
 * `oxijobs seed`: fills the database and the configured blob backend with a
 * generated dataset, with the named faults injected; prints the report's
 * summary on stdout, and with `--list-resources` every resource each fault
 * touched. On the engine's domain it writes the engine's model
 * (`generateDataset` of `@oxicloud/dataset`); with
 * `OXICLOUD_STORAGE_DOMAIN=oxicloud`, OxiCloud's own (`seed-oxicloud.ts`),
 * its flags checked against that domain.
 *
 * At a terminal, stderr shows one progress bar and the log lines above it
 * (never on the bar's line). A failed generation rolls its rows back, deletes
 * the bytes no row describes and (local backend) removes the blob folders it
 * made that are then empty.
 */
export async function seedCommand(
  config: ServerConfig,
  request: SeedRequest,
  output: { readonly listResources?: boolean } = {},
): Promise<void> {
  if (config.storageDomain === 'oxicloud') {
    await seedOxiCloud(config, oxiCloudSeedOptions(request.flags), output);
    return;
  }
  const options = request.engineOptions();
  const report = await runSeed(config, ({ pool, blobs, files, logger, onProgress }) =>
    generateDataset({
      pool,
      blobs,
      options,
      logger,
      ...(files === null ? {} : { backdateBlob: backdateLocalBlob((h) => files.pathOf(h)) }),
      ...(onProgress ? { onProgress } : {}),
    }),
  );
  process.stdout.write(`${describeDatasetReport(report)}\n`);
  if (output.listResources) process.stdout.write(`${describeFaultResources(report)}\n`);
  if (report.faults.length > 0) process.stdout.write(`${describeExpectedFindings(report)}\n`);
}
