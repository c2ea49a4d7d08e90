/** The files_consistency tenant: each file against its blob row (missing, size) and its folder (trashed). */
export type { FilesConsistencyCheckOptions } from './files-consistency-check.js';
export {
  BLOB_SIZE_MISMATCH,
  createFilesConsistencyCheck,
  FILE_DRIVE_ID_PARENT_MISMATCH,
  FILES_CONSISTENCY_CHECK_NAME,
  fileRowFindings,
  MAX_AFFECTED_FILE_IDS,
  MEDIA_SORT_DATE_MISMATCH,
  MIME_MISMATCH,
  MISSING_BLOB,
  PARENT_FOLDER_TRASHED,
} from './files-consistency-check.js';
