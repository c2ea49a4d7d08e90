import { Readable } from 'node:stream';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
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
import { assertBlobSize, assertListLimit, normaliseStartAfter } from './blob-hash.js';
import {
  blobKeyStartAfter,
  blobObjectKey,
  hashOfBlobObjectKey,
  hashOfQuarantinedManifestName,
  QUARANTINED_MANIFESTS_DIR,
  quarantinedManifestName,
  S3_QUARANTINE_PREFIX,
} from './blob-layout.js';
import { decodeManifestRecord, encodeManifestRecord } from './manifest-record-codec.js';

type S3Sdk = typeof import('@aws-sdk/client-s3');

/** Options of {@link S3BlobStorage}. */
export interface S3BlobStorageOptions {
  readonly bucket: string;
  /** Signing region; `us-east-1` suits most S3-compatible servers (MinIO, Garage, s3rver). */
  readonly region: string;
  /** Endpoint URL of an S3-compatible server (`http://127.0.0.1:9000`); omit for AWS. */
  readonly endpoint?: string;
  /** Static credentials; omit both to use the SDK's default chain (env, profile, instance role). */
  readonly accessKeyId?: string;
  readonly secretAccessKey?: string;
  /** `http://host/bucket/key` addressing instead of `http://bucket.host/key` (most self-hosted servers). @defaultValue false */
  readonly forcePathStyle?: boolean;
  /**
   * Key prefix of every blob: the key of `hash` is `prefix + '<aa>/<hash>.blob'`.
   * OxiCloud has no prefix option (its keys sit at the bucket root), so leave
   * it empty to read OxiCloud's bucket; a prefix (ending in `/`) is for a
   * bucket shared with other data, such as a test's.
   * @defaultValue '' (none)
   */
  readonly prefix?: string;
  /** Attempts per request, retries included (the SDK's `maxAttempts`). @defaultValue 3 */
  readonly maxAttempts?: number;
  /**
   * The consistency checks this backend contributes, built from the storage
   * itself (the server wires `storage_consistency` here).
   * @defaultValue `() => []`
   */
  readonly consistencyChecks?: (self: S3BlobStorage) => readonly ConsistencyCheck[];
}

/** S3 returns at most this many keys per ListObjectsV2 page. */
const S3_MAX_KEYS = 1000;

function httpStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('$metadata' in error)) return undefined;
  const metadata = (error as { $metadata?: { httpStatusCode?: number } }).$metadata;
  return metadata?.httpStatusCode;
}

function isNotFound(error: unknown): boolean {
  const name = error instanceof Error ? error.name : undefined;
  return name === 'NotFound' || name === 'NoSuchKey' || httpStatus(error) === 404;
}

function invalidConfig(message: string): StorageError {
  return new StorageError('INVALID_CONFIG', `S3BlobStorage: ${message}`);
}

function validate(options: S3BlobStorageOptions): void {
  if (typeof options?.bucket !== 'string' || options.bucket.trim() === '') {
    throw invalidConfig(`bucket must be a non-empty bucket name, got ${JSON.stringify(options?.bucket)}`);
  }
  if (typeof options.region !== 'string' || options.region.trim() === '') {
    throw invalidConfig(
      `region must be a non-empty region name (us-east-1 suits most S3-compatible servers), got ${JSON.stringify(options.region)}`,
    );
  }
  if (options.endpoint !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(options.endpoint);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw invalidConfig(
        `endpoint must be an http:// or https:// URL such as http://127.0.0.1:9000, got ${JSON.stringify(options.endpoint)}`,
      );
    }
  }
  if ((options.accessKeyId === undefined) !== (options.secretAccessKey === undefined)) {
    throw invalidConfig(
      'accessKeyId and secretAccessKey go together: give both, or neither to use the default credential chain',
    );
  }
  if (options.prefix !== undefined && !isKeyPrefix(options.prefix)) {
    throw invalidConfig(
      `prefix must be empty (OxiCloud's layout: keys at the bucket root) or a key prefix ending in '/' without a leading '/', such as tenant-a/, got ${JSON.stringify(options.prefix)}`,
    );
  }
  const attempts = options.maxAttempts;
  if (attempts !== undefined && !(Number.isSafeInteger(attempts) && attempts >= 1)) {
    throw invalidConfig(`maxAttempts must be an integer of at least 1, got ${String(attempts)}`);
  }
}

