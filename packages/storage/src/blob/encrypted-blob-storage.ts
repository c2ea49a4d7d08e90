import {
  type CipherGCM,
  createCipheriv,
  createDecipheriv,
  createSecretKey,
  KeyObject,
  randomBytes,
} from 'node:crypto';
import { Readable } from 'node:stream';
import type { ConsistencyCheck } from '@oxicloud/consistency';
import type {
  BlobEntry,
  BlobQuarantine,
  BlobStorage,
  BlobStorageHealth,
  ChunkManifestRecord,
  QuarantinedEntry,
  QuarantineListOptions,
} from '@oxicloud/tenants';
import { StorageError, toStorageError } from '../storage-error.js';
import { type BlobData, chunksOf } from './blob-data.js';
import { assertBlobHash, assertBlobSize } from './blob-hash.js';
import { parseStorageEncryptionKey, STORAGE_ENCRYPTION_KEY_BYTES } from './storage-encryption-config.js';

/** Bytes of the random nonce that opens every encrypted object. */
export const ENCRYPTION_NONCE_BYTES = 12;
/** Bytes of the GCM tag that closes every encrypted object. */
export const ENCRYPTION_TAG_BYTES = 16;
/** What encryption adds to every object: stored size = plaintext size + 28. */
export const ENCRYPTION_OVERHEAD_BYTES = ENCRYPTION_NONCE_BYTES + ENCRYPTION_TAG_BYTES;

const ALGORITHM = 'aes-256-gcm';
/** Plaintext is handed out in views of at most this many bytes. */
const READ_CHUNK_BYTES = 1024 * 1024;

/** Options of {@link EncryptedBlobStorage}. */
export interface EncryptedBlobStorageOptions {
  /** The store that holds the encrypted objects (`LocalFsBlobStorage`, `S3BlobStorage`, …). */
  readonly inner: BlobStorage;
  /**
   * The AES-256 key: a `KeyObject` of 32 bytes (what
   * `parseStorageEncryptionKey` returns), 32 raw bytes, or their standard
   * base64 (OxiCloud's `OXICLOUD_STORAGE_ENCRYPTION_KEY`).
   */
  readonly key: KeyObject | Uint8Array | string;
  /**
   * The consistency checks this store contributes, built from the storage
   * itself, so they see plaintext sizes and hash decrypted bytes (the server
   * wires `storage_consistency` here, not on the inner store).
   * @defaultValue `() => []`
   */
  readonly consistencyChecks?: (self: EncryptedBlobStorage) => readonly ConsistencyCheck[];
}

function invalidConfig(message: string): StorageError {
  return new StorageError('INVALID_CONFIG', `EncryptedBlobStorage: ${message}`);
}

function toKey(key: EncryptedBlobStorageOptions['key']): KeyObject {
  if (typeof key === 'string') return parseStorageEncryptionKey(key, 'EncryptedBlobStorage: key');
  if (key instanceof KeyObject) {
    if (key.type !== 'secret' || key.symmetricKeySize !== STORAGE_ENCRYPTION_KEY_BYTES) {
      throw invalidConfig(
        `key must be a secret KeyObject of 32 bytes, got a ${key.type} key${key.symmetricKeySize === undefined ? '' : ` of ${key.symmetricKeySize} bytes`}`,
      );
    }
    return key;
  }
  if (key instanceof Uint8Array) {
    if (key.byteLength !== STORAGE_ENCRYPTION_KEY_BYTES) {
      throw invalidConfig(`key must be exactly 32 bytes, got ${key.byteLength}`);
    }
    return createSecretKey(key);
  }
  throw invalidConfig('key must be a KeyObject, 32 bytes, or their standard base64');
}

/** The entry a caller sees for an object the inner store lists or heads: the plaintext's size, and the stored one. */
function plaintextEntry(entry: BlobEntry): BlobEntry {
  return {
    hash: entry.hash,
    size: Math.max(0, entry.size - ENCRYPTION_OVERHEAD_BYTES),
    storedSize: entry.storedSize ?? entry.size,
    ...(entry.modifiedAt === undefined ? {} : { modifiedAt: entry.modifiedAt }),
  };
}

async function readAll(stream: AsyncIterable<Uint8Array | string>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream)
    parts.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk));
  return Buffer.concat(parts);
}

