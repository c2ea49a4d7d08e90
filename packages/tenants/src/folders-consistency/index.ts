/** The folders_consistency tenant: each folder row against its parent row (trash flag, path, lpath). */

export type { TrashFlagsProblem } from './folder-tree-scan.js';
export { TRASH_FLAGS_PROBLEMS } from './folder-tree-scan.js';
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
  TRASH_FLAGS_MISMATCH,
} from './folders-consistency-check.js';
