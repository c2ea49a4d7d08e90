import { describe, expect, it } from 'vitest';
import {
  type BlobSequenceHasher,
  createManifestsConsistencyCheck,
  MANIFEST_HASH_MISMATCH,
  MANIFEST_REF_COUNT_HIGH,
  MANIFEST_REF_COUNT_LOW,
  MANIFEST_SHAPE_MISMATCH,
  MANIFEST_UNREFERENCED,
  type ManifestAnomaly,
  type ManifestScan,
  manifestFindings,
} from '../src/index.js';

const anomaly = (over: Partial<ManifestAnomaly>): ManifestAnomaly => ({
  fileHash: 'a'.repeat(64),
  refCount: 2,
  fileCount: 2,
  totalSize: 700_000,
  chunkCount: 3,
  shape: [],
  createdAt: new Date(0),
  ...over,
});
const kinds = (a: ManifestAnomaly) =>
  manifestFindings(a).map((f) => `${f.kind} ${f.severity} ${f.magnitude}`);

describe('manifestFindings: what an anomalous manifest stands for', () => {
  it('a count below its files is DataLoss, by how many files are uncounted', () => {
    expect(kinds(anomaly({ refCount: 1, fileCount: 3 }))).toEqual([`${MANIFEST_REF_COUNT_LOW} DataLoss 2`]);
  });

  it('a count above its files is Drift; no file at all is Reclaimable by its total size, whatever the count', () => {
    expect(kinds(anomaly({ refCount: 4, fileCount: 1 }))).toEqual([`${MANIFEST_REF_COUNT_HIGH} Drift 3`]);
    expect(kinds(anomaly({ refCount: 1, fileCount: 0 }))).toEqual([
      `${MANIFEST_UNREFERENCED} Reclaimable 700000`,
    ]);
    expect(kinds(anomaly({ refCount: 0, fileCount: 0 }))).toEqual([
      `${MANIFEST_UNREFERENCED} Reclaimable 700000`,
    ]);
  });

  it('a broken shape is its own finding beside a count finding, naming every rule', () => {
    const findings = manifestFindings(
      anomaly({ refCount: 1, fileCount: 2, shape: ['total_size', 'chunk_size'] }),
    );
    expect(findings.map((f) => f.kind)).toEqual([MANIFEST_REF_COUNT_LOW, MANIFEST_SHAPE_MISMATCH]);
    expect(findings[1]?.detail).toEqual({
      problems: ['total_size', 'chunk_size'],
      total_size: 700_000,
      chunk_count: 3,
    });
  });

  it('a sound manifest stands for nothing', () => {
    expect(manifestFindings(anomaly({}))).toEqual([]);
  });
});

describe('the deep whole-file pass, as the check declares it', () => {
  // Declarations only: nothing here reads a row or a byte (the adapter's tests run it on Postgres and real stores).
  const unused = () => Promise.reject(new Error('not called: declarations only'));
  const scan = {
    subsystem: () => 'chunk_manifests',
    estimateRows: async () => 10,
  } as unknown as ManifestScan;
  const hasher: BlobSequenceHasher = { hashStoredBlob: unused, hashStoredSequence: unused };
  const NORMAL = { force: false, deep: false };
  const DEEP = { force: false, deep: true };

  it('exists with a hasher only: then deep, its kind, its grace in deep runs, none in the others', async () => {
    const plain = createManifestsConsistencyCheck({ scan });
    expect(plain.deep).toBeUndefined();
    expect(plain.kindGraceMs).toBeUndefined();
    expect(plain.kinds.map((k) => k.kind)).not.toContain(MANIFEST_HASH_MISMATCH);
    expect(await plain.estimateTotal?.(DEEP)).toBe(10);

    const deep = createManifestsConsistencyCheck({ scan, hasher, graceWindowMs: 5_000 });
    expect(deep.deep).toBe(true);
    expect(deep.kinds.find((k) => k.kind === MANIFEST_HASH_MISMATCH)).toMatchObject({
      severity: 'DataLoss',
      magnitude: 'count',
      repair: null,
    });
    expect(deep.countMeaning).toMatch(/^findings this run found: .*\(deep\)/);
    // A run without deep never examines the kind, so it never fixes one.
    expect(deep.kindGraceMs?.(NORMAL)).toEqual({ [MANIFEST_HASH_MISMATCH]: null });
    expect(deep.kindGraceMs?.(DEEP)).toEqual({ [MANIFEST_HASH_MISMATCH]: 5_000 });
    expect(deep.kindGraceMs?.({ force: true, deep: true })).toEqual({ [MANIFEST_HASH_MISMATCH]: 0 });
    // A deep run walks the manifests twice.
    expect(await deep.estimateTotal?.(NORMAL)).toBe(10);
    expect(await deep.estimateTotal?.(DEEP)).toBe(20);
  });

  it('refuses a hashConcurrency below 1 and a hasher that cannot hash a sequence', () => {
    expect(() => createManifestsConsistencyCheck({ scan, hasher, hashConcurrency: 0 })).toThrow(
      /hashConcurrency must be an integer of at least 1, got 0/,
    );
    const single = { hashStoredBlob: unused } as unknown as BlobSequenceHasher;
    expect(() => createManifestsConsistencyCheck({ scan, hasher: single })).toThrow(/hashStoredSequence/);
  });
});