/**
 * Encryption at rest over any {@link BlobStorage}, byte-compatible with
 * OxiCloud's `OXICLOUD_STORAGE_ENCRYPTION_ENABLED=true`: AES-256-GCM with a
 * random 96-bit nonce per write and empty AAD, each object stored as
 * `nonce (12) ‖ ciphertext ‖ tag (16)`.
 *
 * - Hash, object name and the `size` callers see (`head`, `list`, `put`'s
 *   announced size) are the plaintext's; the inner store holds `size + 28`
 *   bytes, which `head` and `list` report as `storedSize`.
 * - `get` reads and decrypts the object whole before it hands out a byte (a
 *   GCM tag can only be checked at the end): never unauthenticated bytes,
 *   and memory of twice the object (chunks are ≤ 1 MiB; a legacy whole-file
 *   blob can be larger, and OxiCloud decrypts it whole too). A wrong key, an
 *   altered object, or one shorter than 28 bytes rejects with
 *   `DECRYPTION_FAILED`.
 * - `put` encrypts as the bytes come (only the object's `size + 28` bytes
 *   go to the inner store, which keeps its atomicity), and checks the
 *   announced plaintext size itself (`SIZE_MISMATCH`, nothing stored).
 * - The {@link BlobQuarantine} methods are the inner store's: the
 *   ciphertext is moved as it is (and saved manifests, which hold no file
 *   content, are stored as they are); an inner store without a quarantine
 *   makes them reject with `INVALID_CONFIG`.
 * - `exists`, `delete` and `health` are the inner store's; `backend` is its
 *   name too (`local`, `s3`). Decrypted bytes are re-hashed by
 *   `StreamingBlobHasher` (what `createBlobHasher` picks for this store).
 *
 * @example
 * ```ts
 * import { EncryptedBlobStorage, LocalFsBlobStorage, storageEncryptionFromEnv } from '@oxicloud/storage';
 * const base = new LocalFsBlobStorage({ root: '/srv/oxicloud/storage' });
 * const encryption = storageEncryptionFromEnv(process.env);
 * const blobs = encryption === null ? base : new EncryptedBlobStorage({ inner: base, key: encryption.key });
 * ```
 */
export class EncryptedBlobStorage implements BlobStorage, BlobQuarantine {
  readonly backend: string;
  /** The store holding the ciphertext (for what only it can do, such as a local file's path). */
  readonly inner: BlobStorage;
  readonly #key: KeyObject;
  readonly #checksFactory: ((self: EncryptedBlobStorage) => readonly ConsistencyCheck[]) | undefined;
  #checks: readonly ConsistencyCheck[] | undefined;

  constructor(options: EncryptedBlobStorageOptions) {
    const inner = options?.inner;
    if (
      typeof inner?.put !== 'function' ||
      typeof inner.get !== 'function' ||
      typeof inner.list !== 'function'
    ) {
      throw invalidConfig('inner must be a BlobStorage (the store that holds the encrypted objects)');
    }
    if (options.consistencyChecks !== undefined && typeof options.consistencyChecks !== 'function') {
      throw invalidConfig('consistencyChecks must be a function (self) => ConsistencyCheck[] when given');
    }
    this.inner = inner;
    this.backend = inner.backend;
    this.#key = toKey(options.key);
    this.#checksFactory = options.consistencyChecks;
  }

  subsystem(): string {
    return 'blobs';
  }

  consistencyChecks(): readonly ConsistencyCheck[] {
    this.#checks ??= this.#checksFactory?.(this) ?? [];
    return this.#checks;
  }

