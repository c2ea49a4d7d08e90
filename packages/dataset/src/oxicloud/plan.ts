/**
 * The plan of an OxiCloud-shaped dataset: every user, group, drive, folder,
 * file and distinct content decided in Node from the seed, before a row or a
 * byte is written (ids are the database's, drawn when the rows are written).
 */
import { BLOB_KINDS, type BlobKind, drawKind, drawSize } from '../blob-content.js';
import { planDriveFolders } from '../folder-plan.js';
import { Prng } from '../prng.js';
import { type ChunkReuse, type FileBytesPlan, planChunkSizes } from './chunk-plan.js';
import { OXICLOUD_DATASET_LIMITS, type ResolvedOxiCloudDatasetOptions } from './options.js';

/** PRNG streams of this generator (above the old generator's `STREAM` numbers, so no choice shares numbers). */
export const OXI_STREAM = {
  folders: 101,
  files: 102,
  contents: 103,
  faultBytes: 104,
} as const;

const DAY = 86_400;
/** Users, drives and root folders were created this long ago (seconds). */
export const ACCOUNT_AGE_SECONDS = 120 * DAY;
/** Fresh trash is 1–7 days old; old trash 31–37 days (past OxiCloud's fixed 30-day retention). */
const FRESH_TRASH = { min: DAY, max: 7 * DAY };
const OLD_TRASH = { min: 31 * DAY, max: 37 * DAY };
/** Folders are created 38–120 days ago, so they are older than any trash in them. */
const FOLDER_AGE_SHIFT = 30 * DAY;

/** One internal or external user. `userNo` counts internal users first, then externals. */
export interface PlannedUser {
  readonly userNo: number;
  readonly username: string;
  readonly email: string;
  readonly role: 'admin' | 'user';
  readonly external: boolean;
}

/** One subject group and its member users. */
export interface PlannedGroup {
  readonly groupNo: number;
  readonly name: string;
  readonly memberUserNos: readonly number[];
}

/** One folder of a drive. Folder 0 is the drive's root folder; parents come before children. */
export interface PlannedFolder {
  readonly folderNo: number;
  /** `-1` for the root folder. */
  readonly parentNo: number;
  /** 0 for the root folder. */
  readonly depth: number;
  readonly name: string;
  /** Seconds since it was trashed (with its whole subtree); `null` = live. */
  readonly trashedAgo: number | null;
  /** Whether it is the folder the trash operation was run on (it gets `original_parent_id`). */
  readonly trashRoot: boolean;
  readonly createdAgo: number;
}

/** One owner grant on a drive. */
export interface PlannedOwner {
  readonly subjectType: 'user' | 'group';
  /** `userNo` or `groupNo`. */
  readonly subjectNo: number;
}

/** One drive: personal (a user's default drive) or shared. */
export interface PlannedDrive {
  readonly driveNo: number;
  readonly kind: 'personal' | 'shared';
  /** The user the drive belongs to (personal) or the user who created it and uploads into it (shared). */
  readonly userNo: number;
  /** The owner grants (personal: exactly one, the user). */
  readonly owners: readonly PlannedOwner[];
  /** Who granted (personal: the owner; shared: the first admin, else the owner). */
  readonly grantedByUserNo: number;
  readonly folders: readonly PlannedFolder[];
}

/** What the bytes of a content are, as OxiCloud's upload path would store them. */
export type ContentKind = 'multi_chunk' | 'one_chunk' | 'empty' | 'legacy';

/** One distinct file content (what dedup shares). */
export interface PlannedContent {
  readonly contentNo: number;
  readonly kind: ContentKind;
  readonly media: BlobKind;
  readonly size: number;
  /** The chunk plan (a legacy blob is one "chunk": its whole bytes); `null` for the empty file. */
  readonly bytes: FileBytesPlan | null;
  /** Seconds since its first upload (its oldest file). */
  createdAgo: number;
}

/** One `storage.files` row. */
export interface PlannedFile {
  readonly fileNo: number;
  readonly driveNo: number;
  readonly folderNo: number;
  readonly name: string;
  readonly contentNo: number;
  readonly trashedAgo: number | null;
  /** Trashed on its own (so `original_folder_id` = its folder), not with its folder. */
  readonly trashedDirectly: boolean;
  readonly createdAgo: number;
}

/** A grant that is not a drive owner grant: externals' viewer grants. */
export interface PlannedGrant {
  readonly userNo: number;
  readonly resourceType: 'drive' | 'folder';
  readonly driveNo: number;
  /** For a folder grant. */
  readonly folderNo: number;
  readonly role: 'viewer' | 'editor';
  readonly grantedByUserNo: number;
}

