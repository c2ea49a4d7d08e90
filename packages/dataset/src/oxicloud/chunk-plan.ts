import { CDC_CHUNK_SIZES } from '@oxicloud/storage';
import { type BlobKind, blobBytes, STREAM } from '../blob-content.js';
import { DatasetError } from '../errors.js';
import { Prng } from '../prng.js';

/*
 * How OxiCloud cuts a file (FastCDC v2020, min 64 KiB, avg 256 KiB, max
 * 1 MiB), imitated in shape without hashing any bytes: no cut in the first
 * `min` bytes, then a cut point per byte at one rate up to `avg` and at a
 * doubled rate after it (FastCDC's normalised chunking: a stricter mask
 * before `avg`, a looser one after), and a chunk that finds no cut point
 * (a run of zeros, say) ends at `max`. With the numbers below about half the
 * chunks end before `avg`, 7 % are over 512 KiB, 0.8 % are exactly `max`,
 * and the mean is ≈ 270 000 bytes (avg × 1.03).
 */

/** Per-byte chance of a cut point between `min` and `avg`. */
const CUT_RATE_BEFORE_AVG = 2 ** -18;
/** Per-byte chance of a cut point after `avg`. */
const CUT_RATE_AFTER_AVG = 2 ** -17;
/** Share of chunks that find no cut point and end at `max`. */
const NO_CUT_SHARE = 1 / 128;

/** Chunks one file can have here: {@link chunkSeed} keeps (file, chunk) pairs distinct below it. */
const MAX_CHUNKS_PER_FILE = 2 ** 20;
/** File indexes allowed: (file, chunk) pairs stay exact integers (< 2^53). */
const MAX_FILE_INDEX = 2 ** 33 - 1;
/** Largest file {@link planChunkSizes} plans (64 GiB): even at `min` per chunk it stays within {@link MAX_CHUNKS_PER_FILE}. */
const MAX_PLANNED_SIZE = MAX_CHUNKS_PER_FILE * CDC_CHUNK_SIZES.min;
/** Longest chain of reuses followed (a longer one is taken for a cycle). */
const MAX_REUSE_HOPS = 10_000;

function assertWhole(name: string, value: unknown, max: number, min = 0): asserts value is number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max) return;
  throw new DatasetError(
    'INVALID_OPTIONS',
    `${name} must be a whole number from ${min} to ${max}, got ${String(value)}`,
  );
}

/** One chunk's length drawn as FastCDC would cut it, before the file's end is taken into account. */
function drawChunkSize(prng: Prng): number {
  const { min, avg, max } = CDC_CHUNK_SIZES;
  if (prng.chance(NO_CUT_SHARE)) return max;
  const beforeAvg = -Math.log(1 - prng.next()) / CUT_RATE_BEFORE_AVG;
  if (min + beforeAvg < avg) return min + Math.floor(beforeAvg);
  const afterAvg = -Math.log(1 - prng.next()) / CUT_RATE_AFTER_AVG;
  return Math.min(max, avg + Math.floor(afterAvg));
}

/**
 * The chunk sizes OxiCloud's FastCDC would give a file of `size` bytes, in
 * shape: every chunk ≤ 1 048 576 bytes, every chunk but the last ≥ 65 536,
 * the mean near 262 144; a file of at most 65 536 bytes is one chunk, an
 * empty file none. The sizes add up to `size`. Pure: the same
 * `(size, seed, fileIndex)` always gives the same plan.
 *
 * @throws {DatasetError} `INVALID_OPTIONS` when `size` (≤ 64 GiB), `seed`
 *   (< 2^32) or `fileIndex` (< 2^33) is not a whole number in its range.
 *
 * @example
 * ```ts
 * planChunkSizes(0, 1, 7); // []
 * planChunkSizes(4096, 1, 7); // [4096]
 * planChunkSizes(10 * 1024 * 1024 + 1, 1, 7); // ≈ 40 sizes, each 65 536…1 048 576 but the last
 * ```
 */
