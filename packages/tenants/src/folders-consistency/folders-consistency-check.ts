/**
 * folders_consistency: each folder row against its parent row.
 *
 * The five decisions (ConsistencyCheck's "for implementors"):
 *
 * 1. Direction. Forward, within the DB: the materialised columns and the
 *    trash flag of a folder against its parent's row (one level; a wrong
 *    ancestor is reported on the ancestor itself, not on every descendant).
 * 2. Severity.
 *    - `parent_trashed_mismatch` (a live folder under a trashed parent):
 *      `DataLoss`. The user notices: the folder has vanished from the live
 *      tree (its parent is in the trash), and emptying the trash, or
 *      trash_cleanup's retention purge, deletes the trashed parent, whose
 *      `ON DELETE CASCADE` takes the live folder and every file in it along.
 *      Not `Drift`: it is not an accounting number, it is user content on
 *      its way out.
 *    - `drive_id_parent_mismatch` (a folder whose `drive_id` differs from its
 *      parent's): `DataLoss`. Listing its own drive from the root never
 *      reaches it (it hangs in another drive's tree, visible to that drive's
 *      owner instead), and deleting the other drive's folder cascades
 *      through `parent_id` into it and its whole subtree. Reported on the
 *      folder where the drive changes, not on its descendants' drive.
 *    - `orphan_root` (the parent is in the same drive, but the parent chain
 *      does not end at a top-level folder of the folder's drive: a cycle, or
 *      a chain that crosses into another drive further up): `DataLoss`, for
 *      the same reason: the folder is unreachable from its drive's root, so
 *      its content has vanished for the user. A folder on a cycle has no
 *      well-defined path, so its `path_mismatch` / `lpath_mismatch` are not
 *      reported (the `orphan_root` names the cause). Not reported on the folder where the drive changes:
 *      that one is the `drive_id_parent_mismatch`.
 *    - `path_mismatch`, `lpath_mismatch`: `Drift`. They are denormalised
 *      copies of the parent chain, whose source of truth (`parent_id`,
 *      `name`) is intact; nothing the user stored is lost and the server can
 *      recompute both exactly. Not `Regenerable`: nothing heals them on the
 *      next request (the trigger only recomputes on a rename or move). Path
 *      lookups can go wrong while they drift, so they come right after the
 *      `DataLoss` findings in triage.
 * 3. Cursor. Phase byte + 16-byte UUID of the last folder: a keyset walk on
 *    the primary key; the parent comparison is a join in the same statement,
 *    and `orphan_root` a recursive walk up each page's parent chains (one
 *    primary-key probe per ancestor, stopped at a root, a drive change or a
 *    repeated folder).
 * 4. Grace. 1 h on the parent's `trashed_at` (counted back from the run's
 *    `startedAt`): a subtree being trashed right now, in several statements,
 *    looks like a live child under a trashed parent for a moment. Path and
 *    lpath need none: triggers keep them in the writing transaction. Neither
 *    do `drive_id_parent_mismatch` and `orphan_root`: a move is one UPDATE of
 *    `parent_id` (and `drive_id`) in one transaction, so one statement's
 *    snapshot never sees it half done. `force` makes it 0.
 * 5. Batch. 1000 rows or 30 s (`singlePhaseScan` of `@oxicloud/consistency`), checkpoint +
 *    status poll between batches; only the anomalies and the last key leave Postgres;
 *    Pass 2 re-reads each anomalous folder and its parent before recording.
 * 6. Closing (findings across runs). A `Completed` run walked every folder;
 *    a finding it did not report again, that pass 2 did not drop, and whose
 *    last report came from a run whose grace boundary is not later than this
 *    run's (a parent trashed long enough then still is, unless the grace
 *    exceeds the time between runs: then a later run decides) is `fixed`; a
 *    deleted folder fixes its findings. No kind has a magnitude.
 */
import {
  type CheckOptions,
  type CheckStore,
  type ConsistencyCheck,
  DEFAULT_GRACE_WINDOW_MS,
  effectiveGraceMs,
  graceBoundary,
  type Inconsistency,
  singlePhaseScan,
} from '@oxicloud/consistency';
import { type RunOutcome, uuidCursor } from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import type { FolderTreeAnomaly, FolderTreeScan, FolderTreeScanOptions } from './folder-tree-scan.js';

/** Job name of the check. */
export const FOLDERS_CONSISTENCY_CHECK_NAME = 'folders_consistency';
/** Finding kinds of folders_consistency. */
export const PARENT_TRASHED_MISMATCH = 'parent_trashed_mismatch';
export const PATH_MISMATCH = 'path_mismatch';
export const LPATH_MISMATCH = 'lpath_mismatch';
export const DRIVE_ID_PARENT_MISMATCH = 'drive_id_parent_mismatch';
export const ORPHAN_ROOT = 'orphan_root';
export const TRASH_FLAGS_MISMATCH = 'trash_flags_mismatch';

/** Options of {@link createFoldersConsistencyCheck}. */
export interface FoldersConsistencyCheckOptions {
  readonly scan: FolderTreeScan;
  /** @defaultValue 1 h */
  readonly graceWindowMs?: number;
  readonly logger?: Logger;
}

