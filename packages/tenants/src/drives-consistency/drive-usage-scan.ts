import type { StatefulAdapter } from '@oxicloud/consistency';
import type { ScanPage } from '../ports/scan-page.js';

/**
 * A drive whose `used_bytes` differs from `SUM(size)` of the files its
 * domain counts: on OxiCloud's domain the live files only (trashed files are
 * not counted, as OxiCloud's own reconciliation does).
 */
export interface DriveUsageDrift {
  readonly driveId: string;
  /**
   * The drive's owner: on OxiCloud's domain the user of its owner grant
   * (there is no owner column; `''` for a drive no user owns, e.g. a shared
   * drive owned by a group only).
   */
  readonly ownerId: string;
  /** `storage.drives.used_bytes`. */
  readonly recordedBytes: number;
  /** `SUM(storage.files.size)` over the files the domain counts (the reconcile job's rule). */
  readonly actualBytes: number;
}

/**
 * A user whose envelope `auth.users.storage_used_bytes` differs from
 * `SUM(used_bytes)` of their drives (on OxiCloud's domain: the personal
 * drives the user owns through an owner grant).
 */
export interface UserUsageDrift {
  readonly userId: string;
  /** `auth.users.storage_used_bytes`. */
  readonly recordedBytes: number;
  /** `SUM(storage.drives.used_bytes)` over the user's drives. */
  readonly actualBytes: number;
  readonly driveCount: number;
}

/**
 * A drive whose shape breaks fact sheet §12 items 5 and 8: its root, its
 * owner grants, its default user. Codes, each once:
 * - `rootProblems`: `root_unset` (`root_folder_id` NULL), `root_missing`
 *   (no such folder), `root_has_parent` (the folder is not a root),
 *   `root_in_other_drive` (the folder's `drive_id` is another drive),
 *   `root_shared` (another drive names the same root; there is no unique index);
 * - `ownerProblems` (personal drives with an owner): `user_owner_count` (not
 *   exactly one user owner grant), `default_not_owner` (`default_for_user`
 *   set and not that owner).
 */
export interface DriveShapeAnomaly {
  readonly driveId: string;
  /** `storage.drives.kind`: `personal` or `shared`. */
  readonly driveKind: string;
  /** Owner grants in force on the drive (no expiry, or a later one), users and groups. */
  readonly ownerGrants: number;
  /** Of those, the grants to a user. */
  readonly userOwnerGrants: number;
  readonly defaultForUser: string | null;
  readonly rootFolderId: string | null;
  readonly rootProblems: readonly string[];
  readonly ownerProblems: readonly string[];
}

/**
 * What `drives_consistency` reads: the usage counters walked in id order,
 * compared in the database. A state-owning port (`StatefulAdapter`): the
 * adapter returns `drives_consistency` from `consistencyChecks()`.
 */
export interface DriveUsageScan extends StatefulAdapter {
  /** Up to `limit` drives with id > `afterId` in id order; the anomalies are the drives that drift. */
  scanDriveUsage(afterId: string | null, limit: number): Promise<ScanPage<DriveUsageDrift>>;
  /** Pass 2: re-reads these drives now; returns the ones that still drift (current values). */
  reverifyDriveUsage(driveIds: readonly string[]): Promise<DriveUsageDrift[]>;
  /** Up to `limit` users with id > `afterId` in id order; the anomalies are the envelopes that drift. */
  scanUserUsage(afterId: string | null, limit: number): Promise<ScanPage<UserUsageDrift>>;
  /** Pass 2: re-reads these users now; returns the ones that still drift. */
  reverifyUserUsage(userIds: readonly string[]): Promise<UserUsageDrift[]>;
  /** Up to `limit` drives with id > `afterId` in id order; the anomalies are the drives whose shape is broken. */
  scanDriveShape(afterId: string | null, limit: number): Promise<ScanPage<DriveShapeAnomaly>>;
  /** Pass 2: re-reads these drives now; returns the ones whose shape is still broken. */
  reverifyDriveShape(driveIds: readonly string[]): Promise<DriveShapeAnomaly[]>;
  /** Rows the whole walk will examine (drives + users), from planner statistics; `null` when unknown. */
  estimateRows(): Promise<number | null>;
}
