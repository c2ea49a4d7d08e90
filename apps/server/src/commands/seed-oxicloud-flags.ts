import {
  OXICLOUD_DATASET_DEFAULTS,
  type OxiCloudDatasetOptions,
  parseOxiCloudFaults,
} from '@oxicloud/dataset';
import { ServerError } from '../server-error.js';
import { asBadArgument } from './seed-bad-argument.js';

/** Raw `oxijobs seed` flag values by flag name without the dashes (`files-per-user`); unset flags are absent or `undefined`. */
export type SeedFlags = Readonly<Record<string, string | undefined>>;

type FlagKind = 'count' | 'share' | 'faults';

const D = OXICLOUD_DATASET_DEFAULTS;

/**
 * Every `oxijobs seed` flag (OxiCloud's model, the only one the command
 * seeds): its name, value kind, the option of `OxiCloudDatasetOptions` it
 * sets and its `--help` line.
 */
export const OXICLOUD_SEED_FLAGS = [
  {
    flag: 'users',
    kind: 'count',
    option: 'users',
    help: 'internal users, each with a personal drive; the first is an admin, and there is a shared drive per 5 users (required)',
  },
  {
    flag: 'files-per-user',
    kind: 'count',
    option: 'filesPerDrive',
    help: 'files per drive, personal and shared (required)',
  },
  {
    flag: 'folders-per-drive-min',
    kind: 'count',
    option: 'foldersPerDrive.min',
    help: `fewest folders per drive (default ${D.foldersPerDrive.min})`,
  },
  {
    flag: 'folders-per-drive-max',
    kind: 'count',
    option: 'foldersPerDrive.max',
    help: `most folders per drive (default ${D.foldersPerDrive.max})`,
  },
  {
    flag: 'folder-depth-min',
    kind: 'count',
    option: 'folderDepth.min',
    help: `shallowest deepest-folder depth per drive (default ${D.folderDepth.min})`,
  },
  {
    flag: 'folder-depth-max',
    kind: 'count',
    option: 'folderDepth.max',
    help: `deepest folder depth per drive (default ${D.folderDepth.max})`,
  },
  {
    flag: 'trashed-folder-share',
    kind: 'share',
    option: 'trashedFolderShare',
    help: `share of folders trashed as whole subtrees, 0 to 1 (default ${D.trashedFolderShare})`,
  },
  {
    flag: 'trashed-file-share',
    kind: 'share',
    option: 'trashedFileShare',
    help: `share of files in live folders trashed (default ${D.trashedFileShare})`,
  },
  {
    flag: 'audio-share',
    kind: 'share',
    option: 'audioShare',
    help: `share of audio/mpeg files (default ${D.audioShare})`,
  },
  {
    flag: 'image-share',
    kind: 'share',
    option: 'imageShare',
    help: `share of image/jpeg files, with thumbnails (default ${D.imageShare})`,
  },
  {
    flag: 'multi-chunk-share',
    kind: 'share',
    option: 'multiChunkFileShare',
    help: `share of files over 1 MiB, in two chunks or more (default ${D.multiChunkFileShare})`,
  },
  {
    flag: 'seed',
    kind: 'count',
    option: 'seed',
    help: `PRNG seed: the same seed and flags give the same data (default ${D.seed})`,
  },
  {
    flag: 'faults',
    kind: 'faults',
    option: 'faults',
    help: '"all", "none" or a comma-separated list of OxiCloud fault names (default none)',
  },
  {
    flag: 'faults-per-kind',
    kind: 'count',
    option: 'faultsPerKind',
    help: `resources each fault touches (default ${D.faultsPerKind})`,
  },
  {
    flag: 'write-concurrency',
    kind: 'count',
    option: 'writeConcurrency',
    help: `blob writes in flight (default ${D.writeConcurrency})`,
  },
  {
    flag: 'files-per-statement',
    kind: 'count',
    option: 'rowsPerStatement',
    help: `rows per INSERT (default ${D.rowsPerStatement})`,
  },
] as const satisfies readonly { flag: string; kind: FlagKind; option: string; help: string }[];

