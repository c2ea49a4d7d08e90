/**
 * `@oxicloud/storage/oxicloud`: the adapters on OxiCloud's storage domain
 * (its tables as the fact sheet gives them). This is the only storage domain:
 * the server always wires these adapters (`OXICLOUD_STORAGE_DOMAIN` accepts
 * `oxicloud` only). The root export holds what does not depend on a domain
 * (blob storage, hashing, OxiCloud's content model without a database).
 *
 * @packageDocumentation
 */

export { PLACEHOLDER_HASH } from './content-sql.js';
export type {
  OxiAudioFileMetadataTable,
  OxiBlobsTable,
  OxiChunkManifestsTable,
  OxiCloudDatabase,
  OxiDrivesTable,
  OxiFileMetadataTable,
  OxiFilesTable,
  OxiFoldersTable,
  OxiRoleGrantsTable,
  OxiUsersTable,
} from './database.js';
export { OxiBlobIndexScan } from './oxi-blob-index-scan.js';
export type { OxiBlobRowScanOptions } from './oxi-blob-row-scan.js';
export { OxiBlobRowScan } from './oxi-blob-row-scan.js';
export { OxiBlobWalkRepository } from './oxi-blob-walk-repository.js';
export { OxiContentGcRepository } from './oxi-content-gc-repository.js';
export type { OxiDriveUsageScanOptions } from './oxi-drive-usage-scan.js';
export { OxiDriveUsageScan } from './oxi-drive-usage-scan.js';
export type { OxiFileContentScanOptions } from './oxi-file-content-scan.js';
export { OxiFileContentScan } from './oxi-file-content-scan.js';
export { DEFAULT_SEGMENT_ROWS, OxiFileRowStream } from './oxi-file-row-stream.js';
export type { OxiFolderTreeScanOptions } from './oxi-folder-tree-scan.js';
export { OxiFolderTreeScan } from './oxi-folder-tree-scan.js';
export { OxiGrantRepository } from './oxi-grant-repository.js';
export type { OxiGrantAnomaly, OxiGrantScanOptions } from './oxi-grant-scan.js';
export { OXICLOUD_INTERNAL_GROUP_ID, OxiGrantScan } from './oxi-grant-scan.js';
export type { OxiManifestScanOptions } from './oxi-manifest-scan.js';
export { OxiManifestScan } from './oxi-manifest-scan.js';
export type { OxiMediaFileRow } from './oxi-media-file-repository.js';
export { OxiMediaFileRepository } from './oxi-media-file-repository.js';
export type {
  OxiQueueBacklog,
  OxiQueueBacklogReaderOptions,
  OxiQueueName,
} from './oxi-queue-backlog.js';
export {
  DEFAULT_QUEUE_COUNT_CAP,
  OXICLOUD_QUEUES,
  OxiQueueBacklogReader,
} from './oxi-queue-backlog.js';
export type { OxiReferenceScanOptions } from './oxi-reference-scan.js';
export { OxiReferenceScan } from './oxi-reference-scan.js';
export { OxiRepairStore } from './oxi-repair-store.js';
export type { OxiCloudScanChecks, OxiCloudScansOptions } from './oxi-scans.js';
export { oxiCloudScans } from './oxi-scans.js';
export type { OxiTrashRepositoryOptions } from './oxi-trash-repository.js';
export {
  OXICLOUD_TRASH_RETENTION_DAYS_FLOOR,
  OxiTrashRepository,
  oxiTrashRetentionDays,
} from './oxi-trash-repository.js';
export { OxiUsageRepository } from './oxi-usage-repository.js';
export type { UserRow } from './oxi-users-repository.js';
export {
  OXI_FIRST_ADMIN_PLACEHOLDER_EMAIL,
  OxiAdminRecipients,
  OxiUsersRepository,
} from './oxi-users-repository.js';
