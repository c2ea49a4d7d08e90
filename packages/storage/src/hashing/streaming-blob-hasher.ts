import type { BlobHasher, BlobStorage, StoredBlobDigest } from '@oxicloud/tenants';
import { assertBlobHash } from '../blob/blob-hash.js';
import { LocalFsBlobStorage } from '../blob/local-fs-blob-storage.js';
import type { Blake3WorkerPool } from './blake3-worker-pool.js';
import { LocalFsBlobHasher } from './local-fs-blob-hasher.js';

/**
 * {@link BlobHasher} for any {@link BlobStorage} (S3 in practice): streams
 * the blob through `storage.get()` into a pool worker. The event loop only
 * moves chunks; the hashing runs in the worker.
 */
export class StreamingBlobHasher implements BlobHasher {
  readonly #storage: BlobStorage;
  readonly #pool: Blake3WorkerPool;

  constructor(storage: BlobStorage, pool: Blake3WorkerPool) {
    this.#storage = storage;
    this.#pool = pool;
  }

  async hashStoredBlob(hash: string, signal?: AbortSignal): Promise<StoredBlobDigest> {
    assertBlobHash(hash);
    signal?.throwIfAborted();
    const stream = await this.#storage.get(hash);
    const destroy = () => {
      const candidate = stream as { destroy?: (error?: Error) => void };
      candidate.destroy?.();
    };
    signal?.addEventListener('abort', destroy, { once: true });
    try {
      return await this.#pool.hashStream(stream, signal);
    } finally {
      signal?.removeEventListener('abort', destroy);
      destroy();
    }
  }
}

/**
 * The best {@link BlobHasher} for `storage`: {@link LocalFsBlobHasher} for a
 * plain {@link LocalFsBlobStorage} (workers read files directly), else
 * {@link StreamingBlobHasher}, which hashes what `get` yields: for an
 * `EncryptedBlobStorage` (even over a local disk) that is the decrypted
 * plaintext, whose hash is the key.
 */
export function createBlobHasher(storage: BlobStorage, pool: Blake3WorkerPool): BlobHasher {
  return storage instanceof LocalFsBlobStorage
    ? new LocalFsBlobHasher(storage, pool)
    : new StreamingBlobHasher(storage, pool);
}
