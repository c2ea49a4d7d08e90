import type { RepairTx } from '../ports/repair-store.js';
import { bytes, type RepairAction, short, skipped } from './repair-action.js';
import {
  type ActionLine,
  changedSincePlan,
  lineBase,
  needsPerson,
  type RepairFinding,
} from './repair-line.js';

/** Finding kinds of drives_consistency (kept here to avoid a cycle with the check's module). */
const DRIVE_DRIFT = 'drive_used_bytes_drift';
const USER_DRIFT = 'user_used_bytes_drift';

/**
 * `drive_used_bytes_drift` → set the drive's `used_bytes` to the sum of its
 * own files (the domain's rule: trashed included on the engine's model, live
 * only on OxiCloud's); derived: the owner's envelope moves by the same delta
 * (not for a drive outside every envelope: an OxiCloud shared drive).
 */
export const recomputeDriveUsage: RepairAction = {
  verifyFirst: true,
  kinds: [DRIVE_DRIFT],
  async plan(finding: RepairFinding, tx: RepairTx) {
    const id = finding.resourceId;
    const state = await tx.driveUsage(id, false);
    if (state === null) return needsPerson(finding, { type: 'drive', id }, 'the drive no longer exists');
    const delta = state.filesBytes - state.usedBytes;
    const line: ActionLine = {
      type: 'action',
      ...lineBase(finding),
      action: 'recompute_drive_used_bytes',
      resource: { type: 'drive', id },
      summary: `drive ${short(id)} used_bytes ${bytes(state.usedBytes)} → ${bytes(state.filesBytes)}`,
      before: { used_bytes: state.usedBytes, files_bytes: state.filesBytes, owner_id: state.ownerId },
      after: { used_bytes: state.filesBytes },
      derived:
        state.countsInEnvelope === false
          ? []
          : [
              {
                type: 'user',
                id: state.ownerId,
                before: {},
                after: { storage_used_bytes_delta: delta },
              },
            ],
    };
    return line;
  },
  async apply(line, tx) {
    const id = line.resource.id;
    const state = await tx.driveUsage(id, true);
    if (state === null) return skipped('the drive no longer exists');
    const now = { used_bytes: state.usedBytes, files_bytes: state.filesBytes, owner_id: state.ownerId };
    const changed = changedSincePlan(line.before, now);
    if (changed !== null) return skipped(`drive ${id} ${changed}`);
    const delta = state.filesBytes - state.usedBytes;
    await tx.addUsage(id, delta);
    return { status: 'applied', before: now, after: { used_bytes: state.filesBytes } };
  },
  async verify(line, tx) {
    const s = await tx.driveUsage(line.resource.id, false);
    if (s === null) return null; // the drive is gone: nothing drifts
    return s.usedBytes === s.filesBytes ? null : `used_bytes ${s.usedBytes} ≠ files ${s.filesBytes}`;
  },
};

/**
 * `user_used_bytes_drift` → set the user's envelope to the sum of their
 * drives' `used_bytes`. Apply compares the drift (`recorded − drives`), not
 * the two numbers: a drive repair in the same plan (or an upload) moves both
 * by the same delta and leaves the drift this line fixes unchanged.
 */
export const recomputeUserUsage: RepairAction = {
  verifyFirst: true,
  kinds: [USER_DRIFT],
  async plan(finding, tx) {
    const id = finding.resourceId;
    const state = await tx.userUsage(id, false);
    if (state === null) return needsPerson(finding, { type: 'user', id }, 'the user no longer exists');
    return {
      type: 'action',
      ...lineBase(finding),
      action: 'recompute_user_used_bytes',
      resource: { type: 'user', id },
      summary: `user ${short(id)} storage_used_bytes ${bytes(state.usedBytes)} → ${bytes(state.drivesBytes)}`,
      before: { drift: state.usedBytes - state.drivesBytes },
      after: { storage_used_bytes: state.drivesBytes },
      derived: [],
    };
  },
  async apply(line, tx) {
    const id = line.resource.id;
    const state = await tx.userUsage(id, true);
    if (state === null) return skipped('the user no longer exists');
    const changed = changedSincePlan(line.before, { drift: state.usedBytes - state.drivesBytes });
    if (changed !== null) return skipped(`user ${id} ${changed}`);
    await tx.setUserUsedBytes(id, state.drivesBytes);
    return {
      status: 'applied',
      before: { storage_used_bytes: state.usedBytes, drives_bytes: state.drivesBytes },
      after: { storage_used_bytes: state.drivesBytes },
    };
  },
  async verify(line, tx) {
    const s = await tx.userUsage(line.resource.id, false);
    if (s === null) return null;
    return s.usedBytes === s.drivesBytes
      ? null
      : `storage_used_bytes ${s.usedBytes} ≠ drives ${s.drivesBytes}`;
  },
};
