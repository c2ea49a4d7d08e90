import { type BlobKind, drawKind, drawSize, STREAM } from './blob-content.js';
import { type DriveFolderPlan, planDriveFolders } from './folder-plan.js';
import type { ResolvedDatasetOptions } from './options.js';
import { Prng } from './prng.js';

/** One planned drive. `driveNo` counts drives in (user, index) order. */
export interface PlannedDrive {
  readonly driveNo: number;
  readonly userNo: number;
  /** 0 = the user's main drive, 1 = the second drive. */
  readonly driveIdx: number;
  readonly name: string;
  readonly folders: DriveFolderPlan;
}

/** One planned blob (bytes are generated from its number when written). */
export interface PlannedBlob {
  readonly size: number;
  readonly kind: BlobKind;
}

/** Everything decided in Node before a row is written. */
export interface DatasetPlan {
  readonly drives: PlannedDrive[];
  readonly blobs: PlannedBlob[];
  readonly folderCount: number;
  readonly maxDepth: number;
}

/** Second-drive share in parts per million: integer arithmetic, so SQL and JS agree exactly. */
export function secondDrivePpm(share: number): number {
  return Math.round(share * 1_000_000);
}

/**
 * Whether user `userNo` owns a second drive: spread evenly, exactly
 * `floor(users × share)` users. The SQL twin is in generate-dataset.ts.
 */
export function hasSecondDrive(userNo: number, ppm: number): boolean {
  return Math.floor(((userNo + 1) * ppm) / 1_000_000) > Math.floor((userNo * ppm) / 1_000_000);
}

export const DRIVE_NAMES = ['My Drive', 'Team Drive'] as const;

/** Plans drives, folder trees and blobs from the seed. */
export function planDataset(options: ResolvedDatasetOptions): DatasetPlan {
  const ppm = secondDrivePpm(options.secondDriveShare);
  const drives: PlannedDrive[] = [];
  let folderCount = 0;
  let maxDepth = 0;
  for (let userNo = 0; userNo < options.users; userNo++) {
    const count = hasSecondDrive(userNo, ppm) ? 2 : 1;
    for (let driveIdx = 0; driveIdx < count; driveIdx++) {
      const driveNo = drives.length;
      const folders = planDriveFolders(
        options.seed,
        STREAM.folders,
        driveNo,
        options.foldersPerDrive,
        options.folderDepth,
        options.trashedFolderShare,
      );
      folderCount += folders.folders.length;
      maxDepth = Math.max(maxDepth, folders.maxDepth);
      drives.push({
        driveNo,
        userNo,
        driveIdx,
        name: DRIVE_NAMES[driveIdx] ?? `Drive ${driveIdx + 1}`,
        folders,
      });
    }
  }
  const prng = new Prng(options.seed, STREAM.blobMeta);
  const blobs: PlannedBlob[] = [];
  for (let i = 0; i < options.blobsOnDisk; i++) {
    const kind = drawKind(prng, options.audioShare, options.imageShare);
    blobs.push({ kind, size: drawSize(prng, options.blobSize.min, options.blobSize.max) });
  }
  return { drives, blobs, folderCount, maxDepth };
}
