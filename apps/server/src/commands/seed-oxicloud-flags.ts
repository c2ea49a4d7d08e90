import {
  type DatasetFlags,
  type DatasetOptions,
  datasetOptionsFromFlags,
  type IntRange,
  OXICLOUD_DATASET_DEFAULTS,
  type OxiCloudDatasetOptions,
  parseOxiCloudFaults,
} from '@oxicloud/dataset';
import { ServerError } from '../server-error.js';
import { asBadArgument } from './seed-bad-argument.js';

/** The seed flags that mean the same on OxiCloud's domain, and the option each one sets. */
export const OXICLOUD_SEED_FLAGS = {
  users: 'users',
  'files-per-user': 'filesPerDrive (files per drive, personal and shared)',
  'folders-per-drive-min': 'foldersPerDrive.min',
  'folders-per-drive-max': 'foldersPerDrive.max',
  'folder-depth-min': 'folderDepth.min',
  'folder-depth-max': 'folderDepth.max',
  'trashed-folder-share': 'trashedFolderShare',
  'trashed-file-share': 'trashedFileShare',
  'audio-share': 'audioShare',
  'image-share': 'imageShare',
  seed: 'seed',
  faults: 'faults (OxiCloud fault names)',
  'faults-per-kind': 'faultsPerKind',
  'write-concurrency': 'writeConcurrency',
  'files-per-statement': 'rowsPerStatement',
} as const;

/** Why each other seed flag has no meaning on OxiCloud's domain. */
const NOT_ON_OXICLOUD: Readonly<Record<string, string>> = {
  'blobs-on-disk': 'the blobs follow from the files (chunks, manifests, legacy blobs, deduplication)',
  'blob-size-min': 'file sizes follow the content kind (one-chunk, multi-chunk, legacy)',
  'blob-size-max': 'file sizes follow the content kind (one-chunk, multi-chunk, legacy)',
  'second-drive-share': 'users have one personal drive; shared drives are made per 5 users',
  'root-file-share': "files are spread over each drive's folders and its root folder",
  grants: 'grants follow from the drives (owner grants) and the groups',
};

/**
 * Turns `oxijobs seed` flags into {@link OxiCloudDatasetOptions} for
 * `OXICLOUD_STORAGE_DOMAIN=oxicloud` (then validated by the generator).
 * Values are read as on the engine's domain; `--faults` takes OxiCloud's
 * fault names (`all`, `none` or a list of `OXICLOUD_FAULT_NAMES`).
 *
 * @throws ServerError `BAD_ARGUMENT` for a flag with no meaning on the
 *   domain (naming it, the domain and the allowed flags), a missing
 *   `--users`/`--files-per-user`, a bad value or an unknown fault name.
 */
export function oxiCloudSeedOptions(flags: DatasetFlags): OxiCloudDatasetOptions {
  const allowed = Object.keys(OXICLOUD_SEED_FLAGS);
  const refused = Object.keys(flags).filter((f) => flags[f] !== undefined && !allowed.includes(f));
  if (refused.length > 0) {
    const why = refused.map((f) => `--${f}: ${NOT_ON_OXICLOUD[f] ?? 'unknown seed flag'}`).join('; ');
    throw new ServerError(
      'BAD_ARGUMENT',
      `${refused.map((f) => `--${f}`).join(', ')} ${refused.length > 1 ? 'have' : 'has'} no meaning with ` +
        `OXICLOUD_STORAGE_DOMAIN=oxicloud (${why}); nothing was written. ` +
        `Allowed there: ${allowed.map((f) => `--${f}`).join(', ')}`,
    );
  }
  if (flags['users'] === undefined || flags['files-per-user'] === undefined) {
    throw new ServerError(
      'BAD_ARGUMENT',
      'seed needs --users and --files-per-user (e.g. --users 100 --files-per-user 100)',
    );
  }
  const { faults, ...rest } = flags;
  // The engine's flag parser reads every value form (counts, shares); its ranges' defaults are replaced below.
  const parsed: DatasetOptions = asBadArgument(() => datasetOptionsFromFlags(rest));
  const range = (min: string, max: string, fallback: IntRange, got: IntRange | undefined) =>
    got === undefined
      ? undefined
      : {
          min: flags[min] === undefined ? fallback.min : got.min,
          max: flags[max] === undefined ? fallback.max : got.max,
        };
  const options: { -readonly [K in keyof OxiCloudDatasetOptions]: OxiCloudDatasetOptions[K] } = {
    users: parsed.users,
    filesPerDrive: parsed.filesPerUser,
    foldersPerDrive: range(
      'folders-per-drive-min',
      'folders-per-drive-max',
      OXICLOUD_DATASET_DEFAULTS.foldersPerDrive,
      parsed.foldersPerDrive,
    ),
    folderDepth: range(
      'folder-depth-min',
      'folder-depth-max',
      OXICLOUD_DATASET_DEFAULTS.folderDepth,
      parsed.folderDepth,
    ),
    trashedFolderShare: parsed.trashedFolderShare,
    trashedFileShare: parsed.trashedFileShare,
    audioShare: parsed.audioShare,
    imageShare: parsed.imageShare,
    seed: parsed.seed,
    faults: faults === undefined ? undefined : asBadArgument(() => parseOxiCloudFaults(faults)),
    faultsPerKind: parsed.faultsPerKind,
    writeConcurrency: parsed.writeConcurrency,
    rowsPerStatement: parsed.filesPerStatement,
  };
  for (const key of Object.keys(options) as (keyof OxiCloudDatasetOptions)[]) {
    if (options[key] === undefined) delete options[key];
  }
  return options;
}
