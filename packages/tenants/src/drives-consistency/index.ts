/** The drives_consistency tenant: drive and user usage counters against the rows they count. */
export type { DrivesConsistencyCheckOptions } from './drives-consistency-check.js';
export {
  createDrivesConsistencyCheck,
  DRIVE_USED_BYTES_DRIFT,
  DRIVES_CONSISTENCY_CHECK_NAME,
  USER_USED_BYTES_DRIFT,
} from './drives-consistency-check.js';
