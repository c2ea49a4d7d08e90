import { describe, expect, it } from 'vitest';
import { type DatasetError, isDatasetError } from '../errors.js';
import { OXICLOUD_FAULT_NAMES, OXICLOUD_FAULTS_NOT_PORTED, parseOxiCloudFaults } from './faults.js';
import {
  OXICLOUD_DATASET_DEFAULTS,
  type OxiCloudDatasetOptions,
  resolveOxiCloudDatasetOptions,
} from './options.js';
import { planOxiCloudDataset } from './plan.js';

function refusal(options: unknown): DatasetError {
  try {
    resolveOxiCloudDatasetOptions(options as OxiCloudDatasetOptions);
  } catch (error) {
    if (isDatasetError(error, 'INVALID_OPTIONS')) return error;
    throw error;
  }
  throw new Error('expected INVALID_OPTIONS');
}

describe('resolveOxiCloudDatasetOptions', () => {
  it('applies the defaults in one place, the ones computed from users included', () => {
    const o = resolveOxiCloudDatasetOptions({ users: 10, filesPerDrive: 5 });
    expect(o).toMatchObject({ ...OXICLOUD_DATASET_DEFAULTS, externalUsers: 2, sharedDrives: 2, groups: 1 });
    expect(o.membersPerGroup).toBe(3);
    expect(resolveOxiCloudDatasetOptions({ users: 1, filesPerDrive: 0, sharedDrives: 0 }).groups).toBe(0);
  });

  it('names the option, the value and what is allowed', () => {
    expect(refusal({ users: 0, filesPerDrive: 1 }).message).toMatch(/users=0 .*from 1 to/);
    expect(refusal({ users: 2, filesPerDrive: 1, admins: 3 }).message).toMatch(/admins=3 .*from 0 to 2/);
    expect(refusal({ users: 2, filesPerDrive: 1, oneChunkSize: { min: 64, max: 65_536 } }).message).toMatch(
      /oneChunkSize.max=65536 .*under 64 KiB|oneChunkSize.max=65536/,
    );
    expect(refusal({ users: 2, filesPerDrive: 1, multiChunkSize: { min: 1024, max: 2048 } }).message).toMatch(
      /multiChunkSize.min=1024 .*1048577/,
    );
    expect(
      refusal({
        users: 2,
        filesPerDrive: 1,
        emptyFileShare: 0.5,
        legacyFileShare: 0.4,
        multiChunkFileShare: 0.2,
      }).message,
    ).toMatch(/add up to at most 1/);
    expect(refusal({ users: 2, filesPerDrive: 1, faults: ['old_trash'] }).message).toMatch(
      /"old_trash".*allowed are/,
    );
    expect(refusal({ users: 2, filesPerDrive: 1, sharedDriveQuotaBytes: -1 }).message).toMatch(
      /sharedDriveQuotaBytes/,
    );
    expect(refusal(null).message).toMatch(/users and filesPerDrive/);
  });
});

describe('the fault list', () => {
  it('parses fault names; a fault the old generator had and OxiCloud has not is refused by name', () => {
    for (const name of Object.keys(OXICLOUD_FAULTS_NOT_PORTED)) {
      expect(() => parseOxiCloudFaults(name)).toThrow(new RegExp(`unknown OxiCloud fault name "${name}"`));
    }
    expect(parseOxiCloudFaults('all')).toEqual([...OXICLOUD_FAULT_NAMES]);
    expect(parseOxiCloudFaults(' missing_manifest , missing_manifest ')).toEqual(['missing_manifest']);
    expect(() => parseOxiCloudFaults('nope')).toThrow(/unknown OxiCloud fault name "nope"/);
  });
});

describe('planOxiCloudDataset', () => {
  it('is deterministic in the options and the seed', () => {
    const o = resolveOxiCloudDatasetOptions({ users: 5, filesPerDrive: 30, seed: 3 });
    const strip = (p: ReturnType<typeof planOxiCloudDataset>) =>
      JSON.stringify(p, (k, v) => (k === 'from' ? undefined : v));
    expect(strip(planOxiCloudDataset(o))).toBe(strip(planOxiCloudDataset(o)));
    expect(strip(planOxiCloudDataset({ ...o, seed: 4 }))).not.toBe(strip(planOxiCloudDataset(o)));
  });
});
