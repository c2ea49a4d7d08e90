/**
 * Repair actions: for an open finding, a line that says what would change
 * (computed without writing), and an apply step that re-checks under a row
 * lock and refuses when anything differs from the plan.
 *
 * @packageDocumentation
 */
export type { BlobActionsOptions } from './blob-actions.js';
export { createBlobActions, HAND_ORPHAN_BYTES_TO_GC, restoreRowActionName } from './blob-actions.js';
export { recountBlobRow } from './blob-counter-action.js';
export { setFileSizeFromBlob } from './blob-size-action.js';
export { recomputeDerivedColumn } from './derived-column-action.js';
export { deleteStaleFace } from './face-actions.js';
export { recomputeFolderPath } from './folder-path-action.js';
export { deleteGrant } from './grant-actions.js';
export { raiseManifestRefCount } from './manifest-counter-action.js';
export { needsPersonKinds } from './needs-person-kinds.js';
export { deleteDanglingReference } from './reference-actions.js';
export type { RepairAction } from './repair-action.js';
export type { AppliedLine, RepairActions, RepairActionsOptions } from './repair-actions.js';
export { chooseLine, createRepairActions } from './repair-actions.js';
export type { RepairJob, RepairJobOptions, RepairRunPlans } from './repair-job.js';
export {
  createRepairJob,
  planPositionCursor,
  REPAIR_COUNTERS,
  REPAIR_JOB_NAME,
  repairParamsSchema,
} from './repair-job.js';
export type {
  ActionLine,
  ApplyOutcome,
  DerivedRow,
  NeedsPersonLine,
  RepairChoice,
  RepairFinding,
  RepairLine,
  RepairState,
} from './repair-line.js';
export { changedSincePlan, stableJson } from './repair-line.js';
export type { RepairChoices, RepairPlanner, RepairPlanView } from './repair-planner.js';
export { createRepairPlanner, planHash } from './repair-planner.js';
export type { RepairRunStarter, RepairService } from './repair-service.js';
export { createRepairService } from './repair-service.js';
export type { RestoreBytesOptions } from './restore-bytes-action.js';
export { createRestoreBytesAction, restoreActionName } from './restore-bytes-action.js';
export { createThumbnailActions, type ThumbnailActionsOptions } from './thumbnail-actions.js';
export { RESTORE_PARENT, resolveTrashedParent, TRASH_CHILD } from './trashed-parent-action.js';
export { recomputeDriveUsage, recomputeUserUsage } from './usage-actions.js';
export type { VerifiedCopy } from './verified-blob-copy.js';
export { copyVerifiedBlob } from './verified-blob-copy.js';
