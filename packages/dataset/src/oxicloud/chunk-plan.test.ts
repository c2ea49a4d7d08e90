import { BLAKE3_EMPTY, blake3Hex, CDC_CHUNK_SIZES, manifestShapeProblems } from '@oxicloud/storage';
import { describe, expect, it } from 'vitest';
import { isDatasetError } from '../errors.js';
import { Prng } from '../prng.js';
import { type FileBytesPlan, planChunkBytes, planChunkSizes, planFileBytes } from './chunk-plan.js';

const { min, avg, max } = CDC_CHUNK_SIZES;
const MiB = 1024 * 1024;
const EDGE_SIZES = [0, 1, 65_535, 65_536, 65_537, MiB, 10 * MiB + 1];

/** The FastCDC shape every plan must have; a message names the first rule broken. */
function shapeError(size: number, sizes: readonly number[]): string | null {
  const sum = sizes.reduce((a, b) => a + b, 0);
  if (sum !== size) return `sizes add up to ${sum}, not ${size}`;
  if (size === 0 && sizes.length !== 0) return 'an empty file has chunks';
  if (size > 0 && size <= min && sizes.length !== 1)
    return `a file of ${size} bytes is ${sizes.length} chunks`;
  for (const [i, chunk] of sizes.entries()) {
    if (!Number.isInteger(chunk) || chunk < 1) return `chunk ${i} is ${chunk} bytes`;
    if (chunk > max) return `chunk ${i} is ${chunk} bytes, over ${max}`;
    if (i < sizes.length - 1 && chunk < min)
      return `chunk ${i} (not the last) is ${chunk} bytes, under ${min}`;
  }
  return null;
}

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('planChunkSizes', () => {
  it('plans the edge sizes as FastCDC cuts them', () => {
    expect(planChunkSizes(0, 1, 0)).toEqual([]);
    expect(planChunkSizes(1, 1, 0)).toEqual([1]);
    expect(planChunkSizes(65_535, 1, 0)).toEqual([65_535]);
    expect(planChunkSizes(65_536, 1, 0)).toEqual([65_536]);
    for (const size of EDGE_SIZES) expect(shapeError(size, planChunkSizes(size, 1, 0))).toBeNull();
  });

  it('keeps the shape over many seeds, files and sizes (edge sizes and random ones up to 24 MiB)', () => {
    const draw = new Prng(424242);
    let plans = 0;
    for (let seed = 0; seed < 60; seed++) {
      const sizes = [...EDGE_SIZES, ...Array.from({ length: 12 }, () => draw.int(0, 24 * MiB))];
      for (const size of sizes) {
        for (const fileIndex of [0, 1, 2 ** 33 - 1]) {
          const plan = planChunkSizes(size, seed, fileIndex);
          const problem = shapeError(size, plan);
          if (problem !== null) throw new Error(`seed ${seed}, file ${fileIndex}, size ${size}: ${problem}`);
          plans++;
        }
      }
    }
    expect(plans).toBe(60 * (EDGE_SIZES.length + 12) * 3);
  });

  it('is deterministic in (size, seed, fileIndex), and differs between files and seeds', () => {
    const size = 10 * MiB + 1;
    expect(planChunkSizes(size, 7, 3)).toEqual(planChunkSizes(size, 7, 3));
    expect(planChunkSizes(size, 7, 3)).not.toEqual(planChunkSizes(size, 7, 4));
    expect(planChunkSizes(size, 7, 3)).not.toEqual(planChunkSizes(size, 8, 3));
  });

  it('averages near 262 144 bytes a chunk, spread over the whole 64 KiB – 1 MiB range', () => {
    const inner: number[] = [];
    for (let fileIndex = 0; fileIndex < 400; fileIndex++) {
      const plan = planChunkSizes(10 * MiB + 1, 99, fileIndex);
      inner.push(...plan.slice(0, -1)); // the last chunk is cut by the file's end
    }
    const mean = inner.reduce((a, b) => a + b, 0) / inner.length;
    expect(inner.length).toBeGreaterThan(10_000);
    expect(mean).toBeGreaterThan(0.9 * avg);
    expect(mean).toBeLessThan(1.1 * avg);
    expect(inner.filter((s) => s < avg).length / inner.length).toBeGreaterThan(0.2);
    expect(inner.filter((s) => s > 2 * avg).length / inner.length).toBeGreaterThan(0.02);
    expect(inner.filter((s) => s === max).length / inner.length).toBeGreaterThan(0.003);
    expect(Math.min(...inner)).toBeLessThan(min + 16_384);
  });

  it('refuses sizes, seeds and indexes that are not whole numbers in range', () => {
    for (const [size, seed, index] of [
      [-1, 1, 0],
      [1.5, 1, 0],
      [2 ** 37, 1, 0],
      [1, -1, 0],
      [1, 1, 2 ** 33],
    ] as const) {
      expect(
        isDatasetError(
          thrown(() => planChunkSizes(size, seed, index)),
          'INVALID_OPTIONS',
        ),
      ).toBe(true);
    }
  });
});

