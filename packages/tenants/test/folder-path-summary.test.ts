import { describe, expect, it } from 'vitest';
import type { FolderPathRow, RepairTx } from '../src/ports/repair-store.js';
import { recomputeFolderPath } from '../src/repair/folder-path-action.js';
import type { ActionLine, RepairFinding } from '../src/repair/repair-line.js';

const FOLDER = '01936f2a-7c10-7a2b-9c3d-4e5f60718293';

/** A repair transaction (the port) that knows one folder's stored and expected paths. */
function txWith(row: Omit<FolderPathRow, 'folderId'>): RepairTx {
  return {
    folderPaths: async (id: string) => (id === FOLDER ? [{ folderId: FOLDER, ...row }] : null),
  } as unknown as RepairTx;
}

function finding(kind: string): RepairFinding {
  return {
    id: '01936f2a-7c10-7000-8000-000000000001',
    checkName: 'folders_consistency',
    kind,
    resourceId: FOLDER,
    lastSeenRunId: null,
    detail: {},
  };
}

describe('a folder path repair line says what changes', () => {
  it('an lpath_mismatch line shows the lpath that changes, not the unchanged path', async () => {
    const tx = txWith({
      path: '/Docs/Plans',
      lpath: '/docs/old',
      expectedPath: '/Docs/Plans',
      expectedLpath: '/docs/plans',
    });
    const line = (await recomputeFolderPath.plan(finding('lpath_mismatch'), tx)) as ActionLine;
    expect(line.summary).toBe('folder …4e5f60718293 lpath /docs/old → /docs/plans');
  });

  it('a path_mismatch line shows the path; both when both change', async () => {
    const pathOnly = txWith({ path: '/A/x', lpath: '/a/b', expectedPath: '/A/B', expectedLpath: '/a/b' });
    expect(((await recomputeFolderPath.plan(finding('path_mismatch'), pathOnly)) as ActionLine).summary).toBe(
      'folder …4e5f60718293 path /A/x → /A/B',
    );
    const both = txWith({ path: '/A/x', lpath: '/a/x', expectedPath: '/A/B', expectedLpath: '/a/b' });
    expect(((await recomputeFolderPath.plan(finding('path_mismatch'), both)) as ActionLine).summary).toBe(
      'folder …4e5f60718293 path /A/x → /A/B, lpath /a/x → /a/b',
    );
  });
});