/**
 * Whether `prefix` is a usable key prefix: empty, or ending in `/` without a
 * leading `/` (so a key parses back unambiguously into prefix and name).
 */
export function isKeyPrefix(prefix: unknown): prefix is string {
  return typeof prefix === 'string' && (prefix === '' || (prefix.endsWith('/') && !prefix.startsWith('/')));
}

/**
 * Content-addressed blobs in an S3 bucket (AWS or any S3-compatible server)
 * in OxiCloud's layout: one object per blob under `<aa>/<hash>.blob` at the
 * bucket root (`aa` = the hash's first two hex characters), after `prefix`
 * when one is given (default none: OxiCloud has no prefix option).
 *
 * - `put` of bytes is one PutObject; a stream with a known `size` is sent as
 *   it comes (ContentLength = size, the byte count is verified), a stream
 *   without a size is buffered in memory first, so pass the size for large
 *   blobs. S3 makes each PutObject atomic.
 * - `list` is ListObjectsV2 from the key of `startAfter` on, pages of at most
 *   1,000 keys, in ascending key order, which is hash order (the folder is
 *   the hash's own first two characters); keys under the prefix that are not
 *   `<aa>/<hash>.blob` with `aa` matching are skipped.
 * - `health` is HeadBucket: read-only.
 * - SDK failures become `StorageError` `BACKEND_ERROR` with the SDK error as
 *   `cause`; keys are validated before any network call.
 * - Checksums are only computed when an operation requires them, so
 *   S3-compatible servers without the newer checksum headers work.
 * - The {@link BlobQuarantine} methods (used by `dedup_gc` only) keep the
 *   engine's quarantine under `prefix + 'oxijobs-quarantine/'`; a move is a
 *   CopyObject then a DeleteObject (a crash between them leaves both
 *   copies, which the GC's sweep tolerates).
 *
 * @example
 * ```ts
 * import { S3BlobStorage, s3ConfigFromEnv } from '@oxicloud/storage';
 * const blobs = new S3BlobStorage(s3ConfigFromEnv(process.env));
 * ```
 */
export class S3BlobStorage implements BlobStorage, BlobQuarantine {
  readonly backend = 's3';
  readonly bucket: string;
  readonly prefix: string;
  readonly #clientConfig: S3ClientConfig;
  /** The SDK and its client, loaded on first use: a server on local blobs never loads the S3 SDK (~0.3 s a process). */
  #connection: Promise<{ readonly sdk: S3Sdk; readonly client: S3Client }> | undefined;
  readonly #checksFactory: ((self: S3BlobStorage) => readonly ConsistencyCheck[]) | undefined;
  #checks: readonly ConsistencyCheck[] | undefined;