/** Everything decided before a row is written. */
export interface OxiCloudDatasetPlan {
  readonly users: readonly PlannedUser[];
  readonly groups: readonly PlannedGroup[];
  readonly drives: readonly PlannedDrive[];
  readonly contents: readonly PlannedContent[];
  readonly files: readonly PlannedFile[];
  readonly grants: readonly PlannedGrant[];
  /** Depth of the deepest folder (root folders are 0). */
  readonly maxDepth: number;
}

const WORDS = [
  'report',
  'photo',
  'track',
  'invoice',
  'notes',
  'scan',
  'draft',
  'summary',
  'slides',
  'budget',
];
const SHARED_NAMES = ['Team', 'Projects', 'Finance', 'Marketing', 'Legal', 'Design', 'Support', 'Ops'];

/** The content types of the generated files, by media kind (`text/plain` for the empty file). */
export function mimeOf(content: Pick<PlannedContent, 'kind' | 'media'>): string {
  return content.kind === 'empty' ? 'text/plain' : BLOB_KINDS[content.media].contentType;
}

/** Usernames of a dataset start with this: `o<seed>-` (internal `…u000001`, external `…x000001`). */
export function oxiUsernamePrefix(seed: number): string {
  return `o${seed}-`;
}

function planUsers(o: ResolvedOxiCloudDatasetOptions): PlannedUser[] {
  const prefix = oxiUsernamePrefix(o.seed);
  const users: PlannedUser[] = [];
  for (let i = 0; i < o.users + o.externalUsers; i++) {
    const external = i >= o.users;
    const username = `${prefix}${external ? 'x' : 'u'}${String((external ? i - o.users : i) + 1).padStart(6, '0')}`;
    users.push({
      userNo: i,
      username,
      email: `${username}@dataset.oxicloud.test`,
      role: !external && i < o.admins ? 'admin' : 'user',
      external,
    });
  }
  return users;
}

function planGroups(o: ResolvedOxiCloudDatasetOptions): PlannedGroup[] {
  return Array.from({ length: o.groups }, (_, g) => ({
    groupNo: g,
    name: `${oxiUsernamePrefix(o.seed)}group-${g + 1}`,
    memberUserNos: Array.from({ length: o.membersPerGroup }, (_, m) => (g * o.membersPerGroup + m) % o.users),
  })).map((g) => ({ ...g, memberUserNos: [...new Set(g.memberUserNos)] }));
}

/** A drive's folders: its root folder, then the planned tree one level below it, with old trash. */
function planFolders(o: ResolvedOxiCloudDatasetOptions, driveNo: number, rootName: string): PlannedFolder[] {
  const tree = planDriveFolders(
    o.seed,
    OXI_STREAM.folders,
    driveNo,
    o.foldersPerDrive,
    o.folderDepth,
    o.trashedFolderShare,
  );
  const prng = new Prng(o.seed, OXI_STREAM.folders, driveNo, 1);
  const folders: PlannedFolder[] = [
    {
      folderNo: 0,
      parentNo: -1,
      depth: 0,
      name: rootName,
      trashedAgo: null,
      trashRoot: false,
      createdAgo: ACCOUNT_AGE_SECONDS,
    },
  ];
  // Whole trashed subtrees share their trash root's time; a root is old with oldTrashShare.
  const ageOfRoot = new Map<number, number>();
  for (const f of tree.folders) {
    const parent = f.parentNo >= 0 ? tree.folders[f.parentNo] : undefined;
    const isRoot =
      f.trashedAgoSeconds !== null && (parent === undefined || parent.trashedAgoSeconds === null);
    let trashedAgo: number | null = null;
    if (f.trashedAgoSeconds !== null) {
      if (isRoot) {
        const range = prng.chance(o.oldTrashShare) ? OLD_TRASH : FRESH_TRASH;
        ageOfRoot.set(f.folderNo, prng.int(range.min, range.max));
      }
      let at = f;
      while (!ageOfRoot.has(at.folderNo)) at = tree.folders[at.parentNo] as typeof f;
      trashedAgo = ageOfRoot.get(at.folderNo) as number;
    }
    folders.push({
      folderNo: f.folderNo + 1,
      parentNo: f.parentNo + 1,
      depth: f.depth,
      name: f.name,
      trashedAgo,
      trashRoot: isRoot,
      createdAgo: Math.min(ACCOUNT_AGE_SECONDS, f.createdAgoSeconds + FOLDER_AGE_SHIFT),
    });
  }
  return folders;
}

