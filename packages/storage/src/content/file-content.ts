import { StorageError } from '../storage-error.js';
import type { ChunkManifest } from './manifest-shape.js';

/**
 * The chunk sizes of OxiCloud's content-defined chunking (FastCDC v2020 in
 * `DedupService::store_from_stream`), in bytes. Every chunk is ≤ `max` and
 * every chunk except a file's last is ≥ `min`, so a file under `min` bytes is
 * one chunk; `avg` is the size the cut points aim at.
 */
export const CDC_CHUNK_SIZES = { min: 65_536, avg: 262_144, max: 1_048_576 } as const;

/** One entry of a manifest: a blob object and the plaintext size the manifest declares for it. */
export interface ContentChunk {
  /** BLAKE3 hex of the chunk's bytes: the blob object's key. */
  readonly hash: string;
  /** Declared plaintext size in bytes (`chunk_sizes[i]`). */
  readonly size: number;
}

/**
 * A file's content read through a `storage.chunk_manifests` row: the bytes
 * are the blob objects `chunks[0..n-1]`, concatenated in order. A hash may
 * repeat (one entry per occurrence). A one-chunk file has `fileHash ===
 * chunks[0].hash`; the empty file has no chunks, `totalSize` 0 and
 * `fileHash` = `BLAKE3_EMPTY`.
 */
export interface ManifestFileContent {
  readonly kind: 'manifest';
  /** BLAKE3 hex of the whole plaintext (`chunk_manifests.file_hash`, = `files.blob_hash`). */
  readonly fileHash: string;
  /** The chunks in file order. */
  readonly chunks: readonly ContentChunk[];
  /** Declared size of the whole file (`total_size`); must equal the sum of the chunk sizes. */
  readonly totalSize: number;
}

/** A pre-CDC file: the bytes are the one blob object named `hash` (= `files.blob_hash`). */
export interface LegacyFileContent {
  readonly kind: 'legacy';
  readonly hash: string;
  /** Declared size in bytes (`storage.blobs.size`). */
  readonly size: number;
}

/**
 * How a file maps to bytes (OxiCloud §5): through a chunk manifest when one
 * has `file_hash = files.blob_hash`, else the legacy whole-file blob.
 * Read it with `openFileContent`, hash it with `hashFileContent`.
 *
 * @example
 * ```ts
 * import type { FileContent } from '@oxicloud/storage';
 * const twoChunks: FileContent = {
 *   kind: 'manifest',
 *   fileHash,
 *   chunks: [{ hash: a, size: 300_000 }, { hash: b, size: 12 }],
 *   totalSize: 300_012,
 * };
 * const legacy: FileContent = { kind: 'legacy', hash: fileHash, size: 42 };
 * ```
 */
export type FileContent = ManifestFileContent | LegacyFileContent;

/** The declared size of the whole file: `totalSize` of a manifest, `size` of a legacy blob. */
export function fileContentSize(content: FileContent): number {
  return content.kind === 'manifest' ? content.totalSize : content.size;
}

/**
 * The {@link FileContent} of a `chunk_manifests` row: `chunkHashes[i]` paired
 * with `chunkSizes[i]`. `chunkCount` and the other shape rules are not
 * checked here (run `manifestShapeProblems` for them); `openFileContent`
 * refuses a content whose sizes do not add up.
 *
 * @throws {StorageError} `INVALID_ARGUMENT` when `chunkHashes` and `chunkSizes`
 *   differ in length, so the chunks cannot be paired.
 */
export function manifestContent(manifest: ChunkManifest): ManifestFileContent {
  const { fileHash, chunkHashes, chunkSizes, totalSize } = manifest;
  if (chunkHashes.length !== chunkSizes.length) {
    throw new StorageError(
      'INVALID_ARGUMENT',
      `manifest ${fileHash}: ${chunkHashes.length} chunk hashes but ${chunkSizes.length} chunk sizes; ` +
        'the two arrays must be aligned (one size per hash)',
    );
  }
  return {
    kind: 'manifest',
    fileHash,
    chunks: chunkHashes.map((hash, i) => ({ hash, size: chunkSizes[i] as number })),
    totalSize,
  };
}
