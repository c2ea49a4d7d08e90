/** The drives_consistency tenant: drive and user usage counters against the rows they count, and each drive's shape. */
export type { DrivesConsistencyCheckOptions } from './drives-consistency-check.js';
export {
  createDrivesConsistencyCheck,
  DRIVE_ROOT_MISMATCH,
  DRIVE_USED_BYTES_DRIFT,
  DRIVE_WITHOUT_OWNER,
  DRIVES_CONSISTENCY_CHECK_NAME,
  driveShapeFindings,
  PERSONAL_DRIVE_OWNER_MISMATCH,
  USER_USED_BYTES_DRIFT,
} from './drives-consistency-check.js';
