/** The files_consistency tenant: each file against its blob row (missing, size) and its folder (trashed). */
export {
  FILES_CONSISTENCY_ENV,
  type FilesConsistencyConfig,
  filesConsistencyConfigFromEnv,
} from './config.js';
export type { FilesConsistencyCheckOptions } from './files-consistency-check.js';
export {
  BLOB_SIZE_MISMATCH,
  CATEGORY_ORDER_MISMATCH,
  createFilesConsistencyCheck,
  FILE_DRIVE_ID_PARENT_MISMATCH,
  FILES_CONSISTENCY_CHECK_NAME,
  fileRowFindings,
  MAX_AFFECTED_FILE_IDS,
  MEDIA_METADATA_MISSING,
  MEDIA_SORT_DATE_MISMATCH,
  MIME_MISMATCH,
  MISSING_BLOB,
  PARENT_FOLDER_TRASHED,
} from './files-consistency-check.js';
export { createMediaMetadataProbe, type MediaMetadataProbe } from './media-metadata-probe.js';
