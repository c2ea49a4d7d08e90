import { describe, expect, it } from 'vitest';
import { BLAKE3_EMPTY } from '../hashing/blake3.js';
import { isStorageError } from '../storage-error.js';
import { CDC_CHUNK_SIZES, fileContentSize, manifestContent } from './file-content.js';
import { type ChunkManifest, MANIFEST_SHAPE_PROBLEM_CODES, manifestShapeProblems } from './manifest-shape.js';

const h = (digit: string) => digit.repeat(64);
const FILE = h('f');
const A = h('a');
const B = h('b');

function manifest(overrides: Partial<ChunkManifest> = {}): ChunkManifest {
  return {
    fileHash: FILE,
    chunkHashes: [A, B, A],
    chunkSizes: [300_000, 65_536, 300_000],
    totalSize: 665_536,
    chunkCount: 3,
    ...overrides,
  };
}

describe('manifestShapeProblems', () => {
  it('finds nothing wrong in a well-formed multi-chunk, one-chunk or empty manifest', () => {
    expect(manifestShapeProblems(manifest())).toEqual([]);
    const oneChunk = { fileHash: A, chunkHashes: [A], chunkSizes: [12], totalSize: 12, chunkCount: 1 };
    expect(manifestShapeProblems(oneChunk)).toEqual([]);
    const empty = { fileHash: BLAKE3_EMPTY, chunkHashes: [], chunkSizes: [], totalSize: 0, chunkCount: 0 };
    expect(manifestShapeProblems(empty)).toEqual([]);
    const largest = manifest({ chunkSizes: [CDC_CHUNK_SIZES.max, 1, 1], totalSize: CDC_CHUNK_SIZES.max + 2 });
    expect(manifestShapeProblems(largest)).toEqual([]);
  });

  it('reports Σ chunk_sizes ≠ total_size with both numbers', () => {
    expect(manifestShapeProblems(manifest({ totalSize: 665_535 }))).toEqual([
      { code: 'total_size_mismatch', totalSize: 665_535, chunkSizesSum: 665_536 },
    ]);
  });

  it('reports chunk_count ≠ cardinality(chunk_hashes) ≠ cardinality(chunk_sizes) with the three counts', () => {
    expect(manifestShapeProblems(manifest({ chunkCount: 2 }))).toEqual([
      { code: 'chunk_count_mismatch', chunkCount: 2, chunkHashesCount: 3, chunkSizesCount: 3 },
    ]);
    expect(manifestShapeProblems(manifest({ chunkHashes: [A, B] }))).toEqual([
      { code: 'chunk_count_mismatch', chunkCount: 3, chunkHashesCount: 2, chunkSizesCount: 3 },
    ]);
    expect(manifestShapeProblems(manifest({ chunkSizes: [300_000, 365_536] }))).toEqual([
      { code: 'chunk_count_mismatch', chunkCount: 3, chunkHashesCount: 3, chunkSizesCount: 2 },
    ]);
  });

  it('reports every chunk over 1 MiB, and sizes that are not byte counts, by index', () => {
    const big = CDC_CHUNK_SIZES.max + 1;
    expect(manifestShapeProblems(manifest({ chunkSizes: [big, -1, big], totalSize: 2 * big }))).toEqual([
      { code: 'chunk_too_large', index: 0, size: big, max: 1_048_576 },
      { code: 'invalid_chunk_size', index: 1, size: -1 },
      { code: 'chunk_too_large', index: 2, size: big, max: 1_048_576 },
    ]);
    expect(
      manifestShapeProblems(manifest({ chunkSizes: [300_000, 0.5, 300_000], totalSize: 600_000 })),
    ).toEqual([{ code: 'invalid_chunk_size', index: 1, size: 0.5 }]);
  });

  it('reports hashes that are not 64 lowercase hex characters: file_hash, and chunks by index', () => {
    const problems = manifestShapeProblems(
      manifest({ fileHash: FILE.toUpperCase(), chunkHashes: [A, 'abc', `${B}0`] }),
    );
    expect(problems).toEqual([
      { code: 'invalid_hash', field: 'file_hash' },
      { code: 'invalid_hash', field: 'chunk_hashes', index: 1 },
      { code: 'invalid_hash', field: 'chunk_hashes', index: 2 },
    ]);
  });

  it('reports an empty manifest not named BLAKE3(""), and a one-chunk manifest not named by its chunk', () => {
    const empty = { fileHash: FILE, chunkHashes: [], chunkSizes: [], totalSize: 0, chunkCount: 0 };
    expect(manifestShapeProblems(empty)).toEqual([
      { code: 'empty_file_hash_mismatch', expected: BLAKE3_EMPTY },
    ]);
    const oneChunk = { fileHash: FILE, chunkHashes: [A], chunkSizes: [12], totalSize: 12, chunkCount: 1 };
    expect(manifestShapeProblems(oneChunk)).toEqual([{ code: 'single_chunk_hash_mismatch', chunkHash: A }]);
  });

  it('lists several problems of one row together, each code one of MANIFEST_SHAPE_PROBLEM_CODES', () => {
    const broken = manifestShapeProblems({
      fileHash: 'nope',
      chunkHashes: [A, 'x'],
      chunkSizes: [2_000_000],
      totalSize: 5,
      chunkCount: 7,
    });
    expect(broken.map((problem) => problem.code)).toEqual([
      'invalid_hash',
      'chunk_count_mismatch',
      'chunk_too_large',
      'total_size_mismatch',
      'invalid_hash',
    ]);
    for (const problem of broken) expect(MANIFEST_SHAPE_PROBLEM_CODES).toContain(problem.code);
  });
});

describe('manifestContent', () => {
  it('pairs chunk_hashes with chunk_sizes in order', () => {
    const content = manifestContent(manifest());
    expect(content).toEqual({
      kind: 'manifest',
      fileHash: FILE,
      chunks: [
        { hash: A, size: 300_000 },
        { hash: B, size: 65_536 },
        { hash: A, size: 300_000 },
      ],
      totalSize: 665_536,
    });
    expect(fileContentSize(content)).toBe(665_536);
    expect(fileContentSize({ kind: 'legacy', hash: A, size: 9 })).toBe(9);
  });

  it('refuses arrays that cannot be paired', () => {
    const error = (() => {
      try {
        return manifestContent(manifest({ chunkSizes: [1] }));
      } catch (caught) {
        return caught;
      }
    })();
    expect(isStorageError(error, 'INVALID_ARGUMENT')).toBe(true);
    expect((error as Error).message).toContain('3 chunk hashes but 1 chunk sizes');
  });
});
