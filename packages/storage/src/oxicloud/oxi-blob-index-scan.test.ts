import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, truncate, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ConsistencyCheck } from '@oxicloud/consistency';
import {
  BLOB_OBJECT_SIZE_MISMATCH,
  createStorageConsistencyCheck,
  MISSING_BLOB_BYTES,
  ORPHAN_BLOB,
  ORPHAN_FILE_THUMBNAIL,
  ORPHAN_TRANSCODED_IMAGE,
  STORAGE_CONSISTENCY_CHECK_NAME,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EncryptedBlobStorage } from '../blob/encrypted-blob-storage.js';
import { LocalFsBlobStorage } from '../blob/local-fs-blob-storage.js';
import { LocalThumbnailStore } from '../blob/local-thumbnail-store.js';
import { externalThumbnailPath, thumbnailPath, transcodedImagePath } from '../blob/thumbnail-layout.js';
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
const TWO_DAYS_AGO = () => new Date(Date.now() - 2 * 86_400_000);

/** The magnitude recorded for a finding of storage_consistency (the findings ledger keeps it). */
async function magnitudeOf(kind: string, resourceId: string): Promise<number | null> {
  const { rows } = await db.pool.query<{ magnitude: string | null }>(
    `SELECT magnitude::text AS magnitude FROM jobs.findings
      WHERE check_name = $1 AND kind = $2 AND resource_id = $3`,
    [STORAGE_CONSISTENCY_CHECK_NAME, kind, resourceId],
  );
  const m = rows[0]?.magnitude;
  return m === null || m === undefined ? null : Number(m);
}

/** Runs a check of another configuration than `check()` (the harness keeps the first check of a name). */
async function runOther(other: ConsistencyCheck, params: Record<string, unknown> = {}) {
  const own = oxiHarness(db.pool);
  try {
    return await own.run(other, params);
  } finally {
    await own.close();
  }
}

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