  async put(hash: string, data: BlobData, size?: number): Promise<void> {
    assertBlobHash(hash);
    assertBlobSize(size);
    const nonce = randomBytes(ENCRYPTION_NONCE_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.#key, nonce, { authTagLength: ENCRYPTION_TAG_BYTES });
    if (data instanceof Uint8Array) {
      if (size !== undefined && data.byteLength !== size)
        throw sizeMismatch(hash, String(data.byteLength), size);
      const sealed = Buffer.concat([nonce, cipher.update(data), cipher.final(), cipher.getAuthTag()]);
      await this.inner.put(hash, sealed, sealed.byteLength);
      return;
    }
    await this.inner.put(
      hash,
      sealedChunks(hash, data, size, nonce, cipher),
      size === undefined ? undefined : size + ENCRYPTION_OVERHEAD_BYTES,
    );
  }

  async get(hash: string): Promise<NodeJS.ReadableStream & AsyncIterable<Uint8Array>> {
    assertBlobHash(hash);
    const stream = await this.inner.get(hash);
    let stored: Buffer;
    try {
      stored = await readAll(stream);
    } catch (error) {
      throw toStorageError(error, `reading encrypted blob ${hash} from the ${this.backend} backend failed`);
    }
    const plaintext = this.#open(hash, stored);
    const views: Buffer[] = [];
    for (let at = 0; at < plaintext.byteLength; at += READ_CHUNK_BYTES) {
      views.push(plaintext.subarray(at, at + READ_CHUNK_BYTES));
    }
    return Readable.from(views, { objectMode: false });
  }

  async head(hash: string): Promise<BlobEntry | null> {
    assertBlobHash(hash);
    const entry = await this.inner.head(hash);
    return entry === null ? null : plaintextEntry(entry);
  }

  async exists(hash: string): Promise<boolean> {
    assertBlobHash(hash);
    return this.inner.exists(hash);
  }

  async delete(hash: string): Promise<boolean> {
    assertBlobHash(hash);
    return this.inner.delete(hash);
  }

  async list(options: { startAfter?: string | null; limit: number }): Promise<BlobEntry[]> {
    return (await this.inner.list(options)).map(plaintextEntry);
  }

  async health(): Promise<BlobStorageHealth> {
    return this.inner.health();
  }

  quarantineBlob(hash: string): Promise<boolean> {
    assertBlobHash(hash);
    return this.#innerQuarantine().quarantineBlob(hash);
  }

  restoreBlob(hash: string): Promise<boolean> {
    assertBlobHash(hash);
    return this.#innerQuarantine().restoreBlob(hash);
  }

  listQuarantinedBlobs(options: QuarantineListOptions): Promise<QuarantinedEntry[]> {
    return this.#innerQuarantine().listQuarantinedBlobs(options);
  }

  purgeQuarantinedBlob(hash: string): Promise<boolean> {
    assertBlobHash(hash);
    return this.#innerQuarantine().purgeQuarantinedBlob(hash);
  }

  saveManifest(record: ChunkManifestRecord): Promise<void> {
    return this.#innerQuarantine().saveManifest(record);
  }

  listQuarantinedManifests(options: QuarantineListOptions): Promise<QuarantinedEntry[]> {
    return this.#innerQuarantine().listQuarantinedManifests(options);
  }

  readQuarantinedManifest(fileHash: string): Promise<ChunkManifestRecord | null> {
    return this.#innerQuarantine().readQuarantinedManifest(fileHash);
  }

  purgeQuarantinedManifest(fileHash: string): Promise<boolean> {
    return this.#innerQuarantine().purgeQuarantinedManifest(fileHash);
  }

  #innerQuarantine(): BlobQuarantine {
    const inner = this.inner as Partial<BlobQuarantine>;
    if (typeof inner.quarantineBlob !== 'function') {
      throw new StorageError(
        'INVALID_CONFIG',
        `EncryptedBlobStorage: the inner ${this.backend} store has no quarantine (LocalFsBlobStorage and S3BlobStorage have one)`,
      );
    }
    return inner as BlobQuarantine;
  }

  /** Closes the inner store when it can be closed (an S3 client's sockets). */
  close(): void {
    (this.inner as { close?: () => void }).close?.();
  }

  /** Authenticates and decrypts a whole stored object; never returns bytes that did not authenticate. */
  #open(hash: string, stored: Buffer): Buffer {
    if (stored.byteLength < ENCRYPTION_OVERHEAD_BYTES) {
      throw new StorageError(
        'DECRYPTION_FAILED',
        `blob ${hash} on the ${this.backend} backend is ${stored.byteLength} bytes, shorter than the ` +
          `${ENCRYPTION_OVERHEAD_BYTES} bytes of nonce and tag every encrypted object has: it is truncated or was never encrypted; no bytes were returned`,
      );
    }
    const nonce = stored.subarray(0, ENCRYPTION_NONCE_BYTES);
    const tag = stored.subarray(stored.byteLength - ENCRYPTION_TAG_BYTES);
    const ciphertext = stored.subarray(ENCRYPTION_NONCE_BYTES, stored.byteLength - ENCRYPTION_TAG_BYTES);
    try {
      const decipher = createDecipheriv(ALGORITHM, this.#key, nonce, { authTagLength: ENCRYPTION_TAG_BYTES });
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    } catch (error) {
      throw new StorageError(
        'DECRYPTION_FAILED',
        `blob ${hash} on the ${this.backend} backend does not decrypt (its AES-256-GCM tag does not match): ` +
          'the storage encryption key is not the one it was written with, or the stored bytes were altered; no bytes were returned',
        { cause: error },
      );
    }
  }
}

function sizeMismatch(hash: string, got: string, size: number): StorageError {
  return new StorageError(
    'SIZE_MISMATCH',
    `blob ${hash}: got ${got} bytes but the caller announced ${size}; nothing was stored`,
  );
}

/** `nonce ‖ ciphertext ‖ tag` of `data`, checked against the announced plaintext `size` before the tag goes out. */
async function* sealedChunks(
  hash: string,
  data: BlobData,
  size: number | undefined,
  nonce: Buffer,
  cipher: CipherGCM,
): AsyncGenerator<Uint8Array> {
  yield nonce;
  let seen = 0;
  for await (const chunk of chunksOf(data)) {
    seen += chunk.byteLength;
    if (size !== undefined && seen > size) throw sizeMismatch(hash, `more than ${size}`, size);
    const sealed = cipher.update(chunk);
    if (sealed.byteLength > 0) yield sealed;
  }
  if (size !== undefined && seen !== size) throw sizeMismatch(hash, String(seen), size);
  yield Buffer.concat([cipher.final(), cipher.getAuthTag()]);
}
