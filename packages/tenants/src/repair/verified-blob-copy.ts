import { createBLAKE3 } from 'hash-wasm';
import { destroyStream, errorCode } from '../blob-stream.js';
import type { BlobHasher, StoredBlobDigest } from '../ports/blob-hasher.js';
import type { BlobStorage } from '../ports/blob-storage.js';

/** What {@link copyVerifiedBlob} did. */
export type VerifiedCopy =
  | { readonly status: 'copied'; readonly size: number }
  /** The bytes read do not hash to the key (or have another size): nothing was stored. */
  | { readonly status: 'mismatch'; readonly hash: string; readonly size: number }
  /** The copy is gone from `from`: nothing was stored. */
  | { readonly status: 'absent' };

/**
 * Copies the bytes stored under `hash` in `from` into `to`, and lets `to`
 * keep them only if they are the right ones: the chunks are hashed (BLAKE3)
 * as they pass, and after the last one the stream fails instead of ending
 * when the digest is not `hash` or the size not `size`. Both backends' `put`
 * store nothing when their data stream fails (local: the temp file is
 * removed before the rename; S3: the request is aborted while the last
 * chunk is still held back), so bytes already under `hash` in `to` (corrupt
 * ones being replaced) are only replaced by verified bytes.
 */
export async function copyVerifiedBlob(
  from: Pick<BlobStorage, 'get'>,
  to: Pick<BlobStorage, 'put'>,
  hash: string,
  size: number,
): Promise<VerifiedCopy> {
  let stream: Awaited<ReturnType<BlobStorage['get']>>;
  try {
    stream = await from.get(hash);
  } catch (error) {
    if (errorCode(error) === 'NOT_FOUND') return { status: 'absent' };
    throw error;
  }
  const hasher = await createBLAKE3();
  let seen = 0;
  let mismatch: { hash: string; size: number } | null = null;
  async function* verified(): AsyncGenerator<Uint8Array> {
    for await (const chunk of stream) {
      seen += chunk.byteLength;
      hasher.update(chunk);
      yield chunk;
    }
    const digest = hasher.digest('hex');
    if (digest !== hash || seen !== size) {
      mismatch = { hash: digest, size: seen };
      throw new Error(`the bytes read hash to ${digest} (${seen} bytes), not to ${hash} (${size} bytes)`);
    }
  }
  try {
    await to.put(hash, verified(), size);
  } catch (error) {
    // A longer copy stops past `size` bytes (put refuses it): also a mismatch.
    // A put that failed after a short read is a failed transfer: rethrown.
    if (mismatch !== null || seen > size) {
      const found = mismatch ?? { hash: 'unknown (longer than the row)', size: seen };
      return { status: 'mismatch', ...found };
    }
    throw error;
  } finally {
    destroyStream(stream);
  }
  return { status: 'copied', size: seen };
}

/** The digest of the bytes stored under `hash`, or `null` when there are none. */
export async function storedDigest(hasher: BlobHasher, hash: string): Promise<StoredBlobDigest | null> {
  try {
    return await hasher.hashStoredBlob(hash);
  } catch (error) {
    if (errorCode(error) === 'NOT_FOUND') return null;
    throw error;
  }
}
