import type { StatefulAdapter } from '@oxicloud/consistency';
import type { Logger } from '@oxicloud/scheduler';
import type { Kysely } from 'kysely';
import type { StorageDatabase } from './database.js';
import { PgBlobRowScan, type PgBlobRowScanOptions } from './pg-blob-row-scan.js';
import { PgDriveUsageScan, type PgDriveUsageScanOptions } from './pg-drive-usage-scan.js';
import { PgFileBlobScan, type PgFileBlobScanOptions } from './pg-file-blob-scan.js';
import { PgFolderTreeScan, type PgFolderTreeScanOptions } from './pg-folder-tree-scan.js';
import { PgGrantScan, type PgGrantScanOptions } from './pg-grant-scan.js';

/** Each check's own options, by check name: every Postgres scan's `checks`, together. */
export type PostgresScanChecks = NonNullable<PgDriveUsageScanOptions['checks']> &
  NonNullable<PgFolderTreeScanOptions['checks']> &
  NonNullable<PgFileBlobScanOptions['checks']> &
  NonNullable<PgBlobRowScanOptions['checks']> &
  NonNullable<PgGrantScanOptions['checks']>;

/** Options of {@link postgresScans}. */
export interface PostgresScansOptions {
  /** The checks' batch loops log through it. */
  readonly logger?: Logger;
  /** Each check's options under its name; an adapter hands its own checks theirs only. */
  readonly checks?: PostgresScanChecks;
}

/**
 * Every stateful adapter of the storage domain's tables, in the order the
 * server registers them: drive usage, folder tree, file → blob, blob rows,
 * grants. Each contributes its checks (`consistencyChecks()`). The one list
 * of them: the server registers these (beside its blob backend), and the
 * tests and the bench take the same. A new adapter is one line here; a new
 * check of an existing adapter is a line in that adapter's list of checks.
 *
 * @example
 * ```ts
 * const registry = new ConsistencyRegistry();
 * for (const adapter of postgresScans(db, { logger })) registry.register(adapter);
 * ```
 */
export function postgresScans(
  db: Kysely<StorageDatabase>,
  options: PostgresScansOptions = {},
): StatefulAdapter[] {
  const shared = {
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.checks ? { checks: options.checks } : {}),
  };
  return [
    new PgDriveUsageScan(db, shared),
    new PgFolderTreeScan(db, shared),
    new PgFileBlobScan(db, shared),
    new PgBlobRowScan(db, shared),
    new PgGrantScan(db, shared),
  ];
}
