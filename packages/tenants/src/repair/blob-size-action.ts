import type { FileBlobSizeState, RepairTx } from '../ports/repair-store.js';
import { bytes, type RepairAction, short, skipped } from './repair-action.js';
import { changedSincePlan, lineBase, needsPerson } from './repair-line.js';

const BLOB_SIZE_MISMATCH = 'blob_size_mismatch';

function state(s: FileBlobSizeState) {
  return { size: s.fileSize, blob_hash: s.blobHash, blob_size: s.blobSize, drive_id: s.driveId };
}

/**
 * `blob_size_mismatch` → set the file's `size` from its blob row (OxiCloud:
 * its content's size); derived: the drive's `used_bytes` and the owner's
 * envelope move by the same delta (neither for a file the drive does not
 * count, such as a trashed one on OxiCloud's domain; no envelope for a
 * drive outside every envelope).
 */
export const setFileSizeFromBlob: RepairAction = {
  kinds: [BLOB_SIZE_MISMATCH],
  async plan(finding, tx: RepairTx) {
    const id = finding.resourceId;
    const s = await tx.fileBlobSize(id, false);
    if (s === null) return needsPerson(finding, { type: 'file', id }, 'the file no longer exists');
    if (s.blobSize === null) {
      return needsPerson(
        finding,
        { type: 'file', id },
        `the blob row ${s.blobHash} is missing: no size to copy`,
      );
    }
    const delta = s.blobSize - s.fileSize;
    return {
      type: 'action',
      ...lineBase(finding),
      action: 'set_file_size_from_blob',
      resource: { type: 'file', id },
      summary: `file ${short(id)} size ${bytes(s.fileSize)} → ${bytes(s.blobSize)}`,
      before: state(s),
      after: { size: s.blobSize },
      derived: [
        ...(s.countsInUsage === false
          ? []
          : [{ type: 'drive', id: s.driveId, before: {}, after: { used_bytes_delta: delta } }]),
        ...(s.countsInUsage === false || s.countsInEnvelope === false
          ? []
          : [{ type: 'user', id: s.ownerId, before: {}, after: { storage_used_bytes_delta: delta } }]),
      ],
    };
  },
  async apply(line, tx) {
    const id = line.resource.id;
    const s = await tx.fileBlobSize(id, true);
    if (s === null) return skipped('the file no longer exists');
    const now = state(s);
    const changed = changedSincePlan(line.before, now);
    if (changed !== null) return skipped(`file ${id} ${changed}`);
    if (s.blobSize === null) return skipped(`the blob row ${s.blobHash} is missing`);
    await tx.setFileSize(id, s.blobSize);
    if (s.countsInUsage !== false) await tx.addUsage(s.driveId, s.blobSize - s.fileSize);
    return { status: 'applied', before: now, after: { size: s.blobSize } };
  },
  async verify(line, tx) {
    const s = await tx.fileBlobSize(line.resource.id, false);
    if (s === null) return null;
    return s.blobSize === null || s.blobSize === s.fileSize
      ? null
      : `size ${s.fileSize} ≠ blob ${s.blobSize}`;
  },
};
