import type { RepairTx, TrashedParentState } from '../ports/repair-store.js';
import { type RepairAction, short, skipped } from './repair-action.js';
import {
  type ActionLine,
  changedSincePlan,
  lineBase,
  needsPerson,
  type RepairChoice,
} from './repair-line.js';

/** files_consistency: a live file in a trashed folder (resource = file id). */
const PARENT_FOLDER_TRASHED = 'parent_folder_trashed';
/** folders_consistency: a live folder under a trashed parent (resource = folder id). */
const PARENT_TRASHED_MISMATCH = 'parent_trashed_mismatch';

/** The two choices of a live row under a trashed parent. */
export const RESTORE_PARENT = 'restore_parent';
export const TRASH_CHILD = 'trash_child';

function state(s: TrashedParentState) {
  return {
    trashed: s.trashed,
    trashed_ancestors: s.trashedAncestors,
    live_folders_below: s.liveFolders,
    live_files_below: s.liveFiles,
  };
}

function choices(type: 'file' | 'folder', id: string, s: TrashedParentState): RepairChoice[] {
  return [
    {
      id: RESTORE_PARENT,
      description: `restore the ${s.trashedAncestors.length} trashed folder(s) above the ${type}`,
      after: { trashed: false },
      derived: s.trashedAncestors.map((f) => ({
        type: 'folder',
        id: f,
        before: { is_trashed: true },
        after: { is_trashed: false },
      })),
    },
    {
      id: TRASH_CHILD,
      description: `trash the ${type}${type === 'folder' ? ' and the live rows below it' : ''}`,
      after: { trashed: true },
      derived: [
        ...(type === 'folder'
          ? [{ type: 'folder', id, before: { is_trashed: false }, after: { is_trashed: true } }]
          : []),
        ...s.liveFolders.map((f) => ({
          type: 'folder',
          id: f,
          before: { is_trashed: false },
          after: { is_trashed: true },
        })),
        ...s.liveFiles.map((f) => ({
          type: 'file',
          id: f,
          before: { is_trashed: false },
          after: { is_trashed: true },
        })),
        ...(s.trashUsage ?? []).flatMap((u) => [
          { type: 'drive', id: u.driveId, before: {}, after: { used_bytes_delta: -u.bytes } },
          ...(u.userId === null
            ? []
            : [{ type: 'user', id: u.userId, before: {}, after: { storage_used_bytes_delta: -u.bytes } }]),
        ]),
      ],
    },
  ];
}

/**
 * A live folder or file under a trashed parent → the operator chooses per
 * item: restore the trashed folders above it, or trash it (a folder with the
 * live rows below it). Apply refuses a line without a choice.
 */
export const resolveTrashedParent: RepairAction = {
  kinds: [PARENT_FOLDER_TRASHED, PARENT_TRASHED_MISMATCH],
  async plan(finding, tx: RepairTx) {
    const type = finding.kind === PARENT_FOLDER_TRASHED ? 'file' : 'folder';
    const id = finding.resourceId;
    const s = await tx.trashedParent(type, id, false);
    if (s === null) return needsPerson(finding, { type, id }, `the ${type} no longer exists`);
    if (s.trashed || s.trashedAncestors.length === 0) {
      return needsPerson(finding, { type, id }, `the ${type} is no longer live under a trashed folder`);
    }
    const line: ActionLine = {
      type: 'action',
      ...lineBase(finding),
      action: 'resolve_live_under_trashed_parent',
      resource: { type, id },
      summary: `${type} ${short(id)} is live under ${s.trashedAncestors.length} trashed folder(s): restore the parent or trash the ${type}`,
      before: state(s),
      after: {},
      derived: [],
      choices: choices(type, id, s),
      choice: null,
    };
    return line;
  },
  async apply(line, tx) {
    const type = line.resource.type === 'file' ? 'file' : 'folder';
    const id = line.resource.id;
    if (line.choice !== RESTORE_PARENT && line.choice !== TRASH_CHILD) {
      return skipped(`no choice made (allowed: ${RESTORE_PARENT}, ${TRASH_CHILD})`);
    }
    const s = await tx.trashedParent(type, id, true);
    if (s === null) return skipped(`the ${type} no longer exists`);
    const now = state(s);
    const changed = changedSincePlan(line.before, now);
    if (changed !== null) return skipped(`${type} ${id} ${changed}`);
    if (line.choice === RESTORE_PARENT) {
      await tx.restoreFolders(s.trashedAncestors);
      return {
        status: 'applied',
        before: now,
        after: { choice: RESTORE_PARENT, restored: s.trashedAncestors },
      };
    }
    const folders = type === 'folder' ? [id, ...s.liveFolders] : [];
    const files = type === 'file' ? [id] : s.liveFiles;
    await tx.trashRows(folders, files);
    return {
      status: 'applied',
      before: now,
      after: { choice: TRASH_CHILD, trashed_folders: folders, trashed_files: files },
    };
  },
  async verify(line, tx) {
    const type = line.resource.type === 'file' ? 'file' : 'folder';
    const s = await tx.trashedParent(type, line.resource.id, false);
    if (s === null || s.trashed || s.trashedAncestors.length === 0) return null;
    return `still live under ${s.trashedAncestors.length} trashed folder(s)`;
  },
};
