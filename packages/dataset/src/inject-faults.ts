/**
 * Fault injection: the injector of each fault and the loop that applies the
 * requested ones to the clean dataset inside the generation's transaction.
 * The injectors live with their group in `fault-injectors/` (usage, folders,
 * files, blobs, grants, trash) and share `fault-context.ts`.
 */
import type { Blake3 } from './blob-content.js';
import {
  blobBytesMissing,
  blobOrphanedAtUnset,
  blobRefCountDrift,
  orphanBlobOnDisk,
} from './fault-injectors/blob-faults.js';
import type { FaultContext, Injector, StorageFaultAction } from './fault-injectors/fault-context.js';
import {
  blobSizeMismatch,
  fileInOtherDriveFolder,
  fileMimeMismatch,
  liveFileUnderTrashedFolder,
  missingBlobRow,
} from './fault-injectors/file-faults.js';
import {
  folderParentCycle,
  folderUnderOtherDrive,
  liveFolderUnderTrashedParent,
  wrongFolderLpath,
  wrongFolderPath,
} from './fault-injectors/folder-faults.js';
import { danglingGrant, expiredGrants, lingeringExpiredGrant } from './fault-injectors/grant-faults.js';
import { oldTrash } from './fault-injectors/trash-faults.js';
import { driveDrift, userDrift } from './fault-injectors/usage-faults.js';
import { expectedFindings, FAULT_EXPECTATIONS, type FaultName } from './faults.js';
import type { ResolvedDatasetOptions } from './options.js';
import type { FaultRecord } from './report.js';
import { rows, type SqlClient } from './sql-client.js';

export type { StorageFaultAction } from './fault-injectors/fault-context.js';

const INJECTORS: Record<FaultName, Injector> = {
  drive_used_bytes_drift: driveDrift,
  user_used_bytes_drift: userDrift,
  live_folder_under_trashed_parent: liveFolderUnderTrashedParent,
  live_file_under_trashed_folder: liveFileUnderTrashedFolder,
  wrong_folder_path: wrongFolderPath,
  wrong_folder_lpath: wrongFolderLpath,
  missing_blob_row: missingBlobRow,
  blob_size_mismatch: blobSizeMismatch,
  orphan_blob_on_disk: orphanBlobOnDisk,
  blob_bytes_missing: blobBytesMissing,
  expired_grants: expiredGrants,
  old_trash: oldTrash,
  blob_ref_count_drift: blobRefCountDrift,
  blob_orphaned_at_unset: blobOrphanedAtUnset,
  dangling_grant: danglingGrant,
  lingering_expired_grant: lingeringExpiredGrant,
  folder_under_other_drive: folderUnderOtherDrive,
  folder_parent_cycle: folderParentCycle,
  file_in_other_drive_folder: fileInOtherDriveFolder,
  file_mime_mismatch: fileMimeMismatch,
};

/**
 * Applies the requested faults inside the generation's transaction (needs
 * the `ds_*` scratch tables) and returns their records plus the blob-storage
 * changes to make once the rows are committed.
 */
export async function injectDatabaseFaults(input: {
  client: SqlClient;
  options: ResolvedDatasetOptions;
  blake3: Blake3;
  onFault?: (done: number) => void;
}): Promise<{ records: FaultRecord[]; storageActions: StorageFaultAction[] }> {
  const [{ now } = { now: new Date() }] = await rows<{ now: Date }>(input.client, 'SELECT now() AS now');
  const ctx: FaultContext = {
    client: input.client,
    options: input.options,
    blake3: input.blake3,
    usedDrives: new Set(),
    usedBlobs: new Set(),
    storage: [],
    now,
  };
  const records: FaultRecord[] = [];
  for (const [i, fault] of input.options.faults.entries()) {
    const resources = await INJECTORS[fault](ctx);
    records.push({
      fault,
      expect: FAULT_EXPECTATIONS[fault],
      resourceIds: resources.map((r) => r.id),
      resources,
      findings: expectedFindings(fault, resources),
    });
    input.onFault?.(i + 1);
  }
  return { records, storageActions: ctx.storage };
}