describe('blob_object_size_mismatch: the object’s size against its row’s (§12 item 17)', () => {
  it('a truncated chunk is found without deep; a young one waits for the grace; a deep run reports each once, not as a hash mismatch', async () => {
    const { multi, one } = await cleanContent();
    const chunk = multi.objects[0]!;
    const half = Math.floor(chunk.size / 2);
    // A crash mid-write two days ago left half the object at its final path.
    await truncate(blobs.pathOf(chunk.hash), half);
    await utimes(blobs.pathOf(chunk.hash), TWO_DAYS_AGO(), TWO_DAYS_AGO());
    // Truncated just now: inside the 1 h grace (bytes by their mtime).
    const young = one.objects[0]!;
    await truncate(blobs.pathOf(young.hash), 2);

    const run = await h.run(check());
    expect(summary(run.findings)).toEqual([`${BLOB_OBJECT_SIZE_MISMATCH} DataLoss ${chunk.hash}`]);
    expect(run.findings[0]?.detail).toMatchObject({
      row_size: chunk.size,
      stored_size: half,
      expected_stored_size: chunk.size,
      encrypted: false,
      backend: 'local',
    });
    expect(await magnitudeOf(BLOB_OBJECT_SIZE_MISMATCH, chunk.hash)).toBe(chunk.size - half);

    const deep = await h.run(check(), { deep: true, force: true });
    expect(deep.status).toBe('Completed');
    expect(summary(deep.findings)).toEqual(
      [chunk.hash, young.hash].map((hash) => `${BLOB_OBJECT_SIZE_MISMATCH} DataLoss ${hash}`).sort(),
    );
  });

  it('an encrypted store: 28 bytes more per object is no finding; a truncated ciphertext is one, and does not fail a deep run', async () => {
    const encRoot = await mkdtemp(join(tmpdir(), 'oxicloud-oxi-index-enc-'));
    try {
      const inner = new LocalFsBlobStorage({ root: encRoot });
      const encrypted = new EncryptedBlobStorage({ inner, key: randomBytes(32) });
      const ew = await oxiWorld(db.pool, encrypted);
      const file = await ew.upload({
        name: 'enc.bin',
        data: Buffer.concat([randomBytes(min), randomBytes(99)]),
      });
      await ew.upload({ name: 'enc-old.bin', data: randomBytes(300), legacy: true });
      const encCheck = () =>
        createStorageConsistencyCheck({
          blobs: encrypted,
          index: new OxiBlobIndexScan(h.db),
          hasher: createBlobHasher(encrypted, workers),
        });
      expect((await runOther(encCheck(), { force: true })).findings).toEqual([]);

      // 10 bytes of the tag lost: it can no longer be decrypted, and hashing it would fail the run.
      const victim = file.objects[1]!;
      await truncate(inner.pathOf(victim.hash), victim.size + 28 - 10);
      const run = await runOther(encCheck(), { force: true, deep: true });
      expect(run.status).toBe('Completed');
      expect(summary(run.findings)).toEqual([`${BLOB_OBJECT_SIZE_MISMATCH} DataLoss ${victim.hash}`]);
      expect(run.findings[0]?.detail).toMatchObject({
        row_size: victim.size,
        stored_size: victim.size + 18,
        expected_stored_size: victim.size + 28,
        encrypted: true,
      });

      // A ciphertext of the right size whose bytes were flipped: it does not authenticate. A deep run
      // reports it as blob_hash_mismatch (does_not_decrypt) and completes; it does not fail.
      const other = file.objects[0]!;
      const path = inner.pathOf(other.hash);
      const bytes = await readFile(path);
      bytes[40] = (bytes[40] ?? 0) ^ 0xff;
      await writeFile(path, bytes);
      const old = TWO_DAYS_AGO();
      await utimes(path, old, old);
      const tampered = await runOther(encCheck(), { force: true, deep: true });
      expect(tampered.status).toBe('Completed');
      expect(summary(tampered.findings)).toEqual(
        [
          `${BLOB_OBJECT_SIZE_MISMATCH} DataLoss ${victim.hash}`,
          `blob_hash_mismatch DataLoss ${other.hash}`,
        ].sort(),
      );
      expect(tampered.findings.find((f) => f.resourceId === other.hash)?.detail).toMatchObject({
        actual_hash: null,
        does_not_decrypt: true,
      });
    } finally {
      await rm(encRoot, { recursive: true, force: true });
    }
  });
});