export function planChunkSizes(size: number, seed: number, fileIndex: number): number[] {
  assertWhole('size', size, MAX_PLANNED_SIZE);
  assertWhole('seed', seed, 2 ** 32 - 1);
  assertWhole('fileIndex', fileIndex, MAX_FILE_INDEX);
  const prng = new Prng(seed, STREAM.chunkPlan, fileIndex);
  const sizes: number[] = [];
  let left = size;
  while (left > 0) {
    // FastCDC takes the rest as one chunk once at most `min` bytes are left,
    // and when no cut point comes before the end.
    const cut = left <= CDC_CHUNK_SIZES.min ? left : Math.min(left, drawChunkSize(prng));
    sizes.push(cut);
    left -= cut;
  }
  return sizes;
}

/** One chunk of another file's plan, reused (a deduplicated chunk). */
export interface ChunkReuse {
  /** The plan of the file the chunk comes from. */
  readonly from: FileBytesPlan;
  /** 0-based position of the chunk in `from.chunkSizes`. */
  readonly index: number;
}

/** What {@link planFileBytes} turns into bytes: one file's chunk plan and its dedup choices. */
export interface FileBytesPlan {
  /** The dataset seed. */
  readonly seed: number;
  /** Names the file's own chunks: two files with the same seed and index get the same fresh bytes. */
  readonly fileIndex: number;
  /** The file size: the sum of `chunkSizes`. */
  readonly size: number;
  /** The chunk sizes, usually from {@link planChunkSizes}. */
  readonly chunkSizes: readonly number[];
  /** Leading magic of the file's own first chunk (so a one-chunk file sniffs as its type). @defaultValue 'other' */
  readonly kind?: BlobKind;
  /**
   * The dedup choice: per position, a chunk of another plan (or of this one,
   * earlier) to repeat instead of a fresh chunk; `null`/absent = fresh. The
   * reused chunk must have this position's size. Reuse is followed through
   * (a chunk reused from a chunk that is itself reused has the original's bytes).
   * @defaultValue every chunk fresh
   */
  readonly reuse?: readonly (ChunkReuse | null | undefined)[];
}

/** One chunk of a planned file. */
export interface PlannedChunk {
  /** 0-based position in the file. */
  readonly index: number;
  readonly bytes: Uint8Array;
  /** The fresh chunk these bytes are: `(fileIndex, chunkIndex)` of the plan that owns them. */
  readonly origin: { readonly fileIndex: number; readonly chunkIndex: number };
}

/** The plan and position whose fresh bytes chunk `index` of `plan` has, reuse followed through. */
function originOf(plan: FileBytesPlan, index: number): { plan: FileBytesPlan; index: number } {
  let at = { plan, index };
  for (let hops = 0; ; hops++) {
    const size = at.plan.chunkSizes[at.index];
    const reused = at.plan.reuse?.[at.index];
    if (reused === null || reused === undefined) return at;
    const target = reused.from.chunkSizes[reused.index];
    if (target === undefined || target !== size) {
      throw new DatasetError(
        'INVALID_OPTIONS',
        `chunk ${at.index} of file ${at.plan.fileIndex} (${String(size)} bytes) reuses chunk ${reused.index} of file ` +
          `${reused.from.fileIndex}, which ${target === undefined ? 'does not exist' : `is ${target} bytes`}; ` +
          'a reused chunk must exist and have the same size',
      );
    }
    if (hops >= MAX_REUSE_HOPS) {
      throw new DatasetError(
        'INVALID_OPTIONS',
        `chunk ${index} of file ${plan.fileIndex}: its reuse chain is longer than ${MAX_REUSE_HOPS} (a cycle?)`,
      );
    }
    at = { plan: reused.from, index: reused.index };
  }
}

