import { DatasetError } from './errors.js';
import { FAULT_NAMES, type FaultName, isFaultName } from './faults.js';

/** An inclusive whole-number range. */
export interface IntRange {
  readonly min: number;
  readonly max: number;
}

/**
 * What to generate. Only `users` and `filesPerUser` are required; every
 * other option has a default in {@link DATASET_DEFAULTS}. Shares are
 * fractions from 0 to 1.
 */
export interface DatasetOptions {
  /** Number of users (each owns one drive, some a second one). */
  readonly users: number;
  /** Files per user, spread over the user's drives and folders. */
  readonly filesPerUser: number;
  /**
   * Number of distinct blobs: one `storage.blobs` row each AND real bytes in
   * the blob storage for every one. Files reference blobs many-to-one
   * (dedup); every blob is referenced at least once, so it must be at most
   * `users × filesPerUser`. @defaultValue ceil(users × filesPerUser / 10)
   */
  readonly blobsOnDisk?: number;
  /** Blob sizes in bytes, drawn log-uniformly. @defaultValue 1 KiB to 16 KiB */
  readonly blobSize?: IntRange;
  /** Folders per drive. @defaultValue 10 to 200 */
  readonly foldersPerDrive?: IntRange;
  /** Depth of each drive's deepest folder (root folders are depth 1). @defaultValue 3 to 6 */
  readonly folderDepth?: IntRange;
  /** Share of users who own a second drive. @defaultValue 0.1 */
  readonly secondDriveShare?: number;
  /** Share of files at a drive's root (no folder). @defaultValue 0.05 */
  readonly rootFileShare?: number;
  /** Share of each drive's folders that are trashed, as whole subtrees. @defaultValue 0.05 */
  readonly trashedFolderShare?: number;
  /** Share of files in live folders that are trashed one by one. @defaultValue 0.02 */
  readonly trashedFileShare?: number;
  /** Share of blobs (hence files) that are `audio/mpeg`. @defaultValue 0.1 */
  readonly audioShare?: number;
  /** Share of blobs (hence files) that are `image/jpeg`. @defaultValue 0.2 */
  readonly imageShare?: number;
  /** Role grants that are not expired (half without `expires_at`). @defaultValue ceil(users / 2), 0 for one user */
  readonly grants?: number;
  /** PRNG seed: the same seed and options give the same dataset (names, paths, sizes, hashes, faults). @defaultValue 1 */
  readonly seed?: number;
  /** Faults to inject. @defaultValue none */
  readonly faults?: readonly FaultName[];
  /** How many resources each fault touches (drive drift: this many drive pairs). @defaultValue 2 */
  readonly faultsPerKind?: number;
  /** Blob writes in flight at once. @defaultValue 16 */
  readonly writeConcurrency?: number;
  /** File rows per INSERT statement. @defaultValue 100000 */
  readonly filesPerStatement?: number;
}

/** {@link DatasetOptions} with every default applied and every value checked. */
export type ResolvedDatasetOptions = {
  readonly [K in keyof DatasetOptions]-?: Exclude<DatasetOptions[K], undefined>;
} & { readonly faults: readonly FaultName[] };

/** Defaults of every optional option (the ones computed from `users` are resolved in {@link resolveDatasetOptions}). */
export const DATASET_DEFAULTS = {
  blobSize: { min: 1024, max: 16 * 1024 },
  foldersPerDrive: { min: 10, max: 200 },
  folderDepth: { min: 3, max: 6 },
  secondDriveShare: 0.1,
  rootFileShare: 0.05,
  trashedFolderShare: 0.05,
  trashedFileShare: 0.02,
  audioShare: 0.1,
  imageShare: 0.2,
  seed: 1,
  faults: [] as readonly FaultName[],
  faultsPerKind: 2,
  writeConcurrency: 16,
  filesPerStatement: 100_000,
} satisfies Partial<DatasetOptions>;

