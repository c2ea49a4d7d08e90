import {
  backdateLocalBlob,
  describeOxiCloudDatasetReport,
  describeOxiCloudExpectedFindings,
  describeOxiCloudFaultResources,
  generateOxiCloudDataset,
} from '@oxicloud/dataset';
import type { ServerConfig } from '../config/server-config.js';
import { oxiCloudSeedOptions, type SeedFlags } from './seed-oxicloud-flags.js';
import { runSeed } from './seed-run.js';

/**
 * `oxijobs seed`: fills the database (migrated to OxiCloud's storage
 * domain) and the configured blob store with `generateOxiCloudDataset` of
 * `@oxicloud/dataset` (thumbnails under `<OXICLOUD_STORAGE_PATH>/.thumbnails/`
 * on the local backend), with the named faults injected, then prints its
 * summary, with `--list-resources` the faults' resources, and the findings
 * the injected faults must give. OxiCloud's model is the only one it seeds.
 *
 * At a terminal, stderr shows one progress bar and the log lines above it
 * (never on the bar's line). A failed generation rolls its rows back (the
 * generator writes every row in one transaction), deletes the bytes no row
 * describes and (local backend) removes the blob folders it made that are
 * then empty ({@link runSeed}).
 */
export async function seedCommand(
  config: ServerConfig,
  flags: SeedFlags,
  output: { readonly listResources?: boolean } = {},
): Promise<void> {
  const options = oxiCloudSeedOptions(flags);
  const report = await runSeed(config, ({ pool, blobs, files, storageRoot, logger, onProgress }) =>
    generateOxiCloudDataset({
      pool,
      blobs,
      options,
      logger,
      ...(storageRoot === undefined ? {} : { storageRoot }),
      ...(files === null ? {} : { backdateBlob: backdateLocalBlob((h) => files.pathOf(h)) }),
      ...(onProgress ? { onProgress } : {}),
    }),
  );
  process.stdout.write(`${describeOxiCloudDatasetReport(report)}\n`);
  if (output.listResources) process.stdout.write(`${describeOxiCloudFaultResources(report)}\n`);
  if (report.faults.length > 0) process.stdout.write(`${describeOxiCloudExpectedFindings(report)}\n`);
}
