import type { IntRange } from './int-range.js';
import { Prng } from './prng.js';

/** One planned folder of one drive; `folderNo` is its index within the drive, parents come first. */
export interface PlannedFolder {
  readonly folderNo: number;
  /** Parent's `folderNo`, `-1` for a root folder. */
  readonly parentNo: number;
  /** 1 for a root folder. */
  readonly depth: number;
  readonly name: string;
  /** Seconds before "now" when the folder (with its whole subtree) was trashed; `null` = live. */
  trashedAgoSeconds: number | null;
  /** Seconds before "now" when the folder was created (8 to 90 days). */
  readonly createdAgoSeconds: number;
}

/** The folder tree of one drive. */
export interface DriveFolderPlan {
  readonly folders: PlannedFolder[];
  /** Depth of the deepest folder. */
  readonly maxDepth: number;
}

const ROOT_NAMES = [
  'Documents',
  'Photos',
  'Music',
  'Projects',
  'Archive',
  'Work',
  'Personal',
  'Downloads',
  'Shared',
  'Backups',
  'Videos',
  'Taxes',
  'Travel',
  'School',
  'Recipes',
];
const SUB_NAMES = [
  'Invoices',
  'Reports',
  'Drafts',
  'Final',
  'Old',
  'Scans',
  'Contracts',
  'Holiday',
  'Family',
  'Screenshots',
  'Albums',
  'Live',
  'Mixes',
  'Podcasts',
  'Clients',
  'Notes',
  'Slides',
  'Assets',
  'Exports',
  'Raw',
  'Edited',
  'Q1',
  'Q2',
  'Q3',
  'Q4',
  '2019',
  '2020',
  '2021',
  '2022',
  '2023',
  '2024',
  '2025',
  'Misc',
  'Receipts',
  'Letters',
  'Design',
  'Specs',
  'Meetings',
  'Team',
  'Budget',
  'Summer',
  'Winter',
  'Kids',
  'Garden',
  'House',
  'Car',
];

const DAY = 86_400;

/**
 * Plans one drive's folder tree: a chain from a root down to the drive's
 * maximum depth (so every drive reaches a depth in `depth`), a few root
 * folders, and the rest attached to uniformly chosen parents above the
 * maximum depth. Names are unique per parent. Then whole subtrees are
 * trashed (roots at depth >= 2) until about `trashedShare` of the folders are
 * trashed; every folder of a trashed subtree shares its root's trash time
 * (1 to 7 days ago, within any retention).
 */
export function planDriveFolders(
  seed: number,
  stream: number,
  driveNo: number,
  count: IntRange,
  depth: IntRange,
  trashedShare: number,
): DriveFolderPlan {
  const prng = new Prng(seed, stream, driveNo);
  const total = prng.int(count.min, count.max);
  const maxDepth = Math.min(total, prng.int(depth.min, depth.max));
  const folders: PlannedFolder[] = [];
  const childNames = new Map<number, Set<string>>();
  const children: number[][] = [];

  const add = (parentNo: number, d: number): void => {
    const names = childNames.get(parentNo) ?? new Set<string>();
    childNames.set(parentNo, names);
    const base = prng.pick(d === 1 ? ROOT_NAMES : SUB_NAMES);
    let name = base;
    for (let n = 2; names.has(name); n++) name = `${base} ${n}`;
    names.add(name);
    const folderNo = folders.length;
    folders.push({
      folderNo,
      parentNo,
      depth: d,
      name,
      trashedAgoSeconds: null,
      // Never older than the parent.
      createdAgoSeconds:
        parentNo >= 0
          ? prng.int(8 * DAY, folders[parentNo]?.createdAgoSeconds ?? 8 * DAY)
          : 8 * DAY + prng.int(0, 82 * DAY),
    });
    children.push([]);
    if (parentNo >= 0) children[parentNo]?.push(folderNo);
  };

  // The chain that reaches maxDepth.
  for (let d = 1; d <= maxDepth; d++) add(d === 1 ? -1 : folders.length - 1, d);
  // A few more roots.
  const roots = Math.min(total - folders.length, prng.int(2, 7));
  for (let i = 0; i < roots; i++) add(-1, 1);
  // The rest under random parents that leave room below maxDepth.
  const eligible = folders.filter((f) => f.depth < maxDepth).map((f) => f.folderNo);
  while (folders.length < total) {
    const parentNo = eligible.length > 0 ? prng.pick(eligible) : -1;
    const parentDepth = parentNo >= 0 ? (folders[parentNo]?.depth ?? 0) : 0;
    add(parentNo, parentDepth + 1);
    if (parentDepth + 1 < maxDepth) eligible.push(folders.length - 1);
  }

  // Trash whole subtrees rooted at depth >= 2.
  if (trashedShare > 0 && total >= 3) {
    const target = Math.max(1, Math.round(trashedShare * total));
    const candidates = folders.filter((f) => f.depth >= 2).map((f) => f.folderNo);
    let trashed = 0;
    for (let attempt = 0; attempt < 50 && trashed < target && candidates.length > 0; attempt++) {
      const rootNo = prng.pick(candidates);
      const root = folders[rootNo];
      if (!root || root.trashedAgoSeconds !== null) continue;
      const ago = DAY + prng.int(0, 6 * DAY);
      const stack = [rootNo];
      while (stack.length > 0) {
        const no = stack.pop() as number;
        const f = folders[no];
        if (!f) continue;
        if (f.trashedAgoSeconds === null) trashed++;
        f.trashedAgoSeconds = ago;
        stack.push(...(children[no] ?? []));
      }
    }
  }
  return { folders, maxDepth };
}
