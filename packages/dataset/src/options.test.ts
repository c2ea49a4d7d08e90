import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isDatasetError } from './errors.js';
import { FAULT_NAMES, parseFaults } from './faults.js';
import { DATASET_FLAGS, datasetOptionsFromFlags, parseByteSize } from './flags.js';
import { generateDataset } from './generate-dataset.js';
import { type DatasetOptions, resolveDatasetOptions } from './options.js';
import { planDataset } from './plan.js';

function invalid(options: unknown): string {
  try {
    resolveDatasetOptions(options as DatasetOptions);
  } catch (err) {
    expect(isDatasetError(err, 'INVALID_OPTIONS')).toBe(true);
    return (err as Error).message;
  }
  throw new Error('expected INVALID_OPTIONS');
}

describe('resolveDatasetOptions', () => {
  it('applies the defaults', () => {
    const o = resolveDatasetOptions({ users: 10, filesPerUser: 100 });
    expect(o).toMatchObject({
      blobsOnDisk: 100,
      blobSize: { min: 1024, max: 16384 },
      foldersPerDrive: { min: 10, max: 200 },
      folderDepth: { min: 3, max: 6 },
      grants: 5,
      seed: 1,
      faults: [],
      faultsPerKind: 2,
    });
  });

  it('says what is wrong and what is allowed', () => {
    expect(invalid({ users: 0, filesPerUser: 1 })).toBe(
      'users=0 is not allowed: expected a whole number from 1 to 10000000',
    );
    expect(invalid({ users: 1.5, filesPerUser: 1 })).toMatch(/^users=1.5 is not allowed/);
    expect(invalid({ users: 2, filesPerUser: -1 })).toMatch(/^filesPerUser=-1 is not allowed/);
    expect(invalid({ users: 10, filesPerUser: 10, blobsOnDisk: 101 })).toMatch(
      /blobsOnDisk=101 is not allowed: expected a whole number from 1 to 100 \(every blob is referenced/,
    );
    expect(invalid({ users: 10, filesPerUser: 10, blobsOnDisk: 0 })).toMatch(/^blobsOnDisk=0 is not allowed/);
    expect(invalid({ users: 1, filesPerUser: 1, blobSize: { min: 10, max: 5 } })).toBe(
      'blobSize is not allowed: min (10) is greater than max (5)',
    );
    expect(invalid({ users: 1, filesPerUser: 1, blobSize: { min: 0, max: 5 } })).toMatch(/^blobSize\.min=0/);
    expect(invalid({ users: 1, filesPerUser: 1, folderDepth: { min: 3, max: 33 } })).toMatch(
      /^folderDepth\.max=33 is not allowed: expected a whole number from 1 to 32/,
    );
    expect(invalid({ users: 1, filesPerUser: 1, trashedFileShare: 1.5 })).toBe(
      'trashedFileShare=1.5 is not allowed: expected a fraction from 0 to 1',
    );
    expect(invalid({ users: 1, filesPerUser: 1, audioShare: 0.6, imageShare: 0.6 })).toMatch(
      /audioShare \+ imageShare = 1.2 is not allowed/,
    );
    expect(invalid({ users: 1, filesPerUser: 1, faults: ['nope'] })).toMatch(
      /faults \["nope"\] are not fault names: allowed are drive_used_bytes_drift, /,
    );
    expect(invalid({ users: 1, filesPerUser: 1, grants: 3 })).toMatch(/one user cannot grant/);
    expect(invalid({ users: 1000, filesPerUser: 1_000_000 })).toMatch(/at most 200000000 files/);
  });

  it('keeps faults in FAULT_NAMES order, once each', () => {
    const o = resolveDatasetOptions({
      users: 1,
      filesPerUser: 1,
      faults: ['old_trash', 'missing_blob_row', 'old_trash'],
    });
    expect(o.faults).toEqual(['missing_blob_row', 'old_trash']);
  });

  it('allows an empty dataset of users without files', () => {
    expect(resolveDatasetOptions({ users: 3, filesPerUser: 0 }).blobsOnDisk).toBe(0);
  });
});

describe('planDataset', () => {
  it('is a pure function of the seed', () => {
    const o = resolveDatasetOptions({ users: 20, filesPerUser: 10, seed: 5 });
    expect(planDataset(o)).toEqual(planDataset(o));
    expect(planDataset(o)).not.toEqual(planDataset({ ...o, seed: 6 }));
  });

  it('gives each drive a depth within range and trashes whole subtrees only', () => {
    const plan = planDataset(resolveDatasetOptions({ users: 50, filesPerUser: 1, trashedFolderShare: 0.2 }));
    for (const d of plan.drives) {
      expect(d.folders.maxDepth).toBeGreaterThanOrEqual(3);
      expect(d.folders.maxDepth).toBeLessThanOrEqual(6);
      for (const f of d.folders.folders) {
        const parent = d.folders.folders[f.parentNo];
        if (parent?.trashedAgoSeconds != null) expect(f.trashedAgoSeconds).toBe(parent.trashedAgoSeconds);
        if (parent) expect(parent.folderNo).toBeLessThan(f.folderNo);
      }
    }
  });
});

describe('parseFaults', () => {
  it('parses all, none and lists', () => {
    expect(parseFaults('all')).toEqual([...FAULT_NAMES]);
    expect(parseFaults('none')).toEqual([]);
    expect(parseFaults('')).toEqual([]);
    expect(parseFaults(' old_trash , expired_grants ')).toEqual(['expired_grants', 'old_trash']);
  });

  it('names the unknown entries and lists the allowed names', () => {
    expect(() => parseFaults('old_trash,bogus,worse')).toThrow(
      /^unknown fault names "bogus", "worse": allowed are "all", "none" or a comma-separated list of drive_used_bytes_drift,.*file_mime_mismatch$/,
    );
    expect(() => parseFaults('all,old_trash')).toThrow(/mixes "all" with other names/);
  });
});

describe('datasetOptionsFromFlags', () => {
  it('maps the oxijobs seed flags to options', () => {
    expect(
      datasetOptionsFromFlags({
        users: '1000',
        'files-per-user': '1000',
        'blobs-on-disk': '100000',
        'blob-size-max': '64KiB',
        faults: 'all',
        seed: '42',
        'trashed-file-share': '0.1',
      }),
    ).toEqual({
      users: 1000,
      filesPerUser: 1000,
      blobsOnDisk: 100_000,
      blobSize: { min: 1024, max: 65536 },
      faults: [...FAULT_NAMES],
      seed: 42,
      trashedFileShare: 0.1,
    });
  });

  it('rejects unknown flags, missing required flags and malformed values', () => {
    expect(() => datasetOptionsFromFlags({ users: '1', 'files-per-user': '1', user: '3' })).toThrow(
      /^unknown seed flag --user: allowed are --users, --files-per-user, /,
    );
    expect(() => datasetOptionsFromFlags({ users: '1' })).toThrow(/seed needs --users and --files-per-user/);
    expect(() => datasetOptionsFromFlags({ users: 'ten', 'files-per-user': '1' })).toThrow(
      '--users="ten" is not allowed: expected a whole number',
    );
    expect(() => datasetOptionsFromFlags({ users: '1', 'files-per-user': '1', 'audio-share': '2' })).toThrow(
      /--audio-share="2" is not allowed: expected a fraction from 0 to 1/,
    );
    expect(DATASET_FLAGS.map((f) => f.flag)).toContain('blobs-on-disk');
  });

  it('parses byte sizes with binary units', () => {
    expect(parseByteSize('16384')).toBe(16384);
    expect(parseByteSize('16KiB')).toBe(16384);
    expect(parseByteSize('4m')).toBe(4 * 1024 * 1024);
    expect(() => parseByteSize('4 parsecs', '--blob-size-max')).toThrow(
      /^--blob-size-max="4 parsecs" is not allowed: expected a whole number of bytes/,
    );
  });
});

describe('generateDataset', () => {
  it('rejects invalid options before touching the database or the blob storage', async () => {
    const untouchable = new Proxy(
      {},
      {
        get() {
          throw new Error('touched');
        },
      },
    );
    const err = await generateDataset({
      pool: untouchable as pg.Pool,
      blobs: untouchable as never,
      options: { users: 0, filesPerUser: 1 },
    }).catch((e: unknown) => e);
    expect(isDatasetError(err, 'INVALID_OPTIONS')).toBe(true);
  });
});
