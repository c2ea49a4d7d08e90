import { createDecipheriv, randomBytes } from 'node:crypto';
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { type S3rverProcess, startS3rver } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blake3Hex } from '../hashing/blake3.js';
import { Blake3WorkerPool } from '../hashing/blake3-worker-pool.js';
import { createBlobHasher, StreamingBlobHasher } from '../hashing/streaming-blob-hasher.js';
import { describeBlobStorageContract, expectStorageError, randomHash } from './blob-storage.contract.js';
import { EncryptedBlobStorage } from './encrypted-blob-storage.js';
import { S3BlobStorage, type S3BlobStorageOptions } from './s3-blob-storage.js';

let server: S3rverProcess;
let raw: S3Client;
let buckets = 0;

beforeAll(async () => {
  server = await startS3rver();
  raw = new S3Client({
    region: 'us-east-1',
    endpoint: server.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
}, 60_000);

afterAll(async () => {
  raw?.destroy();
  await server?.stop();
});

/** A new, empty bucket: a store with OxiCloud's layout (no prefix) starts empty in it. */
async function freshBucket(): Promise<string> {
  const bucket = `fresh-${++buckets}`;
  await raw.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

/** Every key in `bucket`, in order. */
async function allKeys(bucket: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await raw.send(
      new ListObjectsV2Command({ Bucket: bucket, ...(token ? { ContinuationToken: token } : {}) }),
    );
    for (const object of page.Contents ?? []) keys.push(`${object.Key} ${object.Size} ${object.ETag}`);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

async function rawBytes(bucket: string, key: string): Promise<Buffer> {
  const object = await raw.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await object.Body!.transformToByteArray());
}

function options(overrides: Partial<S3BlobStorageOptions> = {}): S3BlobStorageOptions {
  return {
    bucket: server.bucket,
    region: 'us-east-1',
    endpoint: server.endpoint,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    forcePathStyle: true,
    ...overrides,
  };
}

const unreachable = () => new S3BlobStorage(options({ endpoint: 'http://127.0.0.1:1', maxAttempts: 1 }));

describeBlobStorageContract('S3BlobStorage', {
  // OxiCloud's layout (no prefix), each storage in a bucket of its own so each starts empty
  makeStorage: async () => new S3BlobStorage(options({ bucket: await freshBucket() })),
  makeUnreachable: async () => unreachable(),
  // s3rver stores the bytes received before a client abort; AWS S3 does not.
  keepsAbortedUploads: true,
});

describeBlobStorageContract('EncryptedBlobStorage over S3BlobStorage', {
  makeStorage: async () =>
    new EncryptedBlobStorage({
      inner: new S3BlobStorage(options({ bucket: await freshBucket() })),
      key: randomBytes(32),
    }),
  makeUnreachable: async () => new EncryptedBlobStorage({ inner: unreachable(), key: randomBytes(32) }),
  keepsAbortedUploads: true,
  // The decorator passes listing through; the run above proves S3's paging with 2,500 blobs.
  listingCount: 300,
});

describe('S3BlobStorage (S3 specifics)', () => {
  it("stores a blob at OxiCloud's key <aa>/<hash>.blob at the bucket root by default, and nothing else", async () => {
    const bucket = await freshBucket();
    const storage = new S3BlobStorage(options({ bucket }));
    const hash = 'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262';
    await storage.put(hash, Buffer.from('in the bucket'));
    expect((await rawBytes(bucket, `af/${hash}.blob`)).toString()).toBe('in the bucket');
    expect((await allKeys(bucket)).map((k) => k.split(' ')[0])).toEqual([`af/${hash}.blob`]);
    expect(storage.keyOf(hash)).toBe(`af/${hash}.blob`);
    expect(storage.prefix).toBe('');
    storage.close();
  });

  it('puts a prefix, when given, before the same <aa>/<hash>.blob', async () => {
    const bucket = await freshBucket();
    const storage = new S3BlobStorage(options({ bucket, prefix: 'tenant-a/' }));
    const hash = randomHash();
    await storage.put(hash, Buffer.from('prefixed'));
    expect((await allKeys(bucket)).map((k) => k.split(' ')[0])).toEqual([
      `tenant-a/${hash.slice(0, 2)}/${hash}.blob`,
    ]);
    storage.close();
  });

  it('stores an encrypted blob as nonce ‖ ciphertext ‖ tag, plaintext + 28 bytes, that node:crypto decrypts', async () => {
    const bucket = await freshBucket();
    const key = randomBytes(32);
    const inner = new S3BlobStorage(options({ bucket }));
    const storage = new EncryptedBlobStorage({ inner, key });
    const plaintext = randomBytes(70_001);
    const hash = blake3Hex(plaintext);
    await storage.put(hash, plaintext, plaintext.length);
    const objectKey = `${hash.slice(0, 2)}/${hash}.blob`;
    const head = await raw.send(new HeadObjectCommand({ Bucket: bucket, Key: objectKey }));
    expect(head.ContentLength).toBe(plaintext.length + 28);
    const stored = await rawBytes(bucket, objectKey);
    const decipher = createDecipheriv('aes-256-gcm', key, stored.subarray(0, 12));
    decipher.setAuthTag(stored.subarray(stored.length - 16));
    const opened = Buffer.concat([
      decipher.update(stored.subarray(12, stored.length - 16)),
      decipher.final(),
    ]);
    expect(opened.equals(plaintext)).toBe(true);
    expect(await storage.head(hash)).toMatchObject({
      size: plaintext.length,
      storedSize: plaintext.length + 28,
    });
    expect(await storage.list({ limit: 10 })).toMatchObject([{ hash, size: 70_001, storedSize: 70_029 }]);
    // A wrong key, then a tampered object: DECRYPTION_FAILED, never bytes.
    await expectStorageError(
      new EncryptedBlobStorage({ inner, key: randomBytes(32) }).get(hash),
      'DECRYPTION_FAILED',
    );
    stored[100] = (stored[100] ?? 0) ^ 0xff;
    await raw.send(new PutObjectCommand({ Bucket: bucket, Key: objectKey, Body: stored }));
    await expectStorageError(storage.get(hash), 'DECRYPTION_FAILED');
    storage.close();
  });

  it('lists only keys <aa>/<hash>.blob with a matching folder, resumable from any key', async () => {
    const bucket = await freshBucket();
    const storage = new S3BlobStorage(options({ bucket }));
    const hashes = [randomHash(), randomHash(), randomHash(), `ab${randomHash().slice(2)}`].sort();
    for (const hash of hashes) await storage.put(hash, randomBytes(3));
    const [first] = hashes as [string];
    const other = (first.startsWith('ee') ? 'dd' : 'ee') + randomHash().slice(2); // never in first's folder
    for (const key of [
      'README',
      'ab',
      'ab/',
      'zz/notahash.blob',
      `zz/${other}.blob`,
      'ab/notahash.blob',
      `${first.slice(0, 2)}/${other}.blob`, // the wrong folder
      `${first.slice(0, 2)}/${first.slice(0, 2)}${other.slice(2)}`, // no suffix
      `${first.slice(0, 2)}/${first.slice(0, 2)}${other.slice(2)}.blob.tmp`,
      `${first.slice(0, 2)}/${first.slice(0, 2)}${other.slice(2)}.BLOB`,
      `${first.slice(0, 2)}/sub/${first.slice(0, 2)}${other.slice(2)}.blob`,
      `blobs/${other}`, // this engine's old default layout
      `tenant-a/${other.slice(0, 2)}/${other}.blob`, // another prefix's blob
      `${other}.blob`,
      `.thumbnails/icon/${other}.webp`,
    ]) {
      await raw.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'x' }));
    }
    expect((await storage.list({ limit: 100 })).map((e) => e.hash)).toEqual(hashes);
    expect((await storage.list({ limit: 2 })).map((e) => e.hash)).toEqual(hashes.slice(0, 2));
    for (const [i, hash] of hashes.entries()) {
      expect((await storage.list({ startAfter: hash, limit: 100 })).map((e) => e.hash)).toEqual(
        hashes.slice(i + 1),
      );
      // a shorter position: strictly after that prefix, so the hash itself comes back
      expect((await storage.list({ startAfter: hash.slice(0, 5), limit: 1 })).map((e) => e.hash)).toEqual([
        hash,
      ]);
      for (const position of [hash.slice(0, 1), hash.slice(0, 2), hash.slice(0, 63)]) {
        expect((await storage.list({ startAfter: position, limit: 100 })).map((e) => e.hash)).toEqual(
          hashes.filter((h) => h > position),
        );
      }
    }
    // Under a prefix: only that prefix's blobs, resumable the same way.
    const prefixed = new S3BlobStorage(options({ bucket, prefix: 'tenant-a/' }));
    const theirs = [randomHash(), randomHash(), randomHash()];
    for (const hash of theirs) await prefixed.put(hash, randomBytes(2));
    const underPrefix = [other, ...theirs].sort();
    expect((await prefixed.list({ limit: 100 })).map((e) => e.hash)).toEqual(underPrefix);
    for (const [i, hash] of underPrefix.entries()) {
      expect((await prefixed.list({ startAfter: hash, limit: 100 })).map((e) => e.hash)).toEqual(
        underPrefix.slice(i + 1),
      );
    }
    expect((await storage.list({ limit: 100 })).map((e) => e.hash)).toEqual(hashes); // and not at the root
    prefixed.close();
    storage.close();
  });

  it('health writes nothing into the bucket (OxiCloud owns it)', async () => {
    const bucket = await freshBucket();
    const storage = new S3BlobStorage(options({ bucket }));
    expect(await storage.health()).toEqual({ ok: true, backend: 's3' });
    expect(await allKeys(bucket)).toEqual([]);
    await storage.put(randomHash(), Buffer.from('x'));
    const before = await allKeys(bucket);
    for (let i = 0; i < 3; i++) expect((await storage.health()).ok).toBe(true);
    expect(await allKeys(bucket)).toEqual(before);
    storage.close();
  });

  it('reports a missing bucket as unhealthy', async () => {
    const storage = new S3BlobStorage(options({ bucket: 'no-such-bucket' }));
    const health = await storage.health();
    expect(health).toMatchObject({ ok: false, backend: 's3' });
    expect(health.message).toContain('no-such-bucket');
    storage.close();
  });

  it('maps SDK failures to BACKEND_ERROR with the SDK error as cause', async () => {
    const storage = new S3BlobStorage(options({ bucket: 'no-such-bucket' }));
    const error = await storage.put(randomHash(), Buffer.from('x')).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'StorageError', code: 'BACKEND_ERROR' });
    expect((error as Error).message).toMatch(/s3:\/\/no-such-bucket\/[0-9a-f]{2}\/[0-9a-f]{64}\.blob/);
    expect((error as Error).cause).toBeInstanceOf(Error);
    storage.close();
  });

  it('is re-hashed by StreamingBlobHasher off the event loop', async () => {
    const storage = new S3BlobStorage(options({ bucket: await freshBucket() }));
    const pool = new Blake3WorkerPool({ size: 1 });
    const hasher = createBlobHasher(storage, pool);
    expect(hasher).toBeInstanceOf(StreamingBlobHasher);
    const bytes = randomBytes(8 * 1024 * 1024 + 5);
    const hash = blake3Hex(bytes);
    const corrupt = randomHash();
    await storage.put(hash, bytes);
    await storage.put(corrupt, bytes);
    for (const key of [hash, corrupt]) {
      const digest = await hasher.hashStoredBlob(key);
      expect(digest).toMatchObject({ hash, size: bytes.length });
      expect(Buffer.from(digest.head).equals(bytes.subarray(0, 4096))).toBe(true);
    }
    await expectStorageError(hasher.hashStoredBlob(randomHash()), 'NOT_FOUND');
    await pool.close();
    storage.close();
  });

  it('validates its options with INVALID_CONFIG', () => {
    const bad: Array<[Partial<S3BlobStorageOptions>, string]> = [
      [{ bucket: '' }, 'bucket'],
      [{ region: '' }, 'region'],
      [{ endpoint: 'ftp://x' }, 'endpoint'],
      [{ secretAccessKey: undefined }, 'accessKeyId and secretAccessKey go together'],
      [{ prefix: '/blobs/' }, 'prefix'],
      [{ prefix: 'blobs' }, "ending in '/'"],
      [{ maxAttempts: 0 }, 'maxAttempts'],
    ];
    for (const [override, mention] of bad) {
      expect(() => new S3BlobStorage(options(override))).toThrow(
        expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining(mention) }),
      );
    }
  });
});
