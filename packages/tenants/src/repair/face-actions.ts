import type { FaceRowState, RepairTx } from '../ports/repair-store.js';
import { STALE_FACE_HASH } from '../references-consistency/references-consistency-check.js';
import { type RepairAction, short, skipped } from './repair-action.js';
import { type ActionLine, changedSincePlan, lineBase, needsPerson } from './repair-line.js';

const state = (s: FaceRowState) => ({ file_id: s.fileId, face_hash: s.faceHash, file_hash: s.fileHash });

/** `null` when the face belongs to its file's content (or records none), else why not. */
const stale = (s: FaceRowState): string | null =>
  s.faceHash === null || s.faceHash === s.fileHash
    ? null
    : `found in content ${short(s.faceHash)}, its file is ${short(s.fileHash)} now`;

/**
 * `stale_face_hash` → delete the face: it was found in content its file no
 * longer has. OxiCloud's own update path deletes a file's faces first and
 * then indexes the new content in the background; this is its first half,
 * for a face whose reindex never came (its boxes are not where the People
 * view draws them). The file's next content update indexes it again. Apply
 * re-reads the face and its file under the face's lock and skips when
 * either hash changed since the plan.
 */
export const deleteStaleFace: RepairAction = {
  kinds: [STALE_FACE_HASH],
  async plan(finding, tx: RepairTx) {
    const resource = { type: 'face', id: finding.resourceId };
    if (tx.faceRow === undefined || tx.deleteFace === undefined) {
      return needsPerson(finding, resource, 'this storage domain has no faces to repair');
    }
    const s = await tx.faceRow(finding.resourceId, false);
    if (s === null) return needsPerson(finding, resource, 'the face no longer exists');
    const why = stale(s);
    if (why === null) return needsPerson(finding, resource, "the face belongs to its file's content now");
    const line: ActionLine = {
      type: 'action',
      ...lineBase(finding),
      action: 'delete_stale_face',
      resource,
      summary: `face ${short(finding.resourceId)} of file ${short(s.fileId)} deleted: ${why}`,
      before: state(s),
      after: { deleted: true },
      derived: [],
    };
    return line;
  },
  async apply(line, tx) {
    if (tx.faceRow === undefined || tx.deleteFace === undefined) {
      return skipped('this storage domain has no faces to repair');
    }
    const s = await tx.faceRow(line.resource.id, true);
    if (s === null) return skipped('the face no longer exists');
    const now = state(s);
    const changed = changedSincePlan(line.before, now);
    if (changed !== null) return skipped(`face ${line.resource.id} ${changed}`);
    await tx.deleteFace(line.resource.id);
    return { status: 'applied', before: now, after: { deleted: true } };
  },
  async verify(line, tx) {
    const s = await tx.faceRow?.(line.resource.id, false);
    return s === null || s === undefined ? null : stale(s);
  },
};
