/** The folders_consistency tenant: each folder row against its parent row (trash flag, path, lpath). */
export type { FoldersConsistencyCheckOptions } from './folders-consistency-check.js';
export {
  createFoldersConsistencyCheck,
  DRIVE_ID_PARENT_MISMATCH,
  FOLDERS_CONSISTENCY_CHECK_NAME,
  folderFindings,
  LPATH_MISMATCH,
  ORPHAN_ROOT,
  PARENT_TRASHED_MISMATCH,
  PATH_MISMATCH,
} from './folders-consistency-check.js';