type FlagName = (typeof OXICLOUD_SEED_FLAGS)[number]['flag'];

function badArgument(message: string): never {
  throw new ServerError('BAD_ARGUMENT', message);
}

function parseCount(flag: string, text: string): number {
  const t = text.trim();
  if (!/^\d+$/.test(t) || !Number.isSafeInteger(Number(t))) {
    badArgument(`--${flag}=${JSON.stringify(text)} is not allowed: expected a whole number`);
  }
  return Number(t);
}

function parseShare(flag: string, text: string): number {
  const t = text.trim();
  const v = /^\d*\.?\d+$/.test(t) ? Number(t) : Number.NaN;
  if (!(v >= 0 && v <= 1)) {
    badArgument(`--${flag}=${JSON.stringify(text)} is not allowed: expected a fraction from 0 to 1`);
  }
  return v;
}

/**
 * Turns `oxijobs seed` flags into {@link OxiCloudDatasetOptions} (then
 * validated by the generator). `--faults` takes OxiCloud's fault names
 * (`all`, `none` or a list of `OXICLOUD_FAULT_NAMES`); a half range
 * (`--folder-depth-min` alone) keeps OxiCloud's default for the other end.
 *
 * @throws ServerError `BAD_ARGUMENT` for an unknown flag (listing the known
 *   ones), a missing `--users`/`--files-per-user`, a bad value or an unknown
 *   fault name.
 */
export function oxiCloudSeedOptions(flags: SeedFlags): OxiCloudDatasetOptions {
  const known: readonly string[] = OXICLOUD_SEED_FLAGS.map((f) => f.flag);
  const unknown = Object.keys(flags).filter((f) => flags[f] !== undefined && !known.includes(f));
  if (unknown.length > 0) {
    badArgument(
      `unknown seed flag${unknown.length > 1 ? 's' : ''} ${unknown.map((f) => `--${f}`).join(', ')}; nothing was written. ` +
        `Allowed: ${known.map((f) => `--${f}`).join(', ')}`,
    );
  }
  if (flags['users'] === undefined || flags['files-per-user'] === undefined) {
    badArgument('seed needs --users and --files-per-user (e.g. --users 100 --files-per-user 100)');
  }
  const count = (flag: FlagName) => {
    const t = flags[flag];
    return t === undefined ? undefined : parseCount(flag, t);
  };
  const share = (flag: FlagName) => {
    const t = flags[flag];
    return t === undefined ? undefined : parseShare(flag, t);
  };
  const range = (
    min: number | undefined,
    max: number | undefined,
    fallback: { readonly min: number; readonly max: number },
  ) =>
    min === undefined && max === undefined
      ? undefined
      : { min: min ?? fallback.min, max: max ?? fallback.max };
  const faults = flags['faults'];
  const options: { -readonly [K in keyof OxiCloudDatasetOptions]: OxiCloudDatasetOptions[K] } = {
    users: parseCount('users', flags['users']),
    filesPerDrive: parseCount('files-per-user', flags['files-per-user']),
    foldersPerDrive: range(count('folders-per-drive-min'), count('folders-per-drive-max'), D.foldersPerDrive),
    folderDepth: range(count('folder-depth-min'), count('folder-depth-max'), D.folderDepth),
    trashedFolderShare: share('trashed-folder-share'),
    trashedFileShare: share('trashed-file-share'),
    audioShare: share('audio-share'),
    imageShare: share('image-share'),
    multiChunkFileShare: share('multi-chunk-share'),
    seed: count('seed'),
    faults: faults === undefined ? undefined : asBadArgument(() => parseOxiCloudFaults(faults)),
    faultsPerKind: count('faults-per-kind'),
    writeConcurrency: count('write-concurrency'),
    rowsPerStatement: count('files-per-statement'),
  };
  for (const key of Object.keys(options) as (keyof OxiCloudDatasetOptions)[]) {
    if (options[key] === undefined) delete options[key];
  }
  return options;
}
