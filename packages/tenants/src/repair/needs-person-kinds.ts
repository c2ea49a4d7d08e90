import { type RepairAction, skipped } from './repair-action.js';
import { needsPerson, type RepairFinding, type RepairLine, type RepairState } from './repair-line.js';

/** folders_consistency and files_consistency (the same kind name): a row whose drive differs from its parent's. */
const DRIVE_ID_PARENT_MISMATCH = 'drive_id_parent_mismatch';
/** folders_consistency: the parent chain does not end at a top-level folder of the folder's drive. */
const ORPHAN_ROOT = 'orphan_root';
/** files_consistency: the file's `mime_type` against its blob's `content_type`. */
const MIME_MISMATCH = 'mime_mismatch';
/** manifests_consistency: `ref_count` above the files naming the manifest (OxiCloud §12 item 14). */
const MANIFEST_REF_COUNT_HIGH = 'manifest_ref_count_high';

const text = (v: unknown): string => (typeof v === 'string' ? v : String(v ?? 'unknown'));

function reasonFor(finding: RepairFinding): { type: string; reason: string; affected: RepairState[] } {
  const d = finding.detail;
  switch (finding.kind) {
    case DRIVE_ID_PARENT_MISMATCH:
      if (finding.checkName === 'files_consistency') {
        return {
          type: 'file',
          reason:
            `the file's drive ${text(d['drive_id'])} differs from its folder ${text(d['folder_id'])}'s drive ${text(d['folder_drive_id'])}, ` +
            "and either side may be the wrong one: moving the file to its folder's drive hands its content and quota to " +
            "that drive's owner; moving it to the root of its own drive may be wrong if the folder is the truth. " +
            "Which user owns this content is a person's decision",
          affected: [
            { file_id: finding.resourceId, drive_id: d['drive_id'] ?? null },
            { folder_id: d['folder_id'] ?? null, drive_id: d['folder_drive_id'] ?? null },
          ],
        };
      }
      return {
        type: 'folder',
        reason:
          `the folder's drive ${text(d['drive_id'])} differs from its parent ${text(d['parent_id'])}'s drive ${text(d['parent_drive_id'])}, ` +
          "and either side may be the wrong one: moving the subtree into the parent's drive hands every file below it to " +
          "that drive's owner (content and quota); detaching it to its own drive's root discards a parent that may be " +
          "the truth. Which user owns this subtree is a person's decision",
        affected: [
          { folder_id: finding.resourceId, drive_id: d['drive_id'] ?? null },
          { folder_id: d['parent_id'] ?? null, drive_id: d['parent_drive_id'] ?? null },
        ],
      };
    case ORPHAN_ROOT:
      if (d['parent_id'] === null || d['parent_id'] === undefined) {
        return {
          type: 'folder',
          reason:
            `a live top-level folder (drive ${text(d['drive_id'])}, path ${text(d['path'])}) that no drive names as its root ` +
            '(its drive points at another root: a drive repointed by hand, or a restore): OxiCloud rejects any later update ' +
            'of it at commit (trg_no_orphan_root_folder). Whether its folders and files belong under the drive’s root or ' +
            'the drive should point back at it is a person’s decision',
          affected: [{ folder_id: finding.resourceId, drive_id: d['drive_id'] ?? null, parent_id: null }],
        };
      }
      return {
        type: 'folder',
        reason:
          `the parent chain of the folder (drive ${text(d['drive_id'])}, parent ${text(d['parent_id'])}, recorded path ${text(d['path'])}) ` +
          'never reaches a top-level folder of its drive (a cycle, or a chain through another drive): the original parent ' +
          'is not recorded anywhere, so no chain can be rebuilt; a person picks where the folder belongs ' +
          '(e.g. set its parent_id to a folder of its drive, or to NULL to make it top-level)',
        affected: [
          {
            folder_id: finding.resourceId,
            drive_id: d['drive_id'] ?? null,
            parent_id: d['parent_id'] ?? null,
          },
        ],
      };
    case MIME_MISMATCH:
      return {
        type: 'file',
        reason:
          `the file's mime_type ${text(d['mime_type'])} and its blob ${text(d['blob_hash'])}'s content_type ` +
          `${text(d['blob_content_type'])} are both declared, neither sniffed: the blob's is its first upload's and is ` +
          'shared by every file of the same bytes, so neither is authoritative. A person decides which one is right ' +
          "(storage_consistency's deep run sniffs the bytes: blob_mime_mismatch)",
        affected: [
          {
            file_id: finding.resourceId,
            mime_type: d['mime_type'] ?? null,
            blob_hash: d['blob_hash'] ?? null,
            blob_content_type: d['blob_content_type'] ?? null,
          },
        ],
      };
    case MANIFEST_REF_COUNT_HIGH:
      return {
        type: 'manifest',
        reason:
          `ref_count ${text(d['ref_count'])} is above the ${text(d['file_count'])} file(s) naming the manifest: a leak ` +
          "OxiCloud's GC clears once no file names it. A repair never lowers a count: an upload in flight adds its " +
          'reference before its file row, and a count below the files lets OxiCloud delete a manifest still in use. ' +
          'A person decides (e.g. lowers it with OxiCloud stopped)',
        affected: [
          {
            file_hash: finding.resourceId,
            ref_count: d['ref_count'] ?? null,
            file_count: d['file_count'] ?? null,
          },
        ],
      };
    default:
      return { type: 'unknown', reason: `no safe repair action for ${finding.kind}`, affected: [] };
  }
}

/**
 * The kinds of issue 19 with no single right answer, each "needs a person"
 * with the precise why (from the finding's detail), never an action:
 *
 * - `drive_id_parent_mismatch` (folders and files): either the row's drive
 *   or its parent's is wrong, and each fix hands content to a different
 *   owner;
 * - `orphan_root`: the chain is a cycle or crosses drives, and the original
 *   parent is recorded nowhere;
 * - `mime_mismatch`: both types are declared, neither is authoritative;
 * - `manifest_ref_count_high` (OxiCloud): a count is never lowered by a
 *   repair, an upload in flight may hold the difference.
 */
export const needsPersonKinds: RepairAction = {
  kinds: [DRIVE_ID_PARENT_MISMATCH, ORPHAN_ROOT, MIME_MISMATCH, MANIFEST_REF_COUNT_HIGH],
  async plan(finding): Promise<RepairLine> {
    const { type, reason, affected } = reasonFor(finding);
    return needsPerson(finding, { type, id: finding.resourceId }, reason, affected);
  },
  async apply() {
    return skipped('needs a person: no repair action for this kind');
  },
  async verify() {
    return 'needs a person: no repair action for this kind';
  },
};