function assertPlan(plan: FileBytesPlan): void {
  assertWhole('seed', plan.seed, 2 ** 32 - 1);
  assertWhole('fileIndex', plan.fileIndex, MAX_FILE_INDEX);
  assertWhole('size', plan.size, Number.MAX_SAFE_INTEGER);
  if (plan.chunkSizes.length > MAX_CHUNKS_PER_FILE) {
    throw new DatasetError('INVALID_OPTIONS', `a file may have at most ${MAX_CHUNKS_PER_FILE} chunks`);
  }
  let sum = 0;
  for (const [i, size] of plan.chunkSizes.entries()) {
    assertWhole(`chunkSizes[${i}] of file ${plan.fileIndex}`, size, Number.MAX_SAFE_INTEGER, 1);
    sum += size;
  }
  if (sum !== plan.size) {
    throw new DatasetError(
      'INVALID_OPTIONS',
      `chunkSizes of file ${plan.fileIndex} add up to ${sum}, not to its size ${plan.size}`,
    );
  }
  if (plan.reuse !== undefined && plan.reuse.length > plan.chunkSizes.length) {
    throw new DatasetError(
      'INVALID_OPTIONS',
      `reuse of file ${plan.fileIndex} has ${plan.reuse.length} entries for ${plan.chunkSizes.length} chunks`,
    );
  }
}

/** The PRNG index of fresh chunk `chunkIndex` of file `fileIndex`: distinct for every pair. */
function chunkSeed(fileIndex: number, chunkIndex: number): number {
  return fileIndex * MAX_CHUNKS_PER_FILE + chunkIndex;
}

/**
 * The bytes of chunk `index` of `plan`, alone (to write a large file one
 * chunk at a time). Deterministic: a fresh chunk is `blobBytes` of
 * `(seed, chunkBytes stream, (fileIndex, index))`, with the file's kind
 * magic on its first chunk and `other` on the rest; a reused chunk has
 * exactly the bytes of the chunk it names.
 *
 * @throws {DatasetError} `INVALID_OPTIONS` for a malformed plan (sizes that
 *   are not whole numbers ≥ 1 or do not add up to `size`, a reuse of another
 *   size or of a chunk that does not exist) or an index outside the plan.
 */
export function planChunkBytes(plan: FileBytesPlan, index: number): PlannedChunk {
  assertPlan(plan);
  if (!Number.isInteger(index) || index < 0 || index >= plan.chunkSizes.length) {
    throw new DatasetError(
      'INVALID_OPTIONS',
      `chunk index ${index} is outside file ${plan.fileIndex}'s ${plan.chunkSizes.length} chunks`,
    );
  }
  return chunkOf(plan, index, new Set([plan]));
}

/** Chunk `index` of a validated `plan`; `checked` holds the plans validated so far. */
function chunkOf(plan: FileBytesPlan, index: number, checked: Set<FileBytesPlan>): PlannedChunk {
  const origin = originOf(plan, index);
  if (!checked.has(origin.plan)) {
    assertPlan(origin.plan);
    checked.add(origin.plan);
  }
  const size = origin.plan.chunkSizes[origin.index] as number;
  const kind = origin.index === 0 ? (origin.plan.kind ?? 'other') : 'other';
  const bytes = blobBytes(
    origin.plan.seed,
    STREAM.chunkBytes,
    chunkSeed(origin.plan.fileIndex, origin.index),
    size,
    kind,
  );
  return { index, bytes, origin: { fileIndex: origin.plan.fileIndex, chunkIndex: origin.index } };
}

/**
 * Every chunk of a planned file, in order (their concatenation is the file;
 * memory ≈ the file size, so use {@link planChunkBytes} for one chunk at a
 * time). Two files share a chunk, byte for byte, where one's `reuse` names
 * the other's chunk; a file repeats a chunk where `reuse` names one of its
 * own earlier chunks. Everything else is distinct.
 *
 * @example
 * ```ts
 * const a: FileBytesPlan = { seed: 1, fileIndex: 0, size, chunkSizes: planChunkSizes(size, 1, 0), kind: 'pdf' };
 * // b = a's first chunk, then a fresh chunk of its own:
 * const b: FileBytesPlan = {
 *   seed: 1,
 *   fileIndex: 1,
 *   size: a.chunkSizes[0] + 70_000,
 *   chunkSizes: [a.chunkSizes[0], 70_000],
 *   reuse: [{ from: a, index: 0 }],
 * };
 * planFileBytes(b)[0].bytes; // the same bytes as planFileBytes(a)[0].bytes
 * ```
 */
export function planFileBytes(plan: FileBytesPlan): PlannedChunk[] {
  assertPlan(plan);
  const checked = new Set([plan]);
  return plan.chunkSizes.map((_, index) => chunkOf(plan, index, checked));
}
