import { DatasetError } from './errors.js';
import { parseFaults } from './faults.js';
import { DATASET_DEFAULTS, type DatasetOptions, type IntRange } from './options.js';

/** Raw `oxijobs seed` flag values by flag name without the dashes (`files-per-user`); unset flags are absent or `undefined`. */
export type DatasetFlags = Readonly<Record<string, string | undefined>>;

type FlagKind = 'count' | 'bytes' | 'share' | 'faults';

/** Every `oxijobs seed` flag: name, value kind and what it sets (for `--help` and the README). */
export const DATASET_FLAGS = [
  { flag: 'users', kind: 'count', help: 'number of users (required)' },
  { flag: 'files-per-user', kind: 'count', help: 'files per user (required)' },
  {
    flag: 'blobs-on-disk',
    kind: 'count',
    help: 'distinct blobs, each with a row and real bytes (default: files / 10)',
  },
  { flag: 'blob-size-min', kind: 'bytes', help: 'smallest blob, e.g. 1024 or 1KiB (default 1KiB)' },
  { flag: 'blob-size-max', kind: 'bytes', help: 'largest blob, e.g. 16KiB or 4MiB (default 16KiB)' },
  { flag: 'folders-per-drive-min', kind: 'count', help: 'fewest folders per drive (default 10)' },
  { flag: 'folders-per-drive-max', kind: 'count', help: 'most folders per drive (default 200)' },
  { flag: 'folder-depth-min', kind: 'count', help: 'shallowest deepest-folder depth per drive (default 3)' },
  { flag: 'folder-depth-max', kind: 'count', help: 'deepest folder depth per drive (default 6)' },
  {
    flag: 'second-drive-share',
    kind: 'share',
    help: 'share of users with a second drive, 0 to 1 (default 0.1)',
  },
  { flag: 'root-file-share', kind: 'share', help: 'share of files at a drive root (default 0.05)' },
  {
    flag: 'trashed-folder-share',
    kind: 'share',
    help: 'share of folders trashed as whole subtrees (default 0.05)',
  },
  {
    flag: 'trashed-file-share',
    kind: 'share',
    help: 'share of files in live folders trashed (default 0.02)',
  },
  { flag: 'audio-share', kind: 'share', help: 'share of audio/mpeg blobs (default 0.1)' },
  { flag: 'image-share', kind: 'share', help: 'share of image/jpeg blobs (default 0.2)' },
  { flag: 'grants', kind: 'count', help: 'unexpired role grants (default users / 2)' },
  { flag: 'seed', kind: 'count', help: 'PRNG seed; usernames are s<seed>-u0000001, … (default 1)' },
  {
    flag: 'faults',
    kind: 'faults',
    help: '"all", "none" or a comma-separated list of fault names (default none)',
  },
  { flag: 'faults-per-kind', kind: 'count', help: 'resources each fault touches (default 2)' },
  { flag: 'write-concurrency', kind: 'count', help: 'blob writes in flight (default 16)' },
  { flag: 'files-per-statement', kind: 'count', help: 'file rows per INSERT (default 100000)' },
] as const satisfies readonly { flag: string; kind: FlagKind; help: string }[];

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
};

/**
 * Parses a byte size: digits with an optional binary unit (`B`, `K`/`KiB`,
 * `M`/`MiB`, `G`/`GiB`, case-insensitive): `16384`, `16KiB`, `4M`.
 *
 * @throws DatasetError `INVALID_OPTIONS` naming `what` and the accepted forms.
 */
export function parseByteSize(text: string, what = 'size'): number {
  const m = /^\s*(\d+)\s*([a-z]*)\s*$/i.exec(text);
  const unit = UNITS[(m?.[2] ?? '').toLowerCase()];
  const value = m && unit !== undefined ? Number(m[1]) * unit : Number.NaN;
  if (!Number.isSafeInteger(value)) {
    throw new DatasetError(
      'INVALID_OPTIONS',
      `${what}=${JSON.stringify(text)} is not allowed: expected a whole number of bytes, optionally with a unit ` +
        'B, KiB, MiB or GiB (e.g. 16KiB)',
    );
  }
  return value;
}

function parseCount(flag: string, text: string): number {
  const t = text.trim();
  if (!/^\d+$/.test(t) || !Number.isSafeInteger(Number(t))) {
    throw new DatasetError(
      'INVALID_OPTIONS',
      `--${flag}=${JSON.stringify(text)} is not allowed: expected a whole number`,
    );
  }
  return Number(t);
}

