import { randomBytes } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { type S3rverProcess, startS3rver } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blake3Hex } from '../hashing/blake3.js';
import { Blake3WorkerPool } from '../hashing/blake3-worker-pool.js';
import { createBlobHasher, StreamingBlobHasher } from '../hashing/streaming-blob-hasher.js';
import { describeBlobStorageContract, expectStorageError, randomHash } from './blob-storage.contract.js';
import { S3BlobStorage, type S3BlobStorageOptions } from './s3-blob-storage.js';

let server: S3rverProcess;
let prefixes = 0;

beforeAll(async () => {
  server = await startS3rver();
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

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

describeBlobStorageContract('S3BlobStorage', {
  // every storage gets its own prefix in the one bucket, so each starts empty
  makeStorage: async () => new S3BlobStorage(options({ prefix: `run${++prefixes}/blobs/` })),
  makeUnreachable: async () => new S3BlobStorage(options({ endpoint: 'http://127.0.0.1:1', maxAttempts: 1 })),
  // s3rver stores the bytes received before a client abort; AWS S3 does not.
  keepsAbortedUploads: true,
});

describe('S3BlobStorage (S3 specifics)', () => {
  let raw: S3Client;

  beforeAll(() => {
    raw = new S3Client({
      region: 'us-east-1',
      endpoint: server.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
  });

  afterAll(() => raw.destroy());

  it('stores a blob under blobs/<hash> by default', async () => {
    const storage = new S3BlobStorage(options());
    const hash = randomHash();
    await storage.put(hash, Buffer.from('in the bucket'));
    const object = await raw.send(new GetObjectCommand({ Bucket: server.bucket, Key: `blobs/${hash}` }));
    expect(await object.Body?.transformToString()).toBe('in the bucket');
    expect(storage.keyOf(hash)).toBe(`blobs/${hash}`);
    storage.close();
  });

  it('lists only blob keys under its prefix', async () => {
    const storage = new S3BlobStorage(options({ prefix: 'mixed/blobs/' }));
    const hashes = [randomHash(), randomHash(), randomHash()].sort();
    for (const hash of hashes) await storage.put(hash, randomBytes(3));
    for (const key of [
      'mixed/blobs/README',
      'mixed/blobs/ab',
      `mixed/blobs/${hashes[0]}.tmp`,
      'mixed/other',
    ]) {
      await raw.send(new PutObjectCommand({ Bucket: server.bucket, Key: key, Body: 'x' }));
    }
    expect((await storage.list({ limit: 100 })).map((e) => e.hash)).toEqual(hashes);
    expect((await storage.list({ limit: 2 })).map((e) => e.hash)).toEqual(hashes.slice(0, 2));
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
    expect((error as Error).message).toContain('s3://no-such-bucket/blobs/');
    expect((error as Error).cause).toBeInstanceOf(Error);
    storage.close();
  });

  it('is re-hashed by StreamingBlobHasher off the event loop', async () => {
    const storage = new S3BlobStorage(options({ prefix: 'hashed/' }));
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
      [{ maxAttempts: 0 }, 'maxAttempts'],
    ];
    for (const [override, mention] of bad) {
      expect(() => new S3BlobStorage(options(override))).toThrow(
        expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining(mention) }),
      );
    }
  });
});