function planDrives(o: ResolvedOxiCloudDatasetOptions): PlannedDrive[] {
  const drives: PlannedDrive[] = [];
  for (let u = 0; u < o.users; u++) {
    drives.push({
      driveNo: drives.length,
      kind: 'personal',
      userNo: u,
      owners: [{ subjectType: 'user', subjectNo: u }],
      grantedByUserNo: u,
      folders: planFolders(o, drives.length, 'Personal'),
    });
  }
  for (let s = 0; s < o.sharedDrives; s++) {
    const userNo = s % o.users;
    const groupNo = o.groups > 0 ? s % o.groups : -1;
    // Owners: user and group, user only, group only (in turn; user only without groups).
    const owners: PlannedOwner[] = [];
    if (groupNo < 0 || s % 3 !== 2) owners.push({ subjectType: 'user', subjectNo: userNo });
    if (groupNo >= 0 && s % 3 !== 1) owners.push({ subjectType: 'group', subjectNo: groupNo });
    const base = SHARED_NAMES[s % SHARED_NAMES.length] as string;
    const name = s < SHARED_NAMES.length ? base : `${base} ${Math.floor(s / SHARED_NAMES.length) + 1}`;
    drives.push({
      driveNo: drives.length,
      kind: 'shared',
      userNo,
      owners,
      grantedByUserNo: o.admins > 0 ? 0 : userNo,
      folders: planFolders(o, drives.length, name),
    });
  }
  return drives;
}

/** Draws one new content of a kind the shares pick (dedup is decided by the caller). */
class ContentPlanner {
  readonly contents: PlannedContent[] = [];
  readonly #prng: Prng;
  #empty: PlannedContent | undefined;
  readonly #multi: PlannedContent[] = [];
  readonly #reusable: PlannedContent[] = [];

  constructor(private readonly o: ResolvedOxiCloudDatasetOptions) {
    this.#prng = new Prng(o.seed, OXI_STREAM.contents);
  }

  /** The content of a new file: an earlier one (dedup) or a new one. */
  next(): PlannedContent {
    const p = this.#prng;
    const o = this.o;
    const r = p.next();
    if (r < o.emptyFileShare) return this.#emptyContent();
    if (this.#reusable.length > 0 && p.chance(o.dedupShare)) return p.pick(this.#reusable);
    const media = drawKind(p, o.audioShare, o.imageShare);
    const contentNo = this.contents.length;
    let content: PlannedContent;
    if (r < o.emptyFileShare + o.legacyFileShare) {
      const size = drawSize(p, o.legacySize.min, o.legacySize.max);
      content = this.#content(contentNo, 'legacy', media, [size]);
    } else if (r < o.emptyFileShare + o.legacyFileShare + o.multiChunkFileShare) {
      content = this.#multiChunk(contentNo, media);
      this.#multi.push(content);
    } else {
      const size = drawSize(p, o.oneChunkSize.min, o.oneChunkSize.max);
      content = this.#content(contentNo, 'one_chunk', media, [size]);
    }
    this.contents.push(content);
    this.#reusable.push(content);
    return content;
  }

  #content(
    contentNo: number,
    kind: ContentKind,
    media: BlobKind,
    chunkSizes: number[],
    reuse?: (ChunkReuse | null)[],
  ): PlannedContent {
    const size = chunkSizes.reduce((a, b) => a + b, 0);
    const bytes: FileBytesPlan = {
      seed: this.o.seed,
      fileIndex: contentNo,
      size,
      chunkSizes,
      kind: media,
      ...(reuse === undefined ? {} : { reuse }),
    };
    return { contentNo, kind, media, size, bytes, createdAgo: 0 };
  }

