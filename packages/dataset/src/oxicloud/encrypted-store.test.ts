import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { ConsistencyCheck } from '@oxicloud/consistency';
import { hashFileContent, LocalFsBlobStorage, manifestContent } from '@oxicloud/storage';
import type { BlobEntry, BlobStorage, BlobStorageHealth } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateOxiCloudDataset } from './generate-oxicloud-dataset.js';
import type { OxiCloudDatasetReport } from './report.js';

/**
 * A `BlobStorage` that encrypts as OxiCloud's encryption layer does
 * (AES-256-GCM, stored = nonce(12) ‖ ciphertext ‖ tag(16), keyed by the
 * plaintext hash) over a local store, and counts the puts per hash: the
 * generator must work over it unchanged.
 */
class EncryptingCountingStore implements BlobStorage {
  readonly backend = 'local+aes-gcm';
  readonly puts = new Map<string, number>();
  readonly #key = randomBytes(32);

  constructor(readonly inner: LocalFsBlobStorage) {}

  subsystem(): string {
    return 'blobs';
  }
  consistencyChecks(): readonly ConsistencyCheck[] {
    return [];
  }
  async put(
    hash: string,
    data: Uint8Array | AsyncIterable<Uint8Array> | NodeJS.ReadableStream,
  ): Promise<void> {
    if (!(data instanceof Uint8Array)) throw new Error('the generator puts whole chunks');
    this.puts.set(hash, (this.puts.get(hash) ?? 0) + 1);
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce);
    const sealed = Buffer.concat([nonce, cipher.update(data), cipher.final(), cipher.getAuthTag()]);
    await this.inner.put(hash, sealed, sealed.length);
  }
  async get(hash: string): Promise<NodeJS.ReadableStream & AsyncIterable<Uint8Array>> {
    const parts: Buffer[] = [];
    for await (const piece of await this.inner.get(hash)) parts.push(Buffer.from(piece));
    const sealed = Buffer.concat(parts);
    const decipher = createDecipheriv('aes-256-gcm', this.#key, sealed.subarray(0, 12));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    return Readable.from([
      Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]),
    ]);
  }
  head(hash: string): Promise<BlobEntry | null> {
    return this.inner.head(hash);
  }
  exists(hash: string): Promise<boolean> {
    return this.inner.exists(hash);
  }
  delete(hash: string): Promise<boolean> {
    return this.inner.delete(hash);
  }
  list(options: { startAfter?: string | null; limit: number }): Promise<BlobEntry[]> {
    return this.inner.list(options);
  }
  health(): Promise<BlobStorageHealth> {
    return this.inner.health();
  }
}

describe('over an encrypting blob store', () => {
  let db: TestDatabase;
  let dir: string;
  let store: EncryptingCountingStore;
  let report: OxiCloudDatasetReport;

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    dir = await mkdtemp(join(tmpdir(), 'oxicloud-oxi-enc-'));
    store = new EncryptingCountingStore(new LocalFsBlobStorage({ root: join(dir, '.blobs') }));
    report = await generateOxiCloudDataset({
      pool: db.pool,
      blobs: store,
      options: {
        users: 3,
        sharedDrives: 1,
        filesPerDrive: 20,
        multiChunkFileShare: 0.2,
        dedupShare: 0.3,
        sharedChunkShare: 0.6,
        multiChunkSize: { min: 1024 * 1024 + 1, max: 1024 * 1024 + 200_000 },
        seed: 5,
      },
    });
  });

  afterAll(async () => {
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('puts each distinct chunk and legacy blob exactly once, one object per blobs row', async () => {
    const rows = (await db.pool.query<{ hash: string; size: string }>('SELECT hash, size FROM storage.blobs'))
      .rows;
    expect(rows.length).toBe(report.counts.chunkBlobs + report.counts.legacyBlobs);
    expect([...store.puts.keys()].sort()).toEqual(rows.map((r) => r.hash).sort());
    expect([...store.puts.values()].every((n) => n === 1)).toBe(true);
    expect(report.counts.sharedChunks).toBeGreaterThan(0);
    // Stored size = plaintext + 28 (nonce and tag); blobs.size is the plaintext.
    for (const r of rows) expect((await store.head(r.hash))?.size).toBe(Number(r.size) + 28);
  });

  it('reads every file back through the store to its blob_hash', async () => {
    const files = (
      await db.pool.query<{
        blob_hash: string;
        size: string;
        chunk_hashes: string[] | null;
        chunk_sizes: string[] | null;
      }>(
        `SELECT DISTINCT f.blob_hash, f.size, m.chunk_hashes, m.chunk_sizes
           FROM storage.files f LEFT JOIN storage.chunk_manifests m ON m.file_hash = f.blob_hash`,
      )
    ).rows;
    for (const r of files) {
      const content =
        r.chunk_hashes === null
          ? { kind: 'legacy' as const, hash: r.blob_hash, size: Number(r.size) }
          : manifestContent({
              fileHash: r.blob_hash,
              chunkHashes: r.chunk_hashes,
              chunkSizes: (r.chunk_sizes ?? []).map(Number),
              totalSize: Number(r.size),
              chunkCount: r.chunk_hashes.length,
            });
      expect(await hashFileContent(content, store)).toEqual({ hash: r.blob_hash, size: Number(r.size) });
    }
  });
});
