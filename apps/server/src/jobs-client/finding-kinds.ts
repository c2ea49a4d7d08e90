import {
  BLOB_HASH_MISMATCH,
  BLOB_MIME_MISMATCH,
  BLOB_SIZE_MISMATCH,
  DRIVE_USED_BYTES_DRIFT,
  LPATH_MISMATCH,
  MIGRATION_FAILED_KIND,
  MISSING_BLOB,
  MISSING_BLOB_BYTES,
  ORPHAN_BLOB,
  PARENT_FOLDER_TRASHED,
  PARENT_TRASHED_MISMATCH,
  PATH_MISMATCH,
  USER_USED_BYTES_DRIFT,
} from '@oxicloud/tenants';

/** The finding kinds each job records (what `oxijobs jobs findings --kind` accepts). */
export const FINDING_KINDS: Readonly<Record<string, readonly string[]>> = {
  drives_consistency: [DRIVE_USED_BYTES_DRIFT, USER_USED_BYTES_DRIFT],
  folders_consistency: [PARENT_TRASHED_MISMATCH, PATH_MISMATCH, LPATH_MISMATCH],
  files_consistency: [MISSING_BLOB, BLOB_SIZE_MISMATCH, PARENT_FOLDER_TRASHED],
  storage_consistency: [ORPHAN_BLOB, MISSING_BLOB_BYTES, BLOB_HASH_MISMATCH, BLOB_MIME_MISMATCH],
  storage_migration: [MIGRATION_FAILED_KIND],
};
