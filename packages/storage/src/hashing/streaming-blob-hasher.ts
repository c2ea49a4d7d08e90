import type {
  BlobSequenceHasher,
  BlobStorage,
  StoredBlobDigest,
  StoredSequenceDigest,
} from '@oxicloud/tenants';
import { assertBlobHash } from '../blob/blob-hash.js';
import { LocalFsBlobStorage } from '../blob/local-fs-blob-storage.js';
import type { Blake3WorkerPool } from './blake3-worker-pool.js';
import { LocalFsBlobHasher } from './local-fs-blob-hasher.js';

type BlobStream = Awaited<ReturnType<BlobStorage['get']>>;

function destroyStream(stream: BlobStream | undefined): void {
  (stream as { destroy?: (error?: Error) => void } | undefined)?.destroy?.();
}

/**
 * {@link BlobSequenceHasher} for any {@link BlobStorage} (S3, an encrypted
 * store, in practice): streams the blobs through `storage.get()` into a pool
 * worker. The event loop only moves chunks; the hashing runs in the worker.
 */
export class StreamingBlobHasher implements BlobSequenceHasher {
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

  async hashStoredSequence(hashes: readonly string[], signal?: AbortSignal): Promise<StoredSequenceDigest> {
    for (const hash of hashes) assertBlobHash(hash);
    signal?.throwIfAborted();
    const storage = this.#storage;
    // One blob open at a time, opened when the one before it has been read to its end.
    let current: BlobStream | undefined;
    async function* bytes(): AsyncGenerator<Uint8Array> {
      for (const hash of hashes) {
        current = await storage.get(hash);
        try {
          yield* current;
        } finally {
          destroyStream(current);
          current = undefined;
        }
      }
    }
    const destroy = () => destroyStream(current);
    signal?.addEventListener('abort', destroy, { once: true });
    try {
      const digest = await this.#pool.hashStream(bytes(), signal);
      return { hash: digest.hash, size: digest.size };
    } finally {
      signal?.removeEventListener('abort', destroy);
      destroy();
    }
  }
}

/**
 * The best hasher for `storage` (a {@link BlobSequenceHasher}, so also a
 * `BlobHasher`): {@link LocalFsBlobHasher} for a plain
 * {@link LocalFsBlobStorage} (workers read files directly), else
 * {@link StreamingBlobHasher}, which hashes what `get` yields: for an
 * `EncryptedBlobStorage` (even over a local disk) that is the decrypted
 * plaintext, whose hash is the key.
 */
export function createBlobHasher(storage: BlobStorage, pool: Blake3WorkerPool): BlobSequenceHasher {
  return storage instanceof LocalFsBlobStorage
    ? new LocalFsBlobHasher(storage, pool)
    : new StreamingBlobHasher(storage, pool);
}