function parseShare(flag: string, text: string): number {
  const t = text.trim();
  const v = /^\d*\.?\d+$/.test(t) ? Number(t) : Number.NaN;
  if (!(v >= 0 && v <= 1)) {
    throw new DatasetError(
      'INVALID_OPTIONS',
      `--${flag}=${JSON.stringify(text)} is not allowed: expected a fraction from 0 to 1`,
    );
  }
  return v;
}

/**
 * Turns `oxijobs seed` flags into {@link DatasetOptions} (then validated by
 * the generator). `--users` and `--files-per-user` are required.
 *
 * @throws DatasetError `INVALID_OPTIONS` for an unknown flag (listing the known ones), a missing
 *   required flag or a value of the wrong form.
 * @example
 * ```ts
 * datasetOptionsFromFlags({ users: '1000', 'files-per-user': '1000', 'blobs-on-disk': '100000', faults: 'all' });
 * ```
 */
export function datasetOptionsFromFlags(flags: DatasetFlags): DatasetOptions {
  const known = new Set<string>(DATASET_FLAGS.map((f) => f.flag));
  const unknown = Object.keys(flags).filter((k) => flags[k] !== undefined && !known.has(k));
  if (unknown.length > 0) {
    throw new DatasetError(
      'INVALID_OPTIONS',
      `unknown seed flag${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `--${u}`).join(', ')}: ` +
        `allowed are ${DATASET_FLAGS.map((f) => `--${f.flag}`).join(', ')}`,
    );
  }
  const v = (flag: (typeof DATASET_FLAGS)[number]['flag']): string | undefined => flags[flag];
  const count = (flag: (typeof DATASET_FLAGS)[number]['flag']): number | undefined => {
    const t = v(flag);
    return t === undefined ? undefined : parseCount(flag, t);
  };
  const share = (flag: (typeof DATASET_FLAGS)[number]['flag']): number | undefined => {
    const t = v(flag);
    return t === undefined ? undefined : parseShare(flag, t);
  };
  const bytes = (flag: (typeof DATASET_FLAGS)[number]['flag']): number | undefined => {
    const t = v(flag);
    return t === undefined ? undefined : parseByteSize(t, `--${flag}`);
  };
  const rangeOf = (
    min: number | undefined,
    max: number | undefined,
    fallback: IntRange,
  ): IntRange | undefined =>
    min === undefined && max === undefined
      ? undefined
      : { min: min ?? fallback.min, max: max ?? fallback.max };

  const users = count('users');
  const filesPerUser = count('files-per-user');
  if (users === undefined || filesPerUser === undefined) {
    throw new DatasetError(
      'INVALID_OPTIONS',
      'seed needs --users and --files-per-user (e.g. --users 1000 --files-per-user 1000 --blobs-on-disk 100000)',
    );
  }
  const faults = v('faults');
  const options: { -readonly [K in keyof DatasetOptions]: DatasetOptions[K] } = {
    users,
    filesPerUser,
    blobsOnDisk: count('blobs-on-disk'),
    blobSize: rangeOf(bytes('blob-size-min'), bytes('blob-size-max'), DATASET_DEFAULTS.blobSize),
    foldersPerDrive: rangeOf(
      count('folders-per-drive-min'),
      count('folders-per-drive-max'),
      DATASET_DEFAULTS.foldersPerDrive,
    ),
    folderDepth: rangeOf(count('folder-depth-min'), count('folder-depth-max'), DATASET_DEFAULTS.folderDepth),
    secondDriveShare: share('second-drive-share'),
    rootFileShare: share('root-file-share'),
    trashedFolderShare: share('trashed-folder-share'),
    trashedFileShare: share('trashed-file-share'),
    audioShare: share('audio-share'),
    imageShare: share('image-share'),
    grants: count('grants'),
    seed: count('seed'),
    faults: faults === undefined ? undefined : parseFaults(faults),
    faultsPerKind: count('faults-per-kind'),
    writeConcurrency: count('write-concurrency'),
    filesPerStatement: count('files-per-statement'),
  };
  for (const key of Object.keys(options) as (keyof DatasetOptions)[]) {
    if (options[key] === undefined) delete options[key];
  }
  return options;
}
