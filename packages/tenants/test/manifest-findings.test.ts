import { describe, expect, it } from 'vitest';
import {
  MANIFEST_REF_COUNT_HIGH,
  MANIFEST_REF_COUNT_LOW,
  MANIFEST_SHAPE_MISMATCH,
  MANIFEST_UNREFERENCED,
  type ManifestAnomaly,
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