/** The findings one anomalous folder row stands for. */
export function folderFindings(a: FolderTreeAnomaly): Inconsistency[] {
  const findings: Inconsistency[] = [];
  if (a.liveUnderTrashedParent) {
    findings.push({
      kind: PARENT_TRASHED_MISMATCH,
      severity: 'DataLoss',
      resourceId: a.folderId,
      detail: {
        drive_id: a.driveId,
        parent_id: a.parentId,
        parent_trashed_at: a.parentTrashedAt?.toISOString() ?? null,
      },
    });
  }
  if (a.parentDriveId !== null) {
    findings.push({
      kind: DRIVE_ID_PARENT_MISMATCH,
      severity: 'DataLoss',
      resourceId: a.folderId,
      detail: { drive_id: a.driveId, parent_id: a.parentId, parent_drive_id: a.parentDriveId },
    });
  }
  if (a.trashFlags) {
    findings.push({
      kind: TRASH_FLAGS_MISMATCH,
      severity: 'Drift',
      resourceId: a.folderId,
      detail: { drive_id: a.driveId, parent_id: a.parentId, problem: a.trashFlags },
    });
  }
  if (a.orphanRoot) {
    findings.push({
      kind: ORPHAN_ROOT,
      severity: 'DataLoss',
      resourceId: a.folderId,
      detail: { drive_id: a.driveId, parent_id: a.parentId, path: a.path },
    });
    return findings;
  }
  if (a.path !== a.expectedPath) {
    findings.push({
      kind: PATH_MISMATCH,
      severity: 'Drift',
      resourceId: a.folderId,
      detail: { drive_id: a.driveId, parent_id: a.parentId, recorded: a.path, expected: a.expectedPath },
    });
  }
  if (a.lpath !== a.expectedLpath) {
    findings.push({
      kind: LPATH_MISMATCH,
      severity: 'Drift',
      resourceId: a.folderId,
      detail: { drive_id: a.driveId, parent_id: a.parentId, recorded: a.lpath, expected: a.expectedLpath },
    });
  }
  return findings;
}

/**
 * The `folders_consistency` check over a {@link FolderTreeScan}. Findings
 * (resource = folder id): `parent_trashed_mismatch`, `drive_id_parent_mismatch`
 * and `orphan_root` (`DataLoss`), `path_mismatch` and `lpath_mismatch`
 * (`Drift`, detail `{ recorded, expected }`).
 */
export function createFoldersConsistencyCheck(options: FoldersConsistencyCheckOptions): ConsistencyCheck {
  const { scan, logger } = options;
  const graceMs = options.graceWindowMs ?? DEFAULT_GRACE_WINDOW_MS;
  const check: ConsistencyCheck = {
    name: FOLDERS_CONSISTENCY_CHECK_NAME,
    subsystem: scan.subsystem(),
    order: 20,
    countMeaning:
      "findings this run found: folders whose path, lpath or trashed flag disagrees with their parent's",
    kinds: [
      {
        kind: PARENT_TRASHED_MISMATCH,
        severity: 'DataLoss',
        meaning:
          'a live folder under a trashed parent: gone from the live tree, and emptying the trash deletes it',
        repair: 'resolve_live_under_trashed_parent: a choice, restore_parent or trash_child',
      },
      {
        kind: PATH_MISMATCH,
        severity: 'Drift',
        meaning: "the folder's materialised path differs from its parent's path plus its name",
        repair: 'recompute_folder_path: path and lpath from the parent chain, and the subtree below',
      },
      {
        kind: LPATH_MISMATCH,
        severity: 'Drift',
        meaning: "the folder's lpath differs from its parent's lpath plus its own label",
        repair: 'recompute_folder_path: path and lpath from the parent chain, and the subtree below',
      },
      {
        kind: DRIVE_ID_PARENT_MISMATCH,
        severity: 'DataLoss',
        meaning: "the folder's drive differs from its parent's: it hangs in another drive's tree",
        repair: null,
      },
      {
        kind: TRASH_FLAGS_MISMATCH,
        severity: 'Drift',
        meaning:
          "the folder's trash columns disagree with its flag: trashed with no trashed_at (the 30-day purge never takes it), or live with a trashed_at or an original_parent_id left (trashing its parent later, a restore leaves it in the trash)",
        repair: null,
      },
      {
        kind: ORPHAN_ROOT,
        severity: 'DataLoss',
        meaning:
          "a live top-level folder no drive points at as its root, or a folder whose parent chain never reaches its drive's root (a cycle, or a detour through another drive)",
        repair: null,
      },
    ],
    graceWindowMs: () => graceMs,
    concurrentSafe: () => true,
    estimateTotal: () => scan.estimateRows(),
    runResumable(store: CheckStore, runOptions: CheckOptions, signal: AbortSignal): Promise<RunOutcome> {
      const scanOptions: FolderTreeScanOptions = {
        trashedBefore: graceBoundary(store.startedAt, effectiveGraceMs(check, runOptions)),
      };
      return singlePhaseScan({
        name: FOLDERS_CONSISTENCY_CHECK_NAME,
        store,
        options: runOptions,
        signal,
        logger,
        key: { codec: uuidCursor, bytes: 16 },
        fetch: (after, limit) => scan.scanFolderTree(after, limit, scanOptions),
        // Every declared kind is a candidate, so Pass 2 also drops kinds recorded before a resume that have since healed.
        kinds: check.kinds.map((k) => k.kind),
        resourceOf: (a) => a.folderId,
        reverify: async (items) =>
          (
            await scan.reverifyFolderTree(
              items.map((a) => a.folderId),
              scanOptions,
            )
          ).flatMap(folderFindings),
      });
    },
  };
  return check;
}
