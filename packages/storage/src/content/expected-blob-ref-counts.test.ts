import { describe, expect, it } from 'vitest';
import { isStorageError } from '../storage-error.js';
import { BlobRefCountExpectation, expectedBlobRefCounts } from './expected-blob-ref-counts.js';

const h = (digit: string) => digit.repeat(64);

describe('expectedBlobRefCounts (OxiCloud §12 item 15)', () => {
  it('expects a one-chunk hash to count its manifests, not its files', () => {
    const one = h('1');
    // One manifest (file_hash = its only chunk), three files rows (copies, one trashed).
    const expected = expectedBlobRefCounts({
      manifests: [{ fileHash: one, chunkHashes: [one] }],
      files: [{ blobHash: one }, { blobHash: one }, { blobHash: one }],
    });
    expect(expected.get(one)).toEqual({
      hash: one,
      expected: 1,
      basis: 'manifests',
      manifestsListing: 1,
      filesReferencing: 3,
      isManifestFileHash: true,
    });
    expect(expected.size).toBe(1);
  });

  it('expects a legacy blob to count the files rows that reference it', () => {
    const legacy = h('2');
    const expected = expectedBlobRefCounts({
      manifests: [],
      files: [{ blobHash: legacy }, { blobHash: legacy }],
    });
    expect(expected.get(legacy)).toEqual({
      hash: legacy,
      expected: 2,
      basis: 'files',
      manifestsListing: 0,
      filesReferencing: 2,
      isManifestFileHash: false,
    });
  });

  it('counts a chunk once per manifest however often it repeats, and once for every manifest that lists it', () => {
    const [a, b, fileX, fileY] = [h('a'), h('b'), h('c'), h('d')];
    const expected = expectedBlobRefCounts({
      manifests: [
        { fileHash: fileX, chunkHashes: [a, b, a, a] },
        { fileHash: fileY, chunkHashes: [b, a] },
      ],
      files: [{ blobHash: fileX }, { blobHash: fileX }, { blobHash: fileY }],
    });
    expect(expected.get(a)).toMatchObject({ expected: 2, basis: 'manifests', manifestsListing: 2 });
    expect(expected.get(b)).toMatchObject({ expected: 2, basis: 'manifests', manifestsListing: 2 });
    // A multi-chunk file's hash names a manifest, not a blob object: a blobs row under it holds no reference.
    expect(expected.get(fileX)).toEqual({
      hash: fileX,
      expected: 0,
      basis: 'manifest_file_hash',
      manifestsListing: 0,
      filesReferencing: 2,
      isManifestFileHash: true,
    });
    expect([...expected.keys()].sort()).toEqual([a, b, fileX, fileY].sort());
  });

  it('gives the same answer fed in batches, in any order, as in one call', () => {
    const [a, b, one, legacy, file] = [h('a'), h('b'), h('1'), h('2'), h('f')];
    const manifests = [
      { fileHash: file, chunkHashes: [a, b] },
      { fileHash: one, chunkHashes: [one] },
    ];
    const files = [
      { blobHash: file },
      { blobHash: one },
      { blobHash: legacy },
      { blobHash: legacy },
      { blobHash: one },
    ];
    const whole = expectedBlobRefCounts({ manifests, files });
    const batched = new BlobRefCountExpectation()
      .addFiles(files.slice(0, 2))
      .addManifests(manifests.slice(1))
      .addFiles(files.slice(2))
      .addManifests(manifests.slice(0, 1));
    expect(new Map([...batched.entries()].map((entry) => [entry.hash, entry]))).toEqual(whole);
    expect(batched.expectedFor(one).expected).toBe(1);
    expect(batched.expectedFor(legacy).expected).toBe(2);
    expect(batched.expectedFor(h('e'))).toMatchObject({ expected: 0, basis: 'files', filesReferencing: 0 });
  });

  it('refuses a manifest fed twice', () => {
    const expectation = new BlobRefCountExpectation().addManifests([
      { fileHash: h('f'), chunkHashes: [h('a')] },
    ]);
    let error: unknown;
    try {
      expectation.addManifests([{ fileHash: h('f'), chunkHashes: [h('a')] }]);
    } catch (caught) {
      error = caught;
    }
    expect(isStorageError(error, 'INVALID_ARGUMENT')).toBe(true);
    expect(expectation.expectedFor(h('a')).expected).toBe(1);
  });
});
