import type { StatefulAdapter } from '@oxicloud/consistency';
import type { Logger } from '@oxicloud/scheduler';
import type { Kysely } from 'kysely';
import type { OxiCloudDatabase } from './database.js';
import { OxiBlobRowScan, type OxiBlobRowScanOptions } from './oxi-blob-row-scan.js';
import { OxiDriveUsageScan, type OxiDriveUsageScanOptions } from './oxi-drive-usage-scan.js';
import { OxiFileContentScan, type OxiFileContentScanOptions } from './oxi-file-content-scan.js';
import { OxiFolderTreeScan, type OxiFolderTreeScanOptions } from './oxi-folder-tree-scan.js';
import { OxiGrantScan, type OxiGrantScanOptions } from './oxi-grant-scan.js';
import { OxiManifestScan, type OxiManifestScanOptions } from './oxi-manifest-scan.js';
import { OxiReferenceScan, type OxiReferenceScanOptions } from './oxi-reference-scan.js';

/** Each check's own options, by check name: every OxiCloud-domain scan's `checks`, together. */
export type OxiCloudScanChecks = NonNullable<OxiDriveUsageScanOptions['checks']> &
  NonNullable<OxiFolderTreeScanOptions['checks']> &
  NonNullable<OxiFileContentScanOptions['checks']> &
  NonNullable<OxiManifestScanOptions['checks']> &
  NonNullable<OxiBlobRowScanOptions['checks']> &
  NonNullable<OxiGrantScanOptions['checks']> &
  NonNullable<OxiReferenceScanOptions['checks']>;

/** Options of {@link oxiCloudScans}. */
export interface OxiCloudScansOptions {
  /** The checks' batch loops log through it. */
  readonly logger?: Logger;
  /** Each check's options under its name; an adapter hands its own checks theirs only. */
  readonly checks?: OxiCloudScanChecks;
}

/**
 * Every stateful adapter of OxiCloud's tables, in the order the server
 * registers them: drive usage, folder tree, file → content, chunk
 * manifests, blob rows, grants, item references. Each contributes its checks (`consistencyChecks()`). The one list
 * of them: the server registers these (beside its blob backend), and the tests take the
 * same.
 *
 * @example
 * ```ts
 * const registry = new ConsistencyRegistry();
 * for (const adapter of oxiCloudScans(db, { logger })) registry.register(adapter);
 * ```
 */
export function oxiCloudScans(
  db: Kysely<OxiCloudDatabase>,
  options: OxiCloudScansOptions = {},
): StatefulAdapter[] {
  const shared = {
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.checks ? { checks: options.checks } : {}),
  };
  return [
    new OxiDriveUsageScan(db, shared),
    new OxiFolderTreeScan(db, shared),
    new OxiFileContentScan(db, shared),
    new OxiManifestScan(db, shared),
    new OxiBlobRowScan(db, shared),
    new OxiGrantScan(db, shared),
    new OxiReferenceScan(db, shared),
  ];
}
