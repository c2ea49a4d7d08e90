import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createStorageConsistencyCheck,
  MISSING_BLOB_BYTES,
  ORPHAN_BLOB,
  STORAGE_CONSISTENCY_CHECK_NAME,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalFsBlobStorage } from '../blob/local-fs-blob-storage.js';
import { CDC_CHUNK_SIZES } from '../content/file-content.js';
import { blake3Hex } from '../hashing/blake3.js';
import { Blake3WorkerPool } from '../hashing/blake3-worker-pool.js';
import { createBlobHasher } from '../hashing/streaming-blob-hasher.js';
import { OxiBlobIndexScan } from './oxi-blob-index-scan.js';
import { AGE, type OxiHarness, type OxiWorld, oxiHarness, oxiWorld, summary } from './test-fixtures.js';

let db: TestDatabase;
let h: OxiHarness;
let w: OxiWorld;
let root: string;
let blobs: LocalFsBlobStorage;
let workers: Blake3WorkerPool;

beforeAll(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  h = oxiHarness(db.pool);
  root = await mkdtemp(join(tmpdir(), 'oxicloud-oxi-index-'));
  blobs = new LocalFsBlobStorage({ root });
  workers = new Blake3WorkerPool({ size: 1 });
  w = await oxiWorld(db.pool, blobs);
});
afterAll(async () => {
  await h?.close();
  await h?.db.destroy();
  await workers?.close();
  await db?.drop();
  if (root) await rm(root, { recursive: true, force: true });
});
beforeEach(async () => {
  await db.pool.query(
    'DELETE FROM storage.files; DELETE FROM storage.chunk_manifests; DELETE FROM storage.blobs',
  );
  for (const entry of await blobs.list({ limit: 10_000 })) await blobs.delete(entry.hash);
});

const check = () =>
  createStorageConsistencyCheck({
    blobs,
    index: new OxiBlobIndexScan(h.db),
    hasher: createBlobHasher(blobs, workers),
  });
const { min } = CDC_CHUNK_SIZES;

/** Multi-chunk (deduplicated), one-chunk, legacy and empty content, with the bytes of every blob row. */
async function cleanContent() {
  const data = Buffer.concat([randomBytes(min), randomBytes(min), randomBytes(99)]);
  const multi = await w.upload({ name: 'multi.bin', data });
  const copy = await w.upload({ name: 'multi-copy.bin', data });
  const one = await w.upload({ name: 'one.txt', data: Buffer.from('small') });
  const legacy = await w.upload({ name: 'old.bin', data: randomBytes(700), legacy: true });
  const empty = await w.upload({ name: 'empty', data: Buffer.alloc(0) });
  return { multi, copy, one, legacy, empty };
}

describe('storage_consistency on OxiCloud’s domain (OxiBlobIndexScan + LocalFsBlobStorage)', () => {
  it('clean content: objects are exactly the blob rows (no object for a manifest) → 0 findings, deep too', async () => {
    const { multi, empty } = await cleanContent();
    expect(check().name).toBe(STORAGE_CONSISTENCY_CHECK_NAME);
    expect(await blobs.exists(multi.hash)).toBe(false);
    expect(await blobs.exists(empty.hash)).toBe(false);
    const run = await h.run(check(), { batch_size: 2 });
    expect(run.status).toBe('Completed');
    expect(run.findings).toEqual([]);
    // 3 chunks + the one-chunk hash + the legacy blob.
    expect(run.stats['scanned_count']).toBe(5);
    const deep = await h.run(check(), { deep: true, force: true });
    expect(deep.findings).toEqual([]);
  });

  it('a chunk’s bytes lost → missing_blob_bytes (DataLoss) naming every file that reads it through its manifest', async () => {
    const { multi, copy } = await cleanContent();
    const chunk = multi.objects[1]!.hash;
    await blobs.delete(chunk);
    const run = await h.run(check());
    expect(summary(run.findings)).toEqual([`${MISSING_BLOB_BYTES} DataLoss ${chunk}`]);
    expect(run.findings[0]?.detail).toMatchObject({
      ref_count: 1,
      file_count: 2,
      live_file_count: 2,
      affected_file_ids: [multi.fileId, copy.fileId].sort(),
    });
  });

  it('a legacy blob’s bytes lost → missing_blob_bytes for its own files', async () => {
    const { legacy } = await cleanContent();
    await blobs.delete(legacy.hash);
    const run = await h.run(check());
    expect(summary(run.findings)).toEqual([`${MISSING_BLOB_BYTES} DataLoss ${legacy.hash}`]);
    expect(run.findings[0]?.detail).toMatchObject({ file_count: 1, affected_file_ids: [legacy.fileId] });
  });

  it('bytes without a row → orphan_blob (Reclaimable); a stray, uncounted row under a manifest’s hash is nobody’s loss', async () => {
    const { multi } = await cleanContent();
    const stray = randomBytes(123);
    const strayHash = blake3Hex(stray);
    await blobs.put(strayHash, stray, stray.length);
    // A blobs row named by a multi-chunk file's hash, no bytes: no file reads it (they read the manifest).
    await db.pool.query(
      `INSERT INTO storage.blobs (hash, size, ref_count, orphaned_at, created_at) VALUES ($1, $2, 0, ${AGE}, ${AGE})`,
      [multi.hash, multi.size],
    );
    const run = await h.run(check(), { force: true });
    expect(summary(run.findings)).toEqual([`${ORPHAN_BLOB} Reclaimable ${strayHash}`]);
  });
});
