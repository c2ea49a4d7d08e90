import { CDC_CHUNK_SIZES } from '@oxicloud/storage';
import { DatasetError } from '../errors.js';
import type { IntRange } from '../int-range.js';
import { isOxiCloudFaultName, OXICLOUD_FAULT_NAMES, type OxiCloudFaultName } from './faults.js';

/**
 * What {@link generateOxiCloudDataset} generates, in OxiCloud's own data
 * model (OXICLOUD.md §2–§7). Only `users` and `filesPerDrive` are required;
 * every other option has its default in {@link OXICLOUD_DATASET_DEFAULTS}.
 * Shares are fractions from 0 to 1, of files unless said otherwise.
 */
export interface OxiCloudDatasetOptions {
  /** Internal users; each gets a default personal drive (the four-write creation). */
  readonly users: number;
  /** Files per drive (personal and shared), spread over its folders and its root folder. */
  readonly filesPerDrive: number;
  /** How many of the internal users are admins (the first ones). @defaultValue 1 */
  readonly admins?: number;
  /** External users: grant-only recipients with no drive and no storage. @defaultValue ceil(users / 5) */
  readonly externalUsers?: number;
  /** Shared drives, each with a user owner grant (every other one also a group owner grant). @defaultValue ceil(users / 5) */
  readonly sharedDrives?: number;
  /** `quota_bytes` of the shared drives (`null` = unlimited). @defaultValue 107374182400 (100 GiB) */
  readonly sharedDriveQuotaBytes?: number | null;
  /** Subject groups (`auth.subject_groups`), each with members; they own shared drives. @defaultValue 1 when there are shared drives, else 0 */
  readonly groups?: number;
  /** Internal users added to each group. @defaultValue min(users, 3) */
  readonly membersPerGroup?: number;
  /** Folders per drive, below its root folder. @defaultValue 4 to 12 */
  readonly foldersPerDrive?: IntRange;
  /** Depth of each drive's deepest folder (its root folder's children are depth 1). @defaultValue 2 to 4 */
  readonly folderDepth?: IntRange;
  /** Share of files that are empty (they all share the empty manifest). @defaultValue 0.03 */
  readonly emptyFileShare?: number;
  /** Share of files that are legacy whole-file blobs (no manifest). @defaultValue 0.1 */
  readonly legacyFileShare?: number;
  /** Share of files that are multi-chunk (the rest are one-chunk). @defaultValue 0.08 */
  readonly multiChunkFileShare?: number;
  /** Share of files whose content another file already has (same manifest or same legacy blob). @defaultValue 0.15 */
  readonly dedupShare?: number;
  /** Share of the new multi-chunk contents that start with another multi-chunk content's chunks. @defaultValue 0.3 */
  readonly sharedChunkShare?: number;
  /** Share of files that are images (`image/jpeg`, with thumbnails). @defaultValue 0.2 */
  readonly imageShare?: number;
  /** Share of files that are audio (`audio/mpeg`). @defaultValue 0.1 */
  readonly audioShare?: number;
  /** Sizes of one-chunk files, in bytes (log-uniform; under 64 KiB). @defaultValue 64 to 65 535 */
  readonly oneChunkSize?: IntRange;
  /** Sizes of multi-chunk files, in bytes (over 1 MiB, so always two chunks or more). @defaultValue 1 048 577 to 3 MiB */
  readonly multiChunkSize?: IntRange;
  /** Sizes of legacy whole-file blobs, in bytes. @defaultValue 1 KiB to 256 KiB */
  readonly legacySize?: IntRange;
  /** Share of each drive's folders that are trashed, as whole subtrees. @defaultValue 0.1 */
  readonly trashedFolderShare?: number;
  /** Share of files in live folders that are trashed one by one. @defaultValue 0.05 */
  readonly trashedFileShare?: number;
  /** Share of the trash (subtrees and single files) trashed more than 30 days ago. @defaultValue 0.3 */
  readonly oldTrashShare?: number;
  /** PRNG seed: the same seed and options give the same names, paths, sizes, hashes and fault targets. @defaultValue 1 */
  readonly seed?: number;
  /** Faults to inject. @defaultValue none */
  readonly faults?: readonly OxiCloudFaultName[];
  /** How many resources each fault touches. @defaultValue 1 */
  readonly faultsPerKind?: number;
  /** Blob writes in flight at once. @defaultValue 8 */
  readonly writeConcurrency?: number;
  /** Rows per INSERT statement. @defaultValue 5000 */
  readonly rowsPerStatement?: number;
}

/** {@link OxiCloudDatasetOptions} with every default applied and every value checked. */
export type ResolvedOxiCloudDatasetOptions = {
  readonly [K in keyof OxiCloudDatasetOptions]-?: Exclude<OxiCloudDatasetOptions[K], undefined>;
} & { readonly sharedDriveQuotaBytes: number | null; readonly faults: readonly OxiCloudFaultName[] };