/** Upper bounds, so a typo cannot ask for a petabyte. */
export const DATASET_LIMITS = {
  users: 10_000_000,
  filesPerUser: 1_000_000,
  totalFiles: 200_000_000,
  blobsOnDisk: 20_000_000,
  blobSize: 256 * 1024 * 1024,
  foldersPerDrive: 10_000,
  folderDepth: 32,
  grants: 10_000_000,
  seed: 2_147_483_647,
  faultsPerKind: 100,
  writeConcurrency: 256,
  filesPerStatement: 1_000_000,
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

function range(name: string, value: unknown, min: number, max: number): IntRange {
  if (typeof value !== 'object' || value === null) {
    invalid(
      `${name}=${JSON.stringify(value)} is not allowed: expected { min, max } with ${min} <= min <= max <= ${max}`,
    );
  }
  const r = value as Partial<IntRange>;
  const lo = int(`${name}.min`, r.min, min, max);
  const hi = int(`${name}.max`, r.max, min, max);
  if (lo > hi) invalid(`${name} is not allowed: min (${lo}) is greater than max (${hi})`);
  return { min: lo, max: hi };
}

/**
 * Applies defaults and checks every option; the generator calls it first,
 * so a bad option fails before anything is written.
 *
 * @throws DatasetError `INVALID_OPTIONS` naming the option, the value and what is allowed.
 */
export function resolveDatasetOptions(options: DatasetOptions): ResolvedDatasetOptions {
  if (typeof options !== 'object' || options === null)
    invalid('options must be an object with at least users and filesPerUser');
  const d = DATASET_DEFAULTS;
  const users = int('users', options.users, 1, DATASET_LIMITS.users);
  const filesPerUser = int('filesPerUser', options.filesPerUser, 0, DATASET_LIMITS.filesPerUser);
  const totalFiles = users * filesPerUser;
  if (totalFiles > DATASET_LIMITS.totalFiles) {
    invalid(
      `users × filesPerUser = ${totalFiles} is not allowed: at most ${DATASET_LIMITS.totalFiles} files`,
    );
  }
  const blobsMax = Math.min(totalFiles, DATASET_LIMITS.blobsOnDisk);
  const blobsMin = Math.min(1, totalFiles);
  const blobsOnDisk =
    options.blobsOnDisk === undefined ? Math.min(blobsMax, Math.ceil(totalFiles / 10)) : options.blobsOnDisk;
  if (!Number.isSafeInteger(blobsOnDisk) || blobsOnDisk < blobsMin || blobsOnDisk > blobsMax) {
    invalid(
      `blobsOnDisk=${JSON.stringify(options.blobsOnDisk)} is not allowed: expected a whole number from ${blobsMin} ` +
        `to ${blobsMax} (every blob is referenced by at least one of the users × filesPerUser = ${totalFiles} files)`,
    );
  }
  const audioShare = share('audioShare', options.audioShare ?? d.audioShare);
  const imageShare = share('imageShare', options.imageShare ?? d.imageShare);
  if (audioShare + imageShare > 1) {
    invalid(
      `audioShare + imageShare = ${audioShare + imageShare} is not allowed: the two shares must add up to at most 1`,
    );
  }
  const faults = options.faults ?? d.faults;
  if (!Array.isArray(faults)) invalid(`faults must be an array of fault names: ${FAULT_NAMES.join(', ')}`);
  const unknown = faults.filter((f) => typeof f !== 'string' || !isFaultName(f));
  if (unknown.length > 0) {
    invalid(`faults ${JSON.stringify(unknown)} are not fault names: allowed are ${FAULT_NAMES.join(', ')}`);
  }
  const grantsMax = users < 2 ? 0 : DATASET_LIMITS.grants;
  return {
    users,
    filesPerUser,
    blobsOnDisk,
    blobSize: range('blobSize', options.blobSize ?? d.blobSize, 1, DATASET_LIMITS.blobSize),
    foldersPerDrive: range(
      'foldersPerDrive',
      options.foldersPerDrive ?? d.foldersPerDrive,
      1,
      DATASET_LIMITS.foldersPerDrive,
    ),
    folderDepth: range('folderDepth', options.folderDepth ?? d.folderDepth, 1, DATASET_LIMITS.folderDepth),
    secondDriveShare: share('secondDriveShare', options.secondDriveShare ?? d.secondDriveShare),
    rootFileShare: share('rootFileShare', options.rootFileShare ?? d.rootFileShare),
    trashedFolderShare: share('trashedFolderShare', options.trashedFolderShare ?? d.trashedFolderShare),
    trashedFileShare: share('trashedFileShare', options.trashedFileShare ?? d.trashedFileShare),
    audioShare,
    imageShare,
    grants:
      options.grants === undefined
        ? Math.min(grantsMax, Math.ceil(users / 2))
        : int(
            users < 2 ? 'grants (one user cannot grant to another)' : 'grants',
            options.grants,
            0,
            grantsMax,
          ),
    seed: int('seed', options.seed ?? d.seed, 0, DATASET_LIMITS.seed),
    faults: FAULT_NAMES.filter((f) => faults.includes(f)),
    faultsPerKind: int(
      'faultsPerKind',
      options.faultsPerKind ?? d.faultsPerKind,
      1,
      DATASET_LIMITS.faultsPerKind,
    ),
    writeConcurrency: int(
      'writeConcurrency',
      options.writeConcurrency ?? d.writeConcurrency,
      1,
      DATASET_LIMITS.writeConcurrency,
    ),
    filesPerStatement: int(
      'filesPerStatement',
      options.filesPerStatement ?? d.filesPerStatement,
      1000,
      DATASET_LIMITS.filesPerStatement,
    ),
  };
}
