import {
  backdateLocalBlob,
  describeOxiCloudDatasetReport,
  describeOxiCloudExpectedFindings,
  describeOxiCloudFaultResources,
  generateOxiCloudDataset,
  type OxiCloudDatasetOptions,
} from '@oxicloud/dataset';
import type { ServerConfig } from '../config/server-config.js';
import { runSeed } from './seed-run.js';

/**
 * `oxijobs seed` with `OXICLOUD_STORAGE_DOMAIN=oxicloud`: fills the
 * database (migrated to OxiCloud's domain) and the configured blob store
 * with `generateOxiCloudDataset` of `@oxicloud/dataset` (thumbnails under
 * `<OXICLOUD_STORAGE_PATH>/.thumbnails/` on the local backend), then
 * prints its summary, with `--list-resources` the faults' resources, and
 * the findings the injected faults must give. The generator writes every
 * row in one transaction (rolled back on failure, the bytes no row
 * describes deleted); {@link runSeed} removes the blob folders it made.
 */
export async function seedOxiCloud(
  config: ServerConfig,
  options: OxiCloudDatasetOptions,
  output: { readonly listResources?: boolean } = {},
): Promise<void> {
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