describe('OxiCloud’s files keyed by file id (§12 item 19): ext- thumbnails and transcoded images', () => {
  it('those of a file id no files row has are orphans; a live or trashed file’s are not, young ones wait for the grace', async () => {
    const thumbRoot = await mkdtemp(join(tmpdir(), 'oxicloud-oxi-index-thumbs-'));
    try {
      const write = async (path: string, bytes: number, mtime = TWO_DAYS_AGO()) => {
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, Buffer.alloc(bytes));
        await utimes(path, mtime, mtime);
      };
      const live = await w.upload({ name: 'live.jpg' });
      const trashed = await w.upload({ name: 'trashed.jpg' });
      await db.pool.query(
        "UPDATE storage.files SET is_trashed = true, trashed_at = now() - interval '1 day' WHERE id = $1",
        [trashed.fileId],
      );
      const [gone, goneToo, young] = [randomUUID(), randomUUID(), randomUUID()];
      for (const id of [live.fileId, trashed.fileId, gone]) {
        await write(externalThumbnailPath(thumbRoot, 'preview', id), 100);
      }
      await write(externalThumbnailPath(thumbRoot, 'icon', gone), 50);
      for (const id of [live.fileId, trashed.fileId, goneToo])
        await write(transcodedImagePath(thumbRoot, id), 300);
      await write(transcodedImagePath(thumbRoot, gone, true), 0);
      await write(externalThumbnailPath(thumbRoot, 'icon', young), 10, new Date());
      await write(transcodedImagePath(thumbRoot, young), 10, new Date());

      const thumbCheck = createStorageConsistencyCheck({
        blobs,
        index: new OxiBlobIndexScan(h.db),
        hasher: createBlobHasher(blobs, workers),
        thumbnails: new LocalThumbnailStore(thumbRoot),
      });
      expect(thumbCheck.kinds.map((k) => k.kind)).toEqual(
        expect.arrayContaining([ORPHAN_FILE_THUMBNAIL, ORPHAN_TRANSCODED_IMAGE]),
      );
      // Pages of 2: the file-id phase (5 ids) spans three batches after the merge and the hash thumbnails.
      const run = await runOther(thumbCheck, { batch_size: 2 });
      expect(run.status).toBe('Completed');
      expect(summary(run.findings)).toEqual(
        [
          `${ORPHAN_FILE_THUMBNAIL} Reclaimable ${gone}`,
          `${ORPHAN_TRANSCODED_IMAGE} Reclaimable ${gone}`,
          `${ORPHAN_TRANSCODED_IMAGE} Reclaimable ${goneToo}`,
        ].sort(),
      );
      const thumb = run.findings.find((f) => f.kind === ORPHAN_FILE_THUMBNAIL);
      expect(thumb?.detail).toMatchObject({
        files: [
          join('.thumbnails', 'icon', `ext-${gone}.jpg`),
          join('.thumbnails', 'preview', `ext-${gone}.jpg`),
        ],
        bytes: 150,
      });
      expect(await magnitudeOf(ORPHAN_FILE_THUMBNAIL, gone)).toBe(150);

      const forced = await runOther(thumbCheck, { force: true });
      expect(summary(forced.findings)).toEqual(
        [
          ...summary(run.findings),
          `${ORPHAN_FILE_THUMBNAIL} Reclaimable ${young}`,
          `${ORPHAN_TRANSCODED_IMAGE} Reclaimable ${young}`,
        ].sort(),
      );
    } finally {
      await rm(thumbRoot, { recursive: true, force: true });
    }
  });
});

describe('thumbnails keyed by content hash (§12 item 19)', () => {
  it('a hash no content and no file names is an orphan; a file whose content row is lost keeps its thumbnails', async () => {
    const thumbRoot = await mkdtemp(join(tmpdir(), 'oxicloud-oxi-index-hash-thumbs-'));
    try {
      const write = async (path: string) => {
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, Buffer.alloc(40));
        const mtime = TWO_DAYS_AGO();
        await utimes(path, mtime, mtime);
      };
      const kept = await w.upload({ name: 'kept.jpg', data: Buffer.from('a picture that stays') });
      const lost = await w.upload({ name: 'lost.jpg', data: Buffer.from('a picture whose row is lost') });
      // The content row goes (a GC that ignored the file): the file still names the hash.
      await db.pool.query('DELETE FROM storage.chunk_manifests WHERE file_hash = $1', [lost.hash]);
      await db.pool.query('DELETE FROM storage.blobs WHERE hash = $1', [lost.hash]);
      const nobody = blake3Hex(randomBytes(32));
      for (const hash of [kept.hash, lost.hash, nobody]) await write(thumbnailPath(thumbRoot, 'icon', hash));

      const run = await runOther(
        createStorageConsistencyCheck({
          blobs,
          index: new OxiBlobIndexScan(h.db),
          hasher: createBlobHasher(blobs, workers),
          thumbnails: new LocalThumbnailStore(thumbRoot),
        }),
      );
      expect(run.status).toBe('Completed');
      expect(summary(run.findings).filter((l) => l.startsWith('orphan_thumbnail'))).toEqual([
        `orphan_thumbnail Reclaimable ${nobody}`,
      ]);
    } finally {
      await rm(thumbRoot, { recursive: true, force: true });
    }
  });
});
