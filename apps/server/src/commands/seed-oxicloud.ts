import {
  backdateLocalBlob,
  describeOxiCloudDatasetReport,
  generateOxiCloudDataset,
  type OxiCloudDatasetOptions,
  type OxiCloudDatasetReport,
} from '@oxicloud/dataset';
import type { ServerConfig } from '../config/server-config.js';
import { runSeed } from './seed-run.js';

/** Every resource each fault touched, one line each (`--list-resources`). */
function describeOxiCloudFaultResources(report: OxiCloudDatasetReport): string {
  if (report.faults.length === 0) return 'No faults injected.';
  const lines: string[] = [];
  for (const f of report.faults) {
    lines.push(`${f.fault}: ${f.resources.length} resource(s)`);
    for (const r of f.resources) lines.push(`  ${r.type} ${r.id}  ${r.label}`);
  }
  return lines.join('\n');
}

/** What consistency_batch (force, deep) must report for the injected faults. */
function describeOxiCloudExpectedFindings(report: OxiCloudDatasetReport): string {
  const lines = ['Expected findings:'];
  for (const f of report.faults) {
    const { check, kind, severity, invariant } = f.expect;
    lines.push(
      check === null
        ? `  ${f.fault}: no check reports it (${kind}${invariant === null ? '' : `, §12.${invariant}`}) on ${f.resourceIds.join(', ')}`
        : `  ${f.fault}: ${check} reports ${kind} (${severity ?? '-'}, §12.${invariant ?? '-'}) on ${f.resourceIds.join(', ')}`,
    );
  }
  return lines.join('\n');
}

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
