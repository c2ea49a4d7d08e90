import { isBlobHash } from '../blob/blob-hash.js';
import { BLAKE3_EMPTY } from '../hashing/blake3.js';
import { CDC_CHUNK_SIZES } from './file-content.js';

/**
 * The columns of a `storage.chunk_manifests` row that decide its shape,
 * as a reader maps them (bigints as numbers, `text[]` as arrays).
 */
export interface ChunkManifest {
  /** `file_hash`: BLAKE3 hex of the whole plaintext. */
  readonly fileHash: string;
  /** `chunk_hashes`: ordered, one entry per occurrence (repeats are possible). */
  readonly chunkHashes: readonly string[];
  /** `chunk_sizes`: aligned with `chunkHashes`. */
  readonly chunkSizes: readonly number[];
  /** `total_size`. */
  readonly totalSize: number;
  /** `chunk_count`. */
  readonly chunkCount: number;
}

/**
 * The codes of {@link ManifestShapeProblem}, one per rule of OxiCloud §12
 * item 13 (plus the two file-hash rules §5 makes checkable without reading
 * bytes):
 *
 * - `total_size_mismatch`: Σ `chunk_sizes` ≠ `total_size`.
 * - `chunk_count_mismatch`: `chunk_count`, cardinality(`chunk_hashes`) and
 *   cardinality(`chunk_sizes`) are not all equal.
 * - `chunk_too_large`: a chunk is over {@link CDC_CHUNK_SIZES}`.max`
 *   (1 048 576 bytes).
 * - `invalid_chunk_size`: a chunk size is not a non-negative integer.
 * - `invalid_hash`: `file_hash` or a `chunk_hashes` entry is not 64
 *   lowercase hex characters.
 * - `empty_file_hash_mismatch`: the manifest has no chunks but its
 *   `file_hash` is not the BLAKE3 of the empty input.
 * - `single_chunk_hash_mismatch`: the manifest has one chunk but its
 *   `file_hash` differs from that chunk's hash (one-chunk files share the
 *   hash: same bytes).
 */
export const MANIFEST_SHAPE_PROBLEM_CODES = [
  'total_size_mismatch',
  'chunk_count_mismatch',
  'chunk_too_large',
  'invalid_chunk_size',
  'invalid_hash',
  'empty_file_hash_mismatch',
  'single_chunk_hash_mismatch',
] as const;

/** One of {@link MANIFEST_SHAPE_PROBLEM_CODES}. */
export type ManifestShapeProblemCode = (typeof MANIFEST_SHAPE_PROBLEM_CODES)[number];

/**
 * One way a manifest breaks its shape rules, with the numbers that show it
 * (callers branch on `code` and read the fields; there is no message to
 * parse). `index` is 0-based into `chunk_hashes` / `chunk_sizes`.
 */
export type ManifestShapeProblem =
  | {
      readonly code: 'total_size_mismatch';
      readonly totalSize: number;
      /** Σ of the chunk sizes that are valid numbers. */
      readonly chunkSizesSum: number;
    }
  | {
      readonly code: 'chunk_count_mismatch';
      readonly chunkCount: number;
      readonly chunkHashesCount: number;
      readonly chunkSizesCount: number;
    }
  | { readonly code: 'chunk_too_large'; readonly index: number; readonly size: number; readonly max: number }
  | { readonly code: 'invalid_chunk_size'; readonly index: number; readonly size: number }
  | { readonly code: 'invalid_hash'; readonly field: 'file_hash' }
  | { readonly code: 'invalid_hash'; readonly field: 'chunk_hashes'; readonly index: number }
  | { readonly code: 'empty_file_hash_mismatch'; readonly expected: string }
  | { readonly code: 'single_chunk_hash_mismatch'; readonly chunkHash: string };

/**
 * What breaks OxiCloud §12 item 13 in one manifest row, in a fixed order
 * (`file_hash`, the counts, the chunk sizes by index, the total, the chunk
 * hashes by index, the file-hash rules); `[]` when the shape is right.
 * Pure: no blob or database call. Whether `file_hash` is the BLAKE3 of the
 * bytes needs a byte scan (`hashFileContent`); only the empty and one-chunk
 * cases are decidable here.
 *
 * @example
 * ```ts
 * import { manifestShapeProblems } from '@oxicloud/storage';
 * manifestShapeProblems({ fileHash, chunkHashes: [a, b], chunkSizes: [70_000, 5], totalSize: 70_004, chunkCount: 2 });
 * // [{ code: 'total_size_mismatch', totalSize: 70_004, chunkSizesSum: 70_005 }]
 * ```
 */
export function manifestShapeProblems(manifest: ChunkManifest): ManifestShapeProblem[] {
  const { fileHash, chunkHashes, chunkSizes, totalSize, chunkCount } = manifest;
  const problems: ManifestShapeProblem[] = [];
  const hashOk = isBlobHash(fileHash);
  if (!hashOk) problems.push({ code: 'invalid_hash', field: 'file_hash' });
  if (chunkCount !== chunkHashes.length || chunkCount !== chunkSizes.length) {
    problems.push({
      code: 'chunk_count_mismatch',
      chunkCount,
      chunkHashesCount: chunkHashes.length,
      chunkSizesCount: chunkSizes.length,
    });
  }
  let sum = 0;
  chunkSizes.forEach((size, index) => {
    if (!Number.isSafeInteger(size) || size < 0) {
      problems.push({ code: 'invalid_chunk_size', index, size });
      return;
    }
    sum += size;
    if (size > CDC_CHUNK_SIZES.max) {
      problems.push({ code: 'chunk_too_large', index, size, max: CDC_CHUNK_SIZES.max });
    }
  });
  if (sum !== totalSize) problems.push({ code: 'total_size_mismatch', totalSize, chunkSizesSum: sum });
  chunkHashes.forEach((hash, index) => {
    if (!isBlobHash(hash)) problems.push({ code: 'invalid_hash', field: 'chunk_hashes', index });
  });
  if (hashOk && chunkHashes.length === 0 && fileHash !== BLAKE3_EMPTY) {
    problems.push({ code: 'empty_file_hash_mismatch', expected: BLAKE3_EMPTY });
  }
  const only = chunkHashes.length === 1 ? chunkHashes[0] : undefined;
  if (hashOk && only !== undefined && isBlobHash(only) && only !== fileHash) {
    problems.push({ code: 'single_chunk_hash_mismatch', chunkHash: only });
  }
  return problems;
}
