import type { ChunkManifestRecord } from '@oxicloud/tenants';
import { StorageError } from '../storage-error.js';
import { isBlobHash } from './blob-hash.js';

/** The bytes a saved manifest is stored as: UTF-8 JSON, one object. */
export function encodeManifestRecord(record: ChunkManifestRecord): Buffer {
  return Buffer.from(
    JSON.stringify({
      file_hash: record.fileHash,
      chunk_hashes: record.chunkHashes,
      chunk_sizes: record.chunkSizes,
      total_size: record.totalSize,
      content_type: record.contentType,
    }),
    'utf8',
  );
}

/**
 * A saved manifest read back, checked: it must name `fileHash`, its chunks
 * must be hashes with non-negative integer sizes, aligned, summing to
 * `total_size`.
 *
 * @throws StorageError `BACKEND_ERROR` naming `where` when the bytes are not such a record.
 */
export function decodeManifestRecord(fileHash: string, bytes: Buffer, where: string): ChunkManifestRecord {
  const bad = (why: string, cause?: unknown) =>
    new StorageError(
      'BACKEND_ERROR',
      `saved manifest ${where} is not a manifest record of ${fileHash}: ${why}`,
      cause === undefined ? undefined : { cause },
    );
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw bad('not JSON', error);
  }
  const r = value as Record<string, unknown>;
  if (typeof r !== 'object' || r === null || r['file_hash'] !== fileHash) throw bad('file_hash differs');
  const hashes = r['chunk_hashes'];
  const sizes = r['chunk_sizes'];
  const total = r['total_size'];
  const contentType = r['content_type'];
  if (!Array.isArray(hashes) || !hashes.every((h) => typeof h === 'string' && isBlobHash(h))) {
    throw bad('chunk_hashes must be a list of 64-hex hashes');
  }
  if (
    !Array.isArray(sizes) ||
    sizes.length !== hashes.length ||
    !sizes.every((s) => Number.isSafeInteger(s) && (s as number) >= 0)
  ) {
    throw bad('chunk_sizes must be as many non-negative integers as there are chunks');
  }
  const sum = (sizes as number[]).reduce((a, b) => a + b, 0);
  if (total !== sum) throw bad(`total_size ${String(total)} is not the sum of chunk_sizes (${sum})`);
  if (contentType !== null && typeof contentType !== 'string')
    throw bad('content_type must be a string or null');
  return {
    fileHash,
    chunkHashes: hashes as string[],
    chunkSizes: sizes as number[],
    totalSize: sum,
    contentType: contentType as string | null,
  };
}
