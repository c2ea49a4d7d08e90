import type { BlobSequenceHasher, StoredBlobDigest, StoredSequenceDigest } from '@oxicloud/tenants';
import type { LocalFsBlobStorage } from '../blob/local-fs-blob-storage.js';
import { StorageError } from '../storage-error.js';
import type { Blake3WorkerPool } from './blake3-worker-pool.js';

/**
 * {@link BlobSequenceHasher} for {@link LocalFsBlobStorage}: a pool worker
 * opens and reads the blobs' files itself, so no bytes cross the event loop.
 */
export class LocalFsBlobHasher implements BlobSequenceHasher {
  readonly #storage: LocalFsBlobStorage;
  readonly #pool: Blake3WorkerPool;

  constructor(storage: LocalFsBlobStorage, pool: Blake3WorkerPool) {
    this.#storage = storage;
    this.#pool = pool;
  }

  async hashStoredBlob(hash: string, signal?: AbortSignal): Promise<StoredBlobDigest> {
    const path = this.#storage.pathOf(hash); // validates the key before any file call
    try {
      return await this.#pool.hashFile(path, signal);
    } catch (error) {
      if (error instanceof StorageError && error.code === 'NOT_FOUND') {
        throw new StorageError('NOT_FOUND', `blob ${hash} does not exist under ${this.#storage.root}`, {
          cause: error,
        });
      }
      throw error;
    }
  }

  async hashStoredSequence(hashes: readonly string[], signal?: AbortSignal): Promise<StoredSequenceDigest> {
    const paths = hashes.map((hash) => this.#storage.pathOf(hash)); // every key validated before any read
    try {
      const digest = await this.#pool.hashFiles(paths, signal);
      return { hash: digest.hash, size: digest.size };
    } catch (error) {
      if (error instanceof StorageError && error.code === 'NOT_FOUND') {
        throw new StorageError(
          'NOT_FOUND',
          `a blob of a sequence of ${hashes.length} does not exist under ${this.#storage.root}: ${error.message}`,
          { cause: error },
        );
      }
      throw error;
    }
  }
}
