/**
 * Fault injection on the OxiCloud-shaped dataset: the injector of each
 * fault ({@link OXICLOUD_FAULT_NAMES}) and the loop that applies the
 * requested ones inside the generation's transaction (they read the `oxi_*`
 * scratch tables). The injectors live with their group in
 * `fault-injectors/` (content, usage, tree, grants) and share
 * `fault-context.ts`. Each picks resources no earlier fault touched
 * (drives, and content hashes: a file hash with its chunks), in an order
 * fixed by the seed and by names, paths and hashes (never ids), and changes
 * exactly one invariant; what it must keep right is kept right by the same
 * statements.
 */
import { rows, type SqlClient } from '../sql-client.js';
import {
  blobBytesMissing,
  blobOrphanedAtUnset,
  blobRefCountDrift,
  chunkBytesOverwritten,
  manifestChunksReordered,
  manifestRefCountDrift,
  manifestRefCountHigh,
  manifestShapeMismatch,
  missingBlobRow,
  missingChunkRow,
  missingManifest,
  oneChunkRefCountDrift,
  orphanBlobOnDisk,
  orphanFileThumbnail,
  orphanThumbnail,
  orphanTranscodedImage,
  truncatedChunk,
  unreferencedManifest,
  wrongManifestTotal,
} from './fault-injectors/content-faults.js';
import type {
  FaultContext,
  Injector,
  OxiCloudFaultResource,
  OxiCloudStorageAction,
} from './fault-injectors/fault-context.js';
import {
  danglingGrant,
  danglingGroupGrant,
  danglingTokenGrant,
  danglingUserGrant,
  expiredGrants,
  lingeringExpiredGrant,
} from './fault-injectors/grant-faults.js';
import {
  danglingFavorite,
  danglingNextcloudId,
  shareWithoutGrant,
  staleFace,
} from './fault-injectors/reference-faults.js';
import {
  audioMetadataMissing,
  categoryOrderDrift,
  driveRootNotRoot,
  driveRootShared,
  driveWithoutOwner,
  fileInOtherDriveFolder,
  folderUnderOtherDrive,
  liveFileUnderTrashedFolder,
  liveFolderUnderTrashedParent,
  liveFolderWithOriginalParent,
  mediaSortDateDrift,
  rootWithoutDrive,
  wrongFolderLpath,
  wrongFolderPath,
} from './fault-injectors/tree-faults.js';
import { blobSizeMismatch, driveUsedBytesDrift, userUsedBytesDrift } from './fault-injectors/usage-faults.js';
import {
  OXICLOUD_FAULT_EXPECTATIONS,
  type OxiCloudFaultExpectation,
  type OxiCloudFaultName,
} from './faults.js';
import type { ResolvedOxiCloudDatasetOptions } from './options.js';

export type { OxiCloudFaultResource, OxiCloudStorageAction } from './fault-injectors/fault-context.js';

/** One injected fault: the invariant it breaks and exactly the resources a check must report. */
export interface OxiCloudFaultRecord {
  readonly fault: OxiCloudFaultName;
  readonly expect: OxiCloudFaultExpectation;
  /** The ids of the findings (or, for the grant-expiry faults, of the grants a cleanup removes). */
  readonly resourceIds: readonly string[];
  readonly resources: readonly OxiCloudFaultResource[];
}

const INJECTORS: Record<OxiCloudFaultName, Injector> = {
  missing_manifest: missingManifest,
  missing_chunk_row: missingChunkRow,
  missing_blob_row: missingBlobRow,
  blob_bytes_missing: blobBytesMissing,
  orphan_blob_on_disk: orphanBlobOnDisk,
  blob_ref_count_drift: blobRefCountDrift,
  one_chunk_ref_count_drift: oneChunkRefCountDrift,
  chunk_bytes_overwritten: chunkBytesOverwritten,
  truncated_chunk: truncatedChunk,
  manifest_ref_count_drift: manifestRefCountDrift,
  manifest_ref_count_high: manifestRefCountHigh,
  unreferenced_manifest: unreferencedManifest,
  manifest_shape_mismatch: manifestShapeMismatch,
  wrong_manifest_total: wrongManifestTotal,
  manifest_chunks_reordered: manifestChunksReordered,
  blob_orphaned_at_unset: blobOrphanedAtUnset,
  blob_size_mismatch: blobSizeMismatch,
  drive_used_bytes_drift: driveUsedBytesDrift,
  user_used_bytes_drift: userUsedBytesDrift,
  wrong_folder_path: wrongFolderPath,
  wrong_folder_lpath: wrongFolderLpath,
  live_folder_under_trashed_parent: liveFolderUnderTrashedParent,
  live_file_under_trashed_folder: liveFileUnderTrashedFolder,
  live_folder_with_original_parent: liveFolderWithOriginalParent,
  folder_under_other_drive: folderUnderOtherDrive,
  root_without_drive: rootWithoutDrive,
  file_in_other_drive_folder: fileInOtherDriveFolder,
  drive_without_owner: driveWithoutOwner,
  media_sort_date_drift: mediaSortDateDrift,
  category_order_drift: categoryOrderDrift,
  audio_metadata_missing: audioMetadataMissing,
  dangling_grant: danglingGrant,
  dangling_user_grant: danglingUserGrant,
  dangling_group_grant: danglingGroupGrant,
  dangling_token_grant: danglingTokenGrant,
  dangling_favorite: danglingFavorite,
  dangling_nextcloud_id: danglingNextcloudId,
  drive_root_shared: driveRootShared,
  drive_root_not_root: driveRootNotRoot,
  stale_face: staleFace,
  share_without_grant: shareWithoutGrant,
  orphan_thumbnail: orphanThumbnail,
  orphan_file_thumbnail: orphanFileThumbnail,
  orphan_transcoded_image: orphanTranscodedImage,
  expired_grants: expiredGrants,
  lingering_expired_grant: lingeringExpiredGrant,
};

/**
 * Applies the requested faults, in {@link OXICLOUD_FAULT_NAMES} order, inside
 * the generation's transaction. Returns their records and the byte and
 * thumbnail changes to make once the rows are committed.
 */
export async function injectOxiCloudFaults(input: {
  client: SqlClient;
  options: ResolvedOxiCloudDatasetOptions;
  hasStorageRoot: boolean;
  /** OxiCloud's media extractors read the store's bytes (`readsMediaAtRawPath`). @defaultValue false */
  readsRawMedia?: boolean;
  onFault?: (done: number) => void;
}): Promise<{ records: OxiCloudFaultRecord[]; storageActions: OxiCloudStorageAction[] }> {
  const [{ now } = { now: new Date() }] = await rows<{ now: Date }>(input.client, 'SELECT now() AS now');
  const ctx: FaultContext = {
    client: input.client,
    options: input.options,
    usedDrives: new Set(),
    usedHashes: new Set(),
    storage: [],
    hasStorageRoot: input.hasStorageRoot,
    readsRawMedia: input.readsRawMedia ?? false,
    now,
  };
  const records: OxiCloudFaultRecord[] = [];
  for (const [i, fault] of input.options.faults.entries()) {
    const resources = await INJECTORS[fault](ctx);
    records.push({
      fault,
      expect: OXICLOUD_FAULT_EXPECTATIONS[fault],
      resourceIds: resources.map((r) => r.id),
      resources,
    });
    input.onFault?.(i + 1);
  }
  return { records, storageActions: ctx.storage };
}