  #emptyContent(): PlannedContent {
    if (this.#empty === undefined) {
      this.#empty = {
        contentNo: this.contents.length,
        kind: 'empty',
        media: 'other',
        size: 0,
        bytes: null,
        createdAgo: 0,
      };
      this.contents.push(this.#empty);
    }
    return this.#empty;
  }

  /**
   * A multi-chunk content: fresh FastCDC-shaped chunks; or (sharedChunkShare)
   * the first chunks of an earlier multi-chunk content, then fresh ones (an
   * edited copy: two files sharing chunks); sometimes its first chunk twice
   * (a chunk repeated inside one file).
   */
  #multiChunk(contentNo: number, media: BlobKind): PlannedContent {
    const p = this.#prng;
    const o = this.o;
    const base = this.#multi.length > 0 && p.chance(o.sharedChunkShare) ? p.pick(this.#multi) : undefined;
    const baseSizes = base?.bytes?.chunkSizes;
    if (base?.bytes && baseSizes && baseSizes.length >= 2) {
      const k = p.int(1, baseSizes.length - 1);
      // A tail of at least 64 bytes: a shorter one carries too few bytes of its own to keep two edited
      // copies of the same content apart (found at 100k files: identical planned contents).
      const tail = planChunkSizes(
        drawSize(p, OXICLOUD_DATASET_LIMITS.oneChunkSizeMin, o.multiChunkSize.min),
        o.seed,
        contentNo,
      );
      const reuse: (ChunkReuse | null)[] = [];
      for (let i = 0; i < k; i++) reuse.push({ from: base.bytes, index: i });
      return this.#content(contentNo, 'multi_chunk', base.media, [...baseSizes.slice(0, k), ...tail], reuse);
    }
    const size = drawSize(p, o.multiChunkSize.min, o.multiChunkSize.max);
    const sizes = planChunkSizes(size, o.seed, contentNo);
    if (sizes.length >= 3 && p.chance(0.25)) {
      // Chunk 1 repeats chunk 0 (the same bytes twice in one file).
      const first = sizes[0] as number;
      const repeated = [first, first, ...sizes.slice(2)];
      const reuse: (ChunkReuse | null)[] = [null];
      const content = this.#content(contentNo, 'multi_chunk', media, repeated, reuse);
      reuse.push({ from: content.bytes as FileBytesPlan, index: 0 });
      return content;
    }
    return this.#content(contentNo, 'multi_chunk', media, sizes);
  }
}

function extOf(content: PlannedContent): string {
  return content.kind === 'empty' ? 'txt' : BLOB_KINDS[content.media].ext;
}

function planFiles(
  o: ResolvedOxiCloudDatasetOptions,
  drives: readonly PlannedDrive[],
  planner: ContentPlanner,
): PlannedFile[] {
  const files: PlannedFile[] = [];
  for (const drive of drives) {
    const p = new Prng(o.seed, OXI_STREAM.files, drive.driveNo);
    for (let i = 0; i < o.filesPerDrive; i++) {
      const folder = p.pick(drive.folders);
      const content = planner.next();
      let trashedAgo = folder.trashedAgo;
      let trashedDirectly = false;
      if (trashedAgo === null && p.chance(o.trashedFileShare)) {
        const range = p.chance(o.oldTrashShare) ? OLD_TRASH : FRESH_TRASH;
        trashedAgo = p.int(range.min, range.max);
        trashedDirectly = true;
      }
      const youngest = (trashedAgo ?? 0) + 3600;
      const createdAgo = p.int(youngest, Math.max(youngest, folder.createdAgo));
      content.createdAgo = Math.max(content.createdAgo, createdAgo);
      const fileNo = files.length;
      const word = p.pick(WORDS);
      files.push({
        fileNo,
        driveNo: drive.driveNo,
        folderNo: folder.folderNo,
        name: `${content.kind === 'empty' ? 'empty' : word}-${String(fileNo + 1).padStart(7, '0')}.${extOf(content)}`,
        contentNo: content.contentNo,
        trashedAgo,
        trashedDirectly,
        createdAgo,
      });
    }
  }
  return files;
}

function planGrants(o: ResolvedOxiCloudDatasetOptions, drives: readonly PlannedDrive[]): PlannedGrant[] {
  const shared = drives.filter((d) => d.kind === 'shared');
  const grants: PlannedGrant[] = [];
  for (let x = 0; x < o.externalUsers; x++) {
    const userNo = o.users + x;
    const target = shared.length > 0 ? shared[x % shared.length] : drives[x % drives.length];
    if (target === undefined) continue;
    // Personal drives cannot gain members: an external gets a grant on a live top-level folder there.
    const live = target.folders.find((f) => f.depth === 1 && f.trashedAgo === null);
    if (target.kind === 'personal' && live === undefined) continue;
    grants.push({
      userNo,
      resourceType: target.kind === 'shared' ? 'drive' : 'folder',
      driveNo: target.driveNo,
      folderNo: live?.folderNo ?? 0,
      role: x % 2 === 0 ? 'viewer' : 'editor',
      grantedByUserNo: target.userNo,
    });
  }
  return grants;
}

/**
 * Plans the whole dataset from the resolved options. Pure and deterministic:
 * the same options give the same plan.
 */
export function planOxiCloudDataset(o: ResolvedOxiCloudDatasetOptions): OxiCloudDatasetPlan {
  const users = planUsers(o);
  const groups = planGroups(o);
  const drives = planDrives(o);
  const planner = new ContentPlanner(o);
  const files = planFiles(o, drives, planner);
  const grants = planGrants(o, drives);
  const maxDepth = Math.max(0, ...drives.flatMap((d) => d.folders.map((f) => f.depth)));
  return { users, groups, drives, contents: planner.contents, files, grants, maxDepth };
}
