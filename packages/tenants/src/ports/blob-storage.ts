import type { StatefulAdapter } from '@oxicloud/consistency';

/** One stored blob as a backend lists it. */
export interface BlobEntry {
  /** BLAKE3 hex of the bytes (64 lowercase hex characters). */
  readonly hash: string;
  /** Plaintext bytes: what `get` yields and `storage.blobs.size` records. */
  readonly size: number;
  /**
   * Bytes the backend actually holds for the object, when that differs from
   * `size`: an encrypted store holds `size + 28` (nonce and tag). Absent =
   * the same as `size`. An encrypted object shorter than 28 bytes reports
   * `size` 0 and its true `storedSize` (reading it fails).
   */
  readonly storedSize?: number;
  /** When the bytes were written (file mtime, S3 LastModified), if the backend knows. */
  readonly modifiedAt?: Date;
}

/** Health of a backend, for /healthz and the storage checks. */
export interface BlobStorageHealth {
  readonly ok: boolean;
  readonly backend: string;
  readonly message?: string;
}

/**
 * Content-addressed blob storage: key = BLAKE3 hex of the bytes. Every key
 * must be 64 lowercase hex characters; anything else is refused before any
 * file or network call. A state-owning port: it extends `StatefulAdapter`,
 * so an implementation must declare its subsystem and its consistency checks.
 */
export interface BlobStorage extends StatefulAdapter {
  /** Short backend name: `local`, `s3`. */
  readonly backend: string;
  /** Writes the bytes under `hash` (atomic: readers never see a partial blob). */
  put(
    hash: string,
    data: Uint8Array | AsyncIterable<Uint8Array> | NodeJS.ReadableStream,
    size?: number,
  ): Promise<void>;
  /** Streams the bytes; rejects with code `NOT_FOUND` when absent. */
  get(hash: string): Promise<NodeJS.ReadableStream & AsyncIterable<Uint8Array>>;
  /** Size and time of a stored blob, or `null` when absent. */
  head(hash: string): Promise<BlobEntry | null>;
  exists(hash: string): Promise<boolean>;
  /** Deletes the bytes; deleting an absent blob is not an error. Returns whether it existed. */
  delete(hash: string): Promise<boolean>;
  /** Lists up to `limit` blobs in ascending hash order, strictly after `startAfter` when given. */
  list(options: { startAfter?: string | null; limit: number }): Promise<BlobEntry[]>;
  health(): Promise<BlobStorageHealth>;
}