const MiB = 1024 * 1024;

/** Defaults of every optional option (those computed from `users` are resolved in {@link resolveOxiCloudDatasetOptions}). */
export const OXICLOUD_DATASET_DEFAULTS = {
  admins: 1,
  sharedDriveQuotaBytes: 100 * 1024 * MiB,
  foldersPerDrive: { min: 4, max: 12 },
  folderDepth: { min: 2, max: 4 },
  emptyFileShare: 0.03,
  legacyFileShare: 0.1,
  multiChunkFileShare: 0.08,
  dedupShare: 0.15,
  sharedChunkShare: 0.3,
  imageShare: 0.2,
  audioShare: 0.1,
  oneChunkSize: { min: 64, max: CDC_CHUNK_SIZES.min - 1 },
  multiChunkSize: { min: CDC_CHUNK_SIZES.max + 1, max: 3 * MiB },
  legacySize: { min: 1024, max: 256 * 1024 },
  trashedFolderShare: 0.1,
  trashedFileShare: 0.05,
  oldTrashShare: 0.3,
  seed: 1,
  faults: [] as readonly OxiCloudFaultName[],
  faultsPerKind: 1,
  writeConcurrency: 8,
  rowsPerStatement: 5000,
} satisfies Partial<OxiCloudDatasetOptions>;

/** Upper bounds, so a typo cannot ask for a petabyte. */
export const OXICLOUD_DATASET_LIMITS = {
  users: 1_000_000,
  externalUsers: 1_000_000,
  sharedDrives: 100_000,
  groups: 10_000,
  filesPerDrive: 1_000_000,
  totalFiles: 50_000_000,
  foldersPerDrive: 10_000,
  folderDepth: 32,
  /** One-chunk files: at least 64 bytes, so the leading bytes that name a content keep every content distinct. */
  oneChunkSizeMin: 64,
  multiChunkSize: 1024 * MiB,
  legacySize: 1024 * MiB,
  seed: 2_147_483_647,
  faultsPerKind: 100,
  writeConcurrency: 256,
  rowsPerStatement: 100_000,
} as const;

function invalid(message: string): never {
  throw new DatasetError('INVALID_OPTIONS', message);
}

function int(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    invalid(`${name}=${JSON.stringify(value)} is not allowed: expected a whole number from ${min} to ${max}`);
  }
  return value;
}

function share(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) {
    invalid(`${name}=${JSON.stringify(value)} is not allowed: expected a fraction from 0 to 1`);
  }
  return value;
}

function range(name: string, value: unknown, min: number, max: number, why = ''): IntRange {
  if (typeof value !== 'object' || value === null) {
    invalid(
      `${name}=${JSON.stringify(value)} is not allowed: expected { min, max } with ${min} <= min <= max <= ${max}${why}`,
    );
  }
  const r = value as Partial<IntRange>;
  const lo = int(`${name}.min`, r.min, min, max);
  const hi = int(`${name}.max`, r.max, min, max);
  if (lo > hi) invalid(`${name} is not allowed: min (${lo}) is greater than max (${hi})`);
  return { min: lo, max: hi };
}

function sumAtMostOne(names: string, values: readonly number[]): void {
  const sum = values.reduce((a, b) => a + b, 0);
  if (sum > 1 + 1e-12) invalid(`${names} = ${sum} is not allowed: the shares must add up to at most 1`);
}

/**
 * Applies the defaults and checks every option; the generator calls it
 * first, so a bad option fails before anything is written.
 *
 * @throws DatasetError `INVALID_OPTIONS` naming the option, the value and what is allowed.
 * @example
 * ```ts
 * resolveOxiCloudDatasetOptions({ users: 10, filesPerDrive: 20 }).sharedDrives; // 2
 * ```
 */
