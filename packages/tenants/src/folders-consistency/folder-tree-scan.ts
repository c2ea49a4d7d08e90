import type { StatefulAdapter } from '@oxicloud/consistency';
import type { ScanPage } from '../ports/scan-page.js';

/** A folder whose row disagrees with its parent row. */
export interface FolderTreeAnomaly {
  readonly folderId: string;
  readonly driveId: string;
  readonly parentId: string | null;
  /**
   * The folder is live (`is_trashed = false`) while its parent is trashed,
   * and the parent was trashed before the grace boundary.
   */
  readonly liveUnderTrashedParent: boolean;
  readonly parentTrashedAt: Date | null;
  /** The materialised `path`. */
  readonly path: string;
  /** `parent.path || '/' || name` (`'/' || name` for a root). */
  readonly expectedPath: string;
  /** The materialised `lpath` as text. */
  readonly lpath: string;
  /** `parent.lpath || label(id)` (`label(id)` for a root), label = the id without dashes. */
  readonly expectedLpath: string;
  /** The parent's `drive_id` when it differs from the folder's (`null` when they agree or there is no parent). */
  readonly parentDriveId: string | null;
  /**
   * The parent is in the same drive, but following `parent_id` upward never
   * reaches a top-level folder of this drive: a cycle, or a chain that
   * crosses into another drive further up.
   */
  readonly orphanRoot: boolean;
  /**
   * The trash columns disagree with the flag (§12 item 7): a trashed row
   * with no `trashed_at` (`trashed_without_trashed_at`), or a live row that
   * still has one (`live_with_trashed_at`) or an `original_*` column
   * (`live_with_original_parent`); `null` when they agree. Optional: a
   * scan of a model without these columns leaves it out.
   */
  readonly trashFlags?: TrashFlagsProblem | null;
}

/** The ways a row's trash columns can disagree with its `is_trashed` (fact sheet §12 item 7). */
export const TRASH_FLAGS_PROBLEMS = [
  'trashed_without_trashed_at',
  'live_with_trashed_at',
  'live_with_original_parent',
] as const;
/** One of {@link TRASH_FLAGS_PROBLEMS}. */
export type TrashFlagsProblem = (typeof TRASH_FLAGS_PROBLEMS)[number];

/** The grace boundary of a folder-tree scan. */
export interface FolderTreeScanOptions {
  /** Only a parent trashed at or before this instant counts (a subtree being trashed right now is skipped). */
  readonly trashedBefore: Date;
}

/**
 * What `folders_consistency` reads: folders walked in id order, each
 * compared in SQL with its parent row. A state-owning port: the adapter
 * returns `folders_consistency` from `consistencyChecks()`.
 */
export interface FolderTreeScan extends StatefulAdapter {
  /**
   * Up to `limit` folders with id > `afterId` in id order; the anomalies are
   * the folders with any mismatch (parent trashed, path, lpath, parent in
   * another drive, a parent chain that does not end at a root of its drive).
   */
  scanFolderTree(
    afterId: string | null,
    limit: number,
    options: FolderTreeScanOptions,
  ): Promise<ScanPage<FolderTreeAnomaly>>;
  /** Pass 2: re-reads these folders and their parents now; returns those still mismatched. */
  reverifyFolderTree(
    folderIds: readonly string[],
    options: FolderTreeScanOptions,
  ): Promise<FolderTreeAnomaly[]>;
  /** Rows the walk will examine, from planner statistics; `null` when unknown. */
  estimateRows(): Promise<number | null>;
}
