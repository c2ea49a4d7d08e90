import type { FolderPathRow, RepairTx } from '../ports/repair-store.js';
import { type RepairAction, short, skipped } from './repair-action.js';
import { changedSincePlan, lineBase, needsPerson } from './repair-line.js';

const PATH_MISMATCH = 'path_mismatch';
const LPATH_MISMATCH = 'lpath_mismatch';

function rowState(r: FolderPathRow) {
  return { path: r.path, lpath: r.lpath };
}

function rowsState(rows: readonly FolderPathRow[]) {
  return rows.map((r) => ({ id: r.folderId, path: r.path, lpath: r.lpath }));
}

/**
 * What the line changes, for its summary: `path /a → /b`; for an
 * `lpath_mismatch` (or a path that is already right) the lpath,
 * `lpath /a/b → /a/c`; both when both change.
 */
function changeText(kind: string, head: FolderPathRow): string {
  const path = `path ${head.path} → ${head.expectedPath}`;
  const lpath = `lpath ${head.lpath} → ${head.expectedLpath}`;
  const pathChanges = head.path !== head.expectedPath;
  const lpathChanges = head.lpath !== head.expectedLpath;
  if (pathChanges && lpathChanges) return `${path}, ${lpath}`;
  if (pathChanges) return path;
  if (lpathChanges || kind === LPATH_MISMATCH) return lpath;
  return path;
}

/**
 * `path_mismatch` / `lpath_mismatch` → write the folder's `path` and `lpath`
 * as its parent chain from the root gives them, and those of the folders
 * below it that differ (the derived rows).
 */
export const recomputeFolderPath: RepairAction = {
  kinds: [PATH_MISMATCH, LPATH_MISMATCH],
  async plan(finding, tx: RepairTx) {
    const id = finding.resourceId;
    const rows = await tx.folderPaths(id, false);
    const head = rows?.[0];
    if (rows === null || head === undefined) {
      return needsPerson(
        finding,
        { type: 'folder', id },
        'the folder no longer exists or its parent chain does not reach a root folder',
      );
    }
    const below = rows.slice(1);
    return {
      type: 'action',
      ...lineBase(finding),
      action: 'recompute_folder_path',
      resource: { type: 'folder', id },
      summary: `folder ${short(id)} ${changeText(finding.kind, head)}${below.length > 0 ? ` (+${below.length} below)` : ''}`,
      before: { ...rowState(head), subtree: rowsState(below) },
      after: { path: head.expectedPath, lpath: head.expectedLpath },
      derived: below.map((r) => ({
        type: 'folder',
        id: r.folderId,
        before: rowState(r),
        after: { path: r.expectedPath, lpath: r.expectedLpath },
      })),
    };
  },
  async apply(line, tx) {
    const id = line.resource.id;
    const rows = await tx.folderPaths(id, true);
    const head = rows?.[0];
    if (rows === null || head === undefined) return skipped('the folder no longer exists or has no root');
    const now = { ...rowState(head), subtree: rowsState(rows.slice(1)) };
    const changed = changedSincePlan(line.before, now);
    if (changed !== null) return skipped(`folder ${id} ${changed}`);
    const expectedNow = { path: head.expectedPath, lpath: head.expectedLpath };
    const moved = changedSincePlan(line.after, expectedNow);
    if (moved !== null) return skipped(`folder ${id}: its parent chain ${moved}`);
    const changedRows = await tx.rewriteFolderPaths(id);
    return { status: 'applied', before: now, after: { ...expectedNow, rows_changed: changedRows } };
  },
  async verify(line, tx) {
    const rows = await tx.folderPaths(line.resource.id, false);
    const head = rows?.[0];
    if (rows === null || head === undefined) return 'the folder is gone or has no root';
    if (head.path !== head.expectedPath) return `path ${head.path} ≠ ${head.expectedPath}`;
    if (head.lpath !== head.expectedLpath) return `lpath ${head.lpath} ≠ ${head.expectedLpath}`;
    return null;
  },
};