export function resolveOxiCloudDatasetOptions(
  options: OxiCloudDatasetOptions,
): ResolvedOxiCloudDatasetOptions {
  if (typeof options !== 'object' || options === null) {
    invalid('options must be an object with at least users and filesPerDrive');
  }
  const d = OXICLOUD_DATASET_DEFAULTS;
  const L = OXICLOUD_DATASET_LIMITS;
  const users = int('users', options.users, 1, L.users);
  const admins = int('admins', options.admins ?? d.admins, 0, users);
  const externalUsers = int(
    'externalUsers',
    options.externalUsers ?? Math.ceil(users / 5),
    0,
    L.externalUsers,
  );
  const sharedDrives = int('sharedDrives', options.sharedDrives ?? Math.ceil(users / 5), 0, L.sharedDrives);
  const filesPerDrive = int('filesPerDrive', options.filesPerDrive, 0, L.filesPerDrive);
  const totalFiles = (users + sharedDrives) * filesPerDrive;
  if (totalFiles > L.totalFiles) {
    invalid(
      `(users + sharedDrives) × filesPerDrive = ${totalFiles} is not allowed: at most ${L.totalFiles} files`,
    );
  }
  const quota =
    options.sharedDriveQuotaBytes === undefined ? d.sharedDriveQuotaBytes : options.sharedDriveQuotaBytes;
  const sharedDriveQuotaBytes =
    quota === null
      ? null
      : int('sharedDriveQuotaBytes (null = unlimited)', quota, 0, Number.MAX_SAFE_INTEGER);
  const groups = int('groups', options.groups ?? (sharedDrives > 0 ? 1 : 0), 0, L.groups);
  const membersPerGroup = int('membersPerGroup', options.membersPerGroup ?? Math.min(users, 3), 0, users);
  const emptyFileShare = share('emptyFileShare', options.emptyFileShare ?? d.emptyFileShare);
  const legacyFileShare = share('legacyFileShare', options.legacyFileShare ?? d.legacyFileShare);
  const multiChunkFileShare = share(
    'multiChunkFileShare',
    options.multiChunkFileShare ?? d.multiChunkFileShare,
  );
  sumAtMostOne('emptyFileShare + legacyFileShare + multiChunkFileShare', [
    emptyFileShare,
    legacyFileShare,
    multiChunkFileShare,
  ]);
  const imageShare = share('imageShare', options.imageShare ?? d.imageShare);
  const audioShare = share('audioShare', options.audioShare ?? d.audioShare);
  sumAtMostOne('imageShare + audioShare', [imageShare, audioShare]);
  const faults = options.faults ?? d.faults;
  if (!Array.isArray(faults)) {
    invalid(`faults must be an array of fault names: ${OXICLOUD_FAULT_NAMES.join(', ')}`);
  }
  const unknown = faults.filter((f) => typeof f !== 'string' || !isOxiCloudFaultName(f));
  if (unknown.length > 0) {
    invalid(
      `faults ${JSON.stringify(unknown)} are not OxiCloud fault names: allowed are ${OXICLOUD_FAULT_NAMES.join(', ')}`,
    );
  }
  return {
    users,
    filesPerDrive,
    admins,
    externalUsers,
    sharedDrives,
    sharedDriveQuotaBytes,
    groups,
    membersPerGroup,
    foldersPerDrive: range(
      'foldersPerDrive',
      options.foldersPerDrive ?? d.foldersPerDrive,
      1,
      L.foldersPerDrive,
    ),
    folderDepth: range('folderDepth', options.folderDepth ?? d.folderDepth, 1, L.folderDepth),
    emptyFileShare,
    legacyFileShare,
    multiChunkFileShare,
    dedupShare: share('dedupShare', options.dedupShare ?? d.dedupShare),
    sharedChunkShare: share('sharedChunkShare', options.sharedChunkShare ?? d.sharedChunkShare),
    imageShare,
    audioShare,
    oneChunkSize: range(
      'oneChunkSize',
      options.oneChunkSize ?? d.oneChunkSize,
      L.oneChunkSizeMin,
      CDC_CHUNK_SIZES.min - 1,
      ' (a one-chunk file is under 64 KiB)',
    ),
    multiChunkSize: range(
      'multiChunkSize',
      options.multiChunkSize ?? d.multiChunkSize,
      CDC_CHUNK_SIZES.max + 1,
      L.multiChunkSize,
      ' (over 1 MiB, so FastCDC always cuts it into two chunks or more)',
    ),
    legacySize: range('legacySize', options.legacySize ?? d.legacySize, L.oneChunkSizeMin, L.legacySize),
    trashedFolderShare: share('trashedFolderShare', options.trashedFolderShare ?? d.trashedFolderShare),
    trashedFileShare: share('trashedFileShare', options.trashedFileShare ?? d.trashedFileShare),
    oldTrashShare: share('oldTrashShare', options.oldTrashShare ?? d.oldTrashShare),
    seed: int('seed', options.seed ?? d.seed, 0, L.seed),
    faults: OXICLOUD_FAULT_NAMES.filter((f) => faults.includes(f)),
    faultsPerKind: int('faultsPerKind', options.faultsPerKind ?? d.faultsPerKind, 1, L.faultsPerKind),
    writeConcurrency: int(
      'writeConcurrency',
      options.writeConcurrency ?? d.writeConcurrency,
      1,
      L.writeConcurrency,
    ),
    rowsPerStatement: int(
      'rowsPerStatement',
      options.rowsPerStatement ?? d.rowsPerStatement,
      100,
      L.rowsPerStatement,
    ),
  };
}