describe('planFileBytes', () => {
  function plan(fileIndex: number, size: number, extra: Partial<FileBytesPlan> = {}): FileBytesPlan {
    return { seed: 5, fileIndex, size, chunkSizes: planChunkSizes(size, 5, fileIndex), ...extra };
  }

  it('gives deterministic chunks of the planned sizes, the kind magic on the first', () => {
    const file = plan(0, 3 * MiB, { kind: 'pdf' });
    const chunks = planFileBytes(file);
    expect(chunks.map((chunk) => chunk.bytes.length)).toEqual(file.chunkSizes);
    expect(chunks.map((chunk) => chunk.index)).toEqual(file.chunkSizes.map((_, i) => i));
    expect(Buffer.from(chunks[0]!.bytes.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
    expect(Buffer.from(chunks[1]!.bytes.subarray(0, 4)).toString('latin1')).toBe('OXDS');
    const again = planFileBytes(file);
    for (const [i, chunk] of chunks.entries()) {
      expect(Buffer.from(again[i]!.bytes).equals(Buffer.from(chunk.bytes))).toBe(true);
      expect(Buffer.from(planChunkBytes(file, i).bytes).equals(Buffer.from(chunk.bytes))).toBe(true);
    }
  });

  it('makes every fresh chunk distinct, even chunks of the same size in other files', () => {
    const hashes = new Set<string>();
    let count = 0;
    for (let fileIndex = 0; fileIndex < 6; fileIndex++) {
      // Same sizes in every file: only the (file, chunk) identity tells the bytes apart.
      const file: FileBytesPlan = { seed: 5, fileIndex, size: 4 * max, chunkSizes: [max, max, max, max] };
      for (const chunk of planFileBytes(file)) {
        hashes.add(blake3Hex(chunk.bytes));
        count++;
      }
    }
    expect(hashes.size).toBe(count);
  });

  it('shares chunks across files and repeats them within a file where reuse says so', () => {
    const a = plan(10, 2 * MiB, { kind: 'image' });
    const aChunks = planFileBytes(a);
    const [first, second] = [a.chunkSizes[0]!, a.chunkSizes[1]!];
    // b: a's first chunk, a fresh chunk, a's second chunk, then its own chunk 1 again.
    const b: FileBytesPlan = {
      seed: 5,
      fileIndex: 11,
      size: first + 70_000 + second + 70_000,
      chunkSizes: [first, 70_000, second, 70_000],
      reuse: [{ from: a, index: 0 }, null, { from: a, index: 1 }],
    };
    const withRepeat: FileBytesPlan = { ...b, reuse: [...(b.reuse ?? []), { from: b, index: 1 }] };
    const bChunks = planFileBytes(withRepeat);
    const hex = (bytes: Uint8Array) => blake3Hex(bytes);
    expect(hex(bChunks[0]!.bytes)).toBe(hex(aChunks[0]!.bytes));
    expect(hex(bChunks[2]!.bytes)).toBe(hex(aChunks[1]!.bytes));
    expect(hex(bChunks[3]!.bytes)).toBe(hex(bChunks[1]!.bytes));
    expect(bChunks.map((chunk) => chunk.origin)).toEqual([
      { fileIndex: 10, chunkIndex: 0 },
      { fileIndex: 11, chunkIndex: 1 },
      { fileIndex: 10, chunkIndex: 1 },
      { fileIndex: 11, chunkIndex: 1 },
    ]);
    // Followed through: c reuses b's chunk 0, which is a's.
    const c: FileBytesPlan = {
      seed: 5,
      fileIndex: 12,
      size: first,
      chunkSizes: [first],
      reuse: [{ from: b, index: 0 }],
    };
    expect(hex(planFileBytes(c)[0]!.bytes)).toBe(hex(aChunks[0]!.bytes));
    // The result is a well-formed OxiCloud manifest with a repeated chunk.
    const chunkHashes = bChunks.map((chunk) => hex(chunk.bytes));
    const fileHash = hex(Buffer.concat(bChunks.map((chunk) => chunk.bytes)));
    expect(new Set(chunkHashes).size).toBe(3);
    expect(
      manifestShapeProblems({
        fileHash,
        chunkHashes,
        chunkSizes: withRepeat.chunkSizes,
        totalSize: withRepeat.size,
        chunkCount: chunkHashes.length,
      }),
    ).toEqual([]);
  });

  it('plans a one-chunk file whose hash is its chunk hash, and an empty file with no chunks', () => {
    const small = plan(20, 5_000, { kind: 'audio' });
    const [only] = planFileBytes(small);
    expect(small.chunkSizes).toEqual([5_000]);
    const hash = blake3Hex(only!.bytes);
    expect(
      manifestShapeProblems({
        fileHash: hash,
        chunkHashes: [hash],
        chunkSizes: [5_000],
        totalSize: 5_000,
        chunkCount: 1,
      }),
    ).toEqual([]);
    expect(planFileBytes(plan(21, 0))).toEqual([]);
    expect(blake3Hex(Buffer.concat([]))).toBe(BLAKE3_EMPTY);
  });

  it('refuses a plan whose sizes do not add up, a reuse of another size or of no chunk, and a bad index', () => {
    const a = plan(30, 300_000);
    const bad = (p: FileBytesPlan) =>
      isDatasetError(
        thrown(() => planFileBytes(p)),
        'INVALID_OPTIONS',
      );
    expect(bad({ ...a, size: a.size + 1 })).toBe(true);
    expect(bad({ seed: 5, fileIndex: 31, size: 0, chunkSizes: [0] })).toBe(true);
    expect(
      bad({ seed: 5, fileIndex: 31, size: 100, chunkSizes: [100], reuse: [{ from: a, index: 0 }] }),
    ).toBe(true);
    expect(
      bad({ seed: 5, fileIndex: 31, size: 100, chunkSizes: [100], reuse: [{ from: a, index: 99 }] }),
    ).toBe(true);
    const loop: { -readonly [K in keyof FileBytesPlan]: FileBytesPlan[K] } = {
      seed: 5,
      fileIndex: 32,
      size: 100,
      chunkSizes: [100],
    };
    loop.reuse = [{ from: loop, index: 0 }];
    expect(bad(loop)).toBe(true);
    const error = thrown(() => planChunkBytes(a, a.chunkSizes.length));
    expect(isDatasetError(error, 'INVALID_OPTIONS')).toBe(true);
  });
});
