import { OXICLOUD_DATASET_DEFAULTS, OXICLOUD_FAULT_NAMES } from '@oxicloud/dataset';
import { describe, expect, it } from 'vitest';
import { OXICLOUD_SEED_FLAGS, oxiCloudSeedOptions } from '../src/commands/seed-oxicloud-flags.js';
import { ServerError } from '../src/server-error.js';

function refusal(flags: Record<string, string>): string {
  try {
    oxiCloudSeedOptions(flags);
  } catch (error) {
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).code).toBe('BAD_ARGUMENT');
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

describe("oxijobs seed flags (OxiCloud's model)", () => {
  it('maps the flags that mean the same onto OxiCloudDatasetOptions, a half range keeping its OxiCloud default', () => {
    expect(
      oxiCloudSeedOptions({
        users: '3',
        'files-per-user': '20',
        'folders-per-drive-max': '6',
        'folder-depth-min': '1',
        'trashed-folder-share': '0.2',
        'trashed-file-share': '0',
        'audio-share': '0.1',
        'image-share': '0.3',
        'multi-chunk-share': '0.01',
        seed: '7',
        faults: 'all',
        'faults-per-kind': '2',
        'write-concurrency': '4',
        'files-per-statement': '500',
      }),
    ).toEqual({
      users: 3,
      filesPerDrive: 20,
      foldersPerDrive: { min: OXICLOUD_DATASET_DEFAULTS.foldersPerDrive.min, max: 6 },
      folderDepth: { min: 1, max: OXICLOUD_DATASET_DEFAULTS.folderDepth.max },
      trashedFolderShare: 0.2,
      trashedFileShare: 0,
      audioShare: 0.1,
      imageShare: 0.3,
      multiChunkFileShare: 0.01,
      seed: 7,
      faults: [...OXICLOUD_FAULT_NAMES],
      faultsPerKind: 2,
      writeConcurrency: 4,
      rowsPerStatement: 500,
    });
    expect(oxiCloudSeedOptions({ users: '1', 'files-per-user': '0', faults: 'none' })).toEqual({
      users: 1,
      filesPerDrive: 0,
      faults: [],
    });
  });

  it("the old model's flags are unknown, refused naming the allowed ones (commander refuses them first at the command line)", () => {
    const allowed = OXICLOUD_SEED_FLAGS.map((f) => f.flag);
    for (const flag of [
      'blobs-on-disk',
      'blob-size-min',
      'blob-size-max',
      'second-drive-share',
      'root-file-share',
      'grants',
    ]) {
      expect(allowed).not.toContain(flag);
      const message = refusal({ users: '1', 'files-per-user': '1', [flag]: '1' });
      expect(message).toContain(`unknown seed flag --${flag}; nothing was written`);
      expect(message).toContain(`Allowed: ${allowed.map((f) => `--${f}`).join(', ')}`);
    }
    // Each flag sets one option and says its OxiCloud default.
    expect(OXICLOUD_SEED_FLAGS.find((f) => f.flag === 'faults-per-kind')?.help).toContain(
      `(default ${OXICLOUD_DATASET_DEFAULTS.faultsPerKind})`,
    );
  });

  it('refuses old-model fault names listing OxiCloud ones, a missing required flag and a bad value', () => {
    expect(refusal({ users: '1', 'files-per-user': '1', faults: 'old_trash,missing_manifest' })).toContain(
      `unknown OxiCloud fault name "old_trash": allowed are "all", "none" or a comma-separated list of ${OXICLOUD_FAULT_NAMES.join(', ')}`,
    );
    expect(refusal({ users: '1' })).toContain('seed needs --users and --files-per-user');
    expect(refusal({ users: '1', 'files-per-user': '1', 'image-share': '2' })).toContain(
      '--image-share="2" is not allowed',
    );
  });
});