  constructor(options: S3BlobStorageOptions) {
    validate(options);
    if (options.consistencyChecks !== undefined && typeof options.consistencyChecks !== 'function') {
      throw invalidConfig('consistencyChecks must be a function (self) => ConsistencyCheck[] when given');
    }
    this.bucket = options.bucket;
    this.prefix = options.prefix ?? '';
    this.#checksFactory = options.consistencyChecks;
    this.#clientConfig = {
      region: options.region,
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      forcePathStyle: options.forcePathStyle ?? false,
      maxAttempts: options.maxAttempts ?? 3,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(options.accessKeyId !== undefined && options.secretAccessKey !== undefined
        ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
        : {}),
    };
  }

  subsystem(): string {
    return 'blobs';
  }

  consistencyChecks(): readonly ConsistencyCheck[] {
    // TODO(consistency): storage_consistency is wired by the server through the
    // `consistencyChecks` option; without it this backend contributes none.
    this.#checks ??= this.#checksFactory?.(this) ?? [];
    return this.#checks;
  }

  /** The object key of `hash`: `prefix + '<aa>/<hash>.blob'` (validated first). */
  keyOf(hash: string): string {
    return this.prefix + blobObjectKey(hash);
  }

  async put(hash: string, data: BlobData, size?: number): Promise<void> {
    const key = this.keyOf(hash);
    assertBlobSize(size);
    const sizeMismatch = (got: string) =>
      new StorageError(
        'SIZE_MISMATCH',
        `blob ${hash}: got ${got} bytes but the caller announced ${String(size)}; nothing was stored`,
      );
    // A failure of the source stream or a size mismatch found while the body
    // is being sent: the request is aborted and this is what put rejects with.
    let failure: StorageError | undefined;
    const abort = new AbortController();
    let body: Uint8Array | Readable;
    let length: number;
    try {
      if (data instanceof Uint8Array) {
        if (size !== undefined && data.byteLength !== size) throw sizeMismatch(String(data.byteLength));
        body = data;
        length = data.byteLength;
      } else if (size !== undefined) {
        body = Readable.from(
          this.#checkedBody(
            data,
            size,
            (error) => {
              failure ??=
                error instanceof StorageError && error.code === 'SIZE_MISMATCH'
                  ? error
                  : toStorageError(
                      error,
                      `S3 put of s3://${this.bucket}/${key} failed while reading the data`,
                    );
              abort.abort(failure);
            },
            sizeMismatch,
          ),
        );
        length = size;
      } else {
        const parts: Uint8Array[] = [];
        for await (const chunk of chunksOf(data)) parts.push(chunk);
        body = Buffer.concat(parts);
        length = body.byteLength;
      }
    } catch (error) {
      throw toStorageError(error, `S3 put of s3://${this.bucket}/${key} failed while reading the data`);
    }
    try {
      const { sdk, client } = await this.#s3();
      await client.send(
        new sdk.PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: body,
          ContentLength: length,
          ContentType: 'application/octet-stream',
        }),
        { abortSignal: abort.signal },
      );
    } catch (error) {
      throw failure ?? this.#backendError('put', key, error);
    }
    if (failure !== undefined) throw failure;
  }

  /**
   * The chunks of `data`, checked against the announced `size`. Each chunk is
   * held back until the next one (or the end) is known, so the server never
   * receives `size` bytes from a source that turns out longer: the request is
   * aborted (through `fail`) before it can complete. Never throws (a piped
   * body's error would go unheard); reports through `fail` and stops instead.
   */
  async *#checkedBody(
    data: BlobData,
    size: number,
    fail: (error: unknown) => void,
    sizeMismatch: (got: string) => StorageError,
  ): AsyncGenerator<Uint8Array> {
    let seen = 0;
    let pending: Uint8Array | undefined;
    try {
      for await (const chunk of chunksOf(data)) {
        seen += chunk.byteLength;
        if (seen > size) {
          fail(sizeMismatch(`more than ${size}`));
          return;
        }
        if (pending !== undefined) yield pending;
        pending = chunk;
      }
    } catch (error) {
      fail(error);
      return;
    }
    if (seen !== size) {
      fail(sizeMismatch(String(seen)));
      return;
    }
    if (pending !== undefined) yield pending;
  }

  async get(hash: string): Promise<NodeJS.ReadableStream & AsyncIterable<Uint8Array>> {
    const key = this.keyOf(hash);
    try {
      const { sdk, client } = await this.#s3();
      const response = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: key }));
      const body = response.Body;
      if (body === undefined) {
        throw new StorageError('BACKEND_ERROR', `S3 get of s3://${this.bucket}/${key} returned no body`);
      }
      return body as Readable;
    } catch (error) {
      if (isNotFound(error)) {
        throw new StorageError('NOT_FOUND', `blob ${hash} does not exist in s3://${this.bucket}/${key}`, {
          cause: error,
        });
      }
      throw this.#backendError('get', key, error);
    }
  }

  async head(hash: string): Promise<BlobEntry | null> {
    const key = this.keyOf(hash);
    try {
      const { sdk, client } = await this.#s3();
      const response = await client.send(new sdk.HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return {
        hash,
        size: response.ContentLength ?? 0,
        ...(response.LastModified === undefined ? {} : { modifiedAt: response.LastModified }),
      };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw this.#backendError('head', key, error);
    }
  }

  async exists(hash: string): Promise<boolean> {
    return (await this.head(hash)) !== null;
  }

  /** S3's DeleteObject does not say whether the key existed, so this is a HeadObject then a DeleteObject. */
  async delete(hash: string): Promise<boolean> {
    const key = this.keyOf(hash);
    const existed = (await this.head(hash)) !== null;
    try {
      const { sdk, client } = await this.#s3();
      await client.send(new sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (error) {
      if (!isNotFound(error)) throw this.#backendError('delete', key, error);
    }
    return existed;
  }

  async list(options: { startAfter?: string | null; limit: number }): Promise<BlobEntry[]> {
    const startAfter = normaliseStartAfter(options.startAfter);
    assertListLimit(options.limit);
    const out: BlobEntry[] = [];
    let continuationToken: string | undefined;
    try {
      do {
        const { sdk, client } = await this.#s3();
        const response = await client.send(
          new sdk.ListObjectsV2Command({
            Bucket: this.bucket,
            ...(this.prefix === '' ? {} : { Prefix: this.prefix }),
            ...(startAfter === null ? {} : { StartAfter: this.prefix + blobKeyStartAfter(startAfter) }),
            MaxKeys: Math.min(S3_MAX_KEYS, options.limit - out.length),
            ...(continuationToken === undefined ? {} : { ContinuationToken: continuationToken }),
          }),
        );
        for (const object of response.Contents ?? []) {
          const key = object.Key;
          if (key === undefined || !key.startsWith(this.prefix) || out.length >= options.limit) continue;
          const hash = hashOfBlobObjectKey(key.slice(this.prefix.length));
          if (hash === null || (startAfter !== null && hash <= startAfter)) continue;
          out.push({
            hash,
            size: object.Size ?? 0,
            ...(object.LastModified === undefined ? {} : { modifiedAt: object.LastModified }),
          });
        }
        continuationToken = response.IsTruncated ? response.NextContinuationToken : undefined;
      } while (continuationToken !== undefined && out.length < options.limit);
    } catch (error) {
      throw this.#backendError('list', `${this.prefix}${startAfter ?? ''}`, error);
    }
    return out;
  }

  /** The quarantine key of `hash`: `prefix + 'oxijobs-quarantine/<aa>/<hash>.blob'` (validated first). */
  quarantineKeyOf(hash: string): string {
    return this.prefix + S3_QUARANTINE_PREFIX + blobObjectKey(hash);
  }

  /** The key of a saved manifest: `prefix + 'oxijobs-quarantine/manifests/<aa>/<hash>.json'`. */
  manifestKeyOf(fileHash: string): string {
    return `${this.#manifestsPrefix()}${quarantinedManifestName(fileHash)}`;
  }

  async quarantineBlob(hash: string): Promise<boolean> {
    const from = this.keyOf(hash);
    if (!(await this.#copy(from, this.quarantineKeyOf(hash)))) return false;
    await this.#deleteKey(from);
    return true;
  }

  async restoreBlob(hash: string): Promise<boolean> {
    const from = this.quarantineKeyOf(hash);
    if (!(await this.#copy(from, this.keyOf(hash)))) return false;
    await this.#deleteKey(from);
    return true;
  }

  listQuarantinedBlobs(options: QuarantineListOptions): Promise<QuarantinedEntry[]> {
    return this.#listUnder(this.prefix + S3_QUARANTINE_PREFIX, hashOfBlobObjectKey, options);
  }

  async purgeQuarantinedBlob(hash: string): Promise<boolean> {
    const key = this.quarantineKeyOf(hash);
    if (!(await this.#headKey(key))) return false;
    await this.#deleteKey(key);
    return true;
  }

  async saveManifest(record: ChunkManifestRecord): Promise<void> {
    const key = this.manifestKeyOf(record.fileHash);
    const body = encodeManifestRecord(record);
    try {
      const { sdk, client } = await this.#s3();
      await client.send(
        new sdk.PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: body,
          ContentLength: body.byteLength,
          ContentType: 'application/json',
        }),
      );
    } catch (error) {
      throw this.#backendError('put', key, error);
    }
  }

  listQuarantinedManifests(options: QuarantineListOptions): Promise<QuarantinedEntry[]> {
    return this.#listUnder(this.#manifestsPrefix(), hashOfQuarantinedManifestName, options);
  }

  async readQuarantinedManifest(fileHash: string): Promise<ChunkManifestRecord | null> {
    const key = this.manifestKeyOf(fileHash);
    let bytes: Buffer;
    try {
      const { sdk, client } = await this.#s3();
      const response = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: key }));
      const parts: Buffer[] = [];
      for await (const chunk of (response.Body ?? []) as AsyncIterable<Uint8Array>)
        parts.push(Buffer.from(chunk));
      bytes = Buffer.concat(parts);
    } catch (error) {
      if (isNotFound(error)) return null;
      throw this.#backendError('get', key, error);
    }
    return decodeManifestRecord(fileHash, bytes, `s3://${this.bucket}/${key}`);
  }

  async purgeQuarantinedManifest(fileHash: string): Promise<boolean> {
    const key = this.manifestKeyOf(fileHash);
    if (!(await this.#headKey(key))) return false;
    await this.#deleteKey(key);
    return true;
  }

  async health(): Promise<BlobStorageHealth> {
    try {
      const { sdk, client } = await this.#s3();
      await client.send(new sdk.HeadBucketCommand({ Bucket: this.bucket }));
      return { ok: true, backend: this.backend };
    } catch (error) {
      return {
        ok: false,
        backend: this.backend,
        message: this.#backendError('head bucket', '', error).message,
      };
    }
  }

  /** Closes the SDK client's sockets. The storage must not be used afterwards. */
  close(): void {
    void this.#connection?.then(
      ({ client }) => client.destroy(),
      () => undefined,
    );
  }

  #manifestsPrefix(): string {
    return `${this.prefix}${S3_QUARANTINE_PREFIX}${QUARANTINED_MANIFESTS_DIR}/`;
  }

  /** CopyObject `from` → `to` (replacing `to`); `false` when `from` does not exist. */
  async #copy(from: string, to: string): Promise<boolean> {
    try {
      const { sdk, client } = await this.#s3();
      const source = `${this.bucket}/${from}`.split('/').map(encodeURIComponent).join('/');
      await client.send(new sdk.CopyObjectCommand({ Bucket: this.bucket, Key: to, CopySource: source }));
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw this.#backendError(`copy to ${to}`, from, error);
    }
  }

  async #headKey(key: string): Promise<boolean> {
    try {
      const { sdk, client } = await this.#s3();
      await client.send(new sdk.HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw this.#backendError('head', key, error);
    }
  }

  async #deleteKey(key: string): Promise<void> {
    try {
      const { sdk, client } = await this.#s3();
      await client.send(new sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (error) {
      if (!isNotFound(error)) throw this.#backendError('delete', key, error);
    }
  }

  /** Keys `under + <name>` whose `<name>` `parse` turns into a hash, in hash order after `startAfter`. */
  async #listUnder(
    under: string,
    parse: (name: string) => string | null,
    options: QuarantineListOptions,
  ): Promise<QuarantinedEntry[]> {
    const startAfter = normaliseStartAfter(options.startAfter);
    assertListLimit(options.limit);
    const out: QuarantinedEntry[] = [];
    let continuationToken: string | undefined;
    try {
      do {
        const { sdk, client } = await this.#s3();
        const response = await client.send(
          new sdk.ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: under,
            ...(startAfter === null ? {} : { StartAfter: under + blobKeyStartAfter(startAfter) }),
            MaxKeys: S3_MAX_KEYS,
            ...(continuationToken === undefined ? {} : { ContinuationToken: continuationToken }),
          }),
        );
        for (const object of response.Contents ?? []) {
          const key = object.Key;
          if (key === undefined || !key.startsWith(under) || out.length >= options.limit) continue;
          const hash = parse(key.slice(under.length));
          if (hash === null || (startAfter !== null && hash <= startAfter)) continue;
          out.push({ hash, quarantinedAt: object.LastModified ?? new Date() });
        }
        continuationToken = response.IsTruncated ? response.NextContinuationToken : undefined;
      } while (continuationToken !== undefined && out.length < options.limit);
    } catch (error) {
      throw this.#backendError('list', `${under}${startAfter ?? ''}`, error);
    }
    return out;
  }

  #s3(): Promise<{ readonly sdk: S3Sdk; readonly client: S3Client }> {
    this.#connection ??= import('@aws-sdk/client-s3').then((sdk) => ({
      sdk,
      client: new sdk.S3Client(this.#clientConfig),
    }));
    return this.#connection;
  }

  #backendError(operation: string, key: string, error: unknown): StorageError {
    if (error instanceof StorageError) return error;
    const status = httpStatus(error);
    return toStorageError(
      error,
      `S3 ${operation} of s3://${this.bucket}/${key} failed${status === undefined ? '' : ` (HTTP ${status})`}`,
    );
  }
}
