/**
 * @oxicloud/tenants: every job tenant and the ports each needs. Adapters
 * (Postgres repositories, blob backends) implement the ports in
 * `@oxicloud/storage`.
 *
 * @packageDocumentation
 */

export type { BlobRowAnomaly, BlobRowScan, BlobRowScanOptions } from './blobs-consistency/blob-row-scan.js';
export type { BlobsConsistencyCheckOptions } from './blobs-consistency/index.js';
export {
  BLOBS_CONSISTENCY_CHECK_NAME,
  blobRowFindings,
  createBlobsConsistencyCheck,
  ORPHANED_AT_MISMATCH,
  REF_COUNT_MISMATCH,
} from './blobs-consistency/index.js';
export type {
  ConsistencyBatchJobOptions,
  ConsistencyBatchRunArgs,
  PerCheckEntry,
} from './consistency-batch/index.js';
export {
  CONSISTENCY_BATCH_JOB_NAME,
  createConsistencyBatchJob,
} from './consistency-batch/index.js';
export type { ContentGcJobOptions, DedupGcConfig, DedupGcJob } from './dedup-gc/index.js';
export {
  createContentGcJob,
  DEDUP_GC_DEFAULTS,
  DEDUP_GC_ENV,
  DEDUP_GC_JOB_NAME,
  dedupGcConfigFromEnv,
} from './dedup-gc/index.js';
export type {
  DriveShapeAnomaly,
  DriveUsageDrift,
  DriveUsageScan,
  UserUsageDrift,
} from './drives-consistency/drive-usage-scan.js';
export type { DrivesConsistencyCheckOptions } from './drives-consistency/index.js';
export {
  createDrivesConsistencyCheck,
  DRIVE_ROOT_MISMATCH,
  DRIVE_USED_BYTES_DRIFT,
  DRIVE_WITHOUT_OWNER,
  DRIVES_CONSISTENCY_CHECK_NAME,
  driveShapeFindings,
  PERSONAL_DRIVE_OWNER_MISMATCH,
  USER_USED_BYTES_DRIFT,
} from './drives-consistency/index.js';
export type { TenantEnv } from './env.js';
export type { TenantsErrorCode } from './errors.js';
export { isTenantsError, TenantsError } from './errors.js';
export type {
  FileBlobAnomaly,
  FileBlobScan,
  FileRowAnomaly,
  FileRowStream,
  FileScanOptions,
  LiveFileInTrashedFolder,
  MediaFileWithoutMetadata,
  MediaScanOptions,
  MissingBlob,
} from './files-consistency/file-blob-scan.js';
export type {
  FilesConsistencyCheckOptions,
  FilesConsistencyConfig,
  MediaMetadataProbe,
} from './files-consistency/index.js';
export {
  BLOB_SIZE_MISMATCH,
  CATEGORY_ORDER_MISMATCH,
  createFilesConsistencyCheck,
  createMediaMetadataProbe,
  FILE_DRIVE_ID_PARENT_MISMATCH,
  FILES_CONSISTENCY_CHECK_NAME,
  FILES_CONSISTENCY_ENV,
  fileRowFindings,
  filesConsistencyConfigFromEnv,
  MAX_AFFECTED_FILE_IDS,
  MEDIA_METADATA_MISSING,
  MEDIA_SORT_DATE_MISMATCH,
  MIME_MISMATCH,
  MISSING_BLOB,
  PARENT_FOLDER_TRASHED,
} from './files-consistency/index.js';
export type {
  FolderTreeAnomaly,
  FolderTreeScan,
  FolderTreeScanOptions,
  TrashFlagsProblem,
} from './folders-consistency/folder-tree-scan.js';
export { TRASH_FLAGS_PROBLEMS } from './folders-consistency/folder-tree-scan.js';
export type { FoldersConsistencyCheckOptions } from './folders-consistency/index.js';
export {
  createFoldersConsistencyCheck,
  DRIVE_ID_PARENT_MISMATCH,
  FOLDERS_CONSISTENCY_CHECK_NAME,
  folderFindings,
  LPATH_MISMATCH,
  ORPHAN_ROOT,
  PARENT_TRASHED_MISMATCH,
  PATH_MISMATCH,
  TRASH_FLAGS_MISMATCH,
} from './folders-consistency/index.js';
export type { GrantCleanupConfig, GrantCleanupJob, GrantCleanupJobOptions } from './grant-cleanup/index.js';
export {
  createGrantCleanupJob,
  GRANT_CLEANUP_DEFAULTS,
  GRANT_CLEANUP_ENV,
  GRANT_CLEANUP_JOB_NAME,
  grantCleanupConfigFromEnv,
} from './grant-cleanup/index.js';
export type {
  GrantAnomaly,
  GrantResourceType,
  GrantScan,
  GrantScanOptions,
} from './grants-consistency/grant-scan.js';
export type { GrantsConsistencyCheckOptions, GrantsConsistencyConfig } from './grants-consistency/index.js';
export {
  createGrantsConsistencyCheck,
  DANGLING_GRANT,
  EXPIRED_GRANT_LINGERING,
  GRANTS_CONSISTENCY_CHECK_NAME,
  GRANTS_CONSISTENCY_DEFAULTS,
  GRANTS_CONSISTENCY_ENV,
  grantFindings,
  grantsConsistencyConfigFromEnv,
} from './grants-consistency/index.js';
export type { ManifestsConsistencyCheckOptions } from './manifests-consistency/index.js';
export {
  createManifestsConsistencyCheck,
  MANIFEST_HASH_MISMATCH,
  MANIFEST_REF_COUNT_HIGH,
  MANIFEST_REF_COUNT_LOW,
  MANIFEST_SHAPE_MISMATCH,
  MANIFEST_UNREFERENCED,
  MANIFESTS_CONSISTENCY_CHECK_NAME,
  manifestFindings,
} from './manifests-consistency/index.js';
export type {
  ManifestAnomaly,
  ManifestScan,
  ManifestScanOptions,
  MultiChunkManifest,
  MultiChunkManifestNow,
  MultiChunkManifestPage,
  PagedMultiChunkManifest,
} from './manifests-consistency/manifest-scan.js';
export type {
  BlobHasher,
  BlobSequenceHasher,
  StoredBlobDigest,
  StoredSequenceDigest,
} from './ports/blob-hasher.js';
export type { BlobQuarantine, QuarantinedEntry, QuarantineListOptions } from './ports/blob-quarantine.js';
export type { BlobEntry, BlobStorage, BlobStorageHealth } from './ports/blob-storage.js';
export type { BlobRow, BlobWalkRepository } from './ports/blob-walk-repository.js';
export type { ChunkManifestRecord } from './ports/chunk-manifest-record.js';
export type {
  BlobCollectResult,
  CollectedBlob,
  ContentGcPage,
  ContentGcRepository,
  ManifestCollectResult,
  ManifestRestoreStatus,
} from './ports/content-gc-repository.js';
export type { DeletedGrant, GrantRepository } from './ports/grant-repository.js';
export type {
  AudioMetadata,
  ImageMetadata,
  MediaFileRepository,
  MediaFileRow,
} from './ports/media-file-repository.js';
export type { RepairPlanRepository } from './ports/repair-plan-repository.js';
export type {
  BlobCounterState,
  BlobRowState,
  DerivedColumnState,
  DerivedFileColumn,
  DriveUsageState,
  FaceRowState,
  FileBlobSizeState,
  FolderPathRow,
  GrantRowState,
  ManifestCounterState,
  ReferenceRowState,
  ReferencingFile,
  RepairStore,
  RepairTx,
  TrashedParentState,
  UserUsageState,
} from './ports/repair-store.js';
export type { RunRetentionRepository } from './ports/run-retention-repository.js';
export type { ScanPage } from './ports/scan-page.js';
export type {
  TrashFolderBatch,
  TrashFolderCursor,
  TrashPurgeBatch,
  TrashRepository,
} from './ports/trash-repository.js';
export type { UsageCorrection, UsageReconcileResult, UsageRepository } from './ports/usage-repository.js';
export type { MediaReextractJob, MediaReextractParams } from './reextract-audio/index.js';
export {
  createReextractAudioJob,
  mediaReextractParamsSchema,
  REEXTRACT_AUDIO_JOB_NAME,
} from './reextract-audio/index.js';
export { createReextractImageJob, REEXTRACT_IMAGE_JOB_NAME } from './reextract-image/index.js';
export type {
  DanglingReference,
  ReferenceScan,
  ReferenceScanOptions,
  ReferenceSource,
  ReferencesConsistencyCheckOptions,
} from './references-consistency/index.js';
export {
  createReferencesConsistencyCheck,
  REFERENCE_SOURCES,
  REFERENCES_CONSISTENCY_CHECK_NAME,
  referenceFinding,
} from './references-consistency/index.js';
export type {
  ActionLine,
  AppliedLine,
  ApplyOutcome,
  BlobActionsOptions,
  DerivedRow,
  NeedsPersonLine,
  RepairAction,
  RepairActions,
  RepairActionsOptions,
  RepairChoice,
  RepairChoices,
  RepairFinding,
  RepairJob,
  RepairJobOptions,
  RepairLine,
  RepairPlanner,
  RepairPlanView,
  RepairRunPlans,
  RepairRunStarter,
  RepairService,
  RepairState,
  RestoreBytesOptions,
  ThumbnailActionsOptions,
  VerifiedCopy,
} from './repair/index.js';
export {
  changedSincePlan,
  chooseLine,
  copyVerifiedBlob,
  createBlobActions,
  createRepairActions,
  createRepairJob,
  createRepairPlanner,
  createRepairService,
  createRestoreBytesAction,
  createThumbnailActions,
  deleteDanglingReference,
  deleteGrant,
  deleteStaleFace,
  HAND_ORPHAN_BYTES_TO_GC,
  needsPersonKinds,
  planHash,
  REPAIR_COUNTERS,
  REPAIR_JOB_NAME,
  RESTORE_PARENT,
  raiseManifestRefCount,
  recomputeDerivedColumn,
  recomputeDriveUsage,
  recomputeFolderPath,
  recomputeUserUsage,
  recountBlobRow,
  resolveTrashedParent,
  restoreActionName,
  restoreRowActionName,
  setFileSizeFromBlob,
  stableJson,
  TRASH_CHILD,
} from './repair/index.js';
export type { RunRetentionConfig, RunRetentionJob, RunRetentionJobOptions } from './run-retention/index.js';
export {
  assertRunRetentionConfig,
  createRunRetentionJob,
  RUN_RETENTION_AUDIT_ID_CAP,
  RUN_RETENTION_DEFAULTS,
  RUN_RETENTION_ENV,
  RUN_RETENTION_JOB_NAME,
  runRetentionConfigFromEnv,
} from './run-retention/index.js';
export type {
  BlobFileImpact,
  BlobIndexRow,
  BlobIndexScan,
  BlobRangeQuery,
  BlobRangeScan,
} from './storage-consistency/blob-index-scan.js';
export type {
  DerivedFiles,
  FileDerivativesEntry,
  MimeSniff,
  StorageConsistencyCheckOptions,
  StoreCanaryOptions,
  ThumbnailEntry,
  ThumbnailStore,
} from './storage-consistency/index.js';
export {
  BLOB_HASH_MISMATCH,
  BLOB_MIME_MISMATCH,
  BLOB_OBJECT_SIZE_MISMATCH,
  createStorageConsistencyCheck,
  ENCRYPTED_OBJECT_OVERHEAD_BYTES,
  MISSING_BLOB_BYTES,
  MISSING_BYTES_MAX_FILE_IDS,
  mimeContradicts,
  normaliseMime,
  ORPHAN_BLOB,
  ORPHAN_FILE_THUMBNAIL,
  ORPHAN_THUMBNAIL,
  ORPHAN_TRANSCODED_IMAGE,
  STORAGE_CONSISTENCY_CHECK_NAME,
  STORE_CANARY_SAMPLE,
  sniffMime,
  storeCanary,
} from './storage-consistency/index.js';
export type {
  BlobBackendName,
  StorageMigrationJob,
  StorageMigrationJobOptions,
  StorageMigrationParams,
} from './storage-migration/index.js';
export {
  createStorageMigrationJob,
  MIGRATION_FAILED_KIND,
  STORAGE_MIGRATION_JOB_NAME,
  storageMigrationParamsSchema,
} from './storage-migration/index.js';
export type {
  StorageReconcileConfig,
  StorageReconcileJob,
  StorageReconcileJobOptions,
} from './storage-reconcile/index.js';
export {
  createStorageReconcileJob,
  STORAGE_RECONCILE_DEFAULTS,
  STORAGE_RECONCILE_ENV,
  STORAGE_RECONCILE_JOB_NAME,
  storageReconcileConfigFromEnv,
} from './storage-reconcile/index.js';
export type { TrashCleanupConfig, TrashCleanupJob, TrashCleanupJobOptions } from './trash-cleanup/index.js';
export {
  createTrashCleanupJob,
  TRASH_CLEANUP_DEFAULTS,
  TRASH_CLEANUP_ENV,
  TRASH_CLEANUP_JOB_NAME,
  trashCleanupConfigFromEnv,
} from './trash-cleanup/index.js';
