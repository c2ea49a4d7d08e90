import { randomBytes } from 'node:crypto';
import { BLOBS_CONSISTENCY_CHECK_NAME, ORPHANED_AT_MISMATCH, REF_COUNT_MISMATCH } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BlobRefCountExpectation } from '../content/expected-blob-ref-counts.js';
import { CDC_CHUNK_SIZES } from '../content/file-content.js';
import { OxiBlobRowScan } from './oxi-blob-row-scan.js';
import { AGE, type OxiHarness, type OxiWorld, oxiHarness, oxiWorld, summary } from './test-fixtures.js';

let db: TestDatabase;
let h: OxiHarness;
let w: OxiWorld;

beforeAll(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  h = oxiHarness(db.pool);
  w = await oxiWorld(db.pool);
});
afterAll(async () => {
  await h?.close();
  await h?.db.destroy();
  await db?.drop();
});
beforeEach(async () => {
  await db.pool.query(
    'DELETE FROM storage.files; DELETE FROM storage.chunk_manifests; DELETE FROM storage.blobs',
  );
});

const check = () => new OxiBlobRowScan(h.db).consistencyChecks()[0]!;
const { min } = CDC_CHUNK_SIZES;

/** Content whose counters are all as OxiCloud's upload path leaves them. */
async function cleanContent() {
  const shared = randomBytes(min);
  // Two multi-chunk files sharing their first chunk; the first repeats it.
  const x = await w.upload({ name: 'x.bin', data: Buffer.concat([shared, shared, randomBytes(500)]) });
  const y = await w.upload({
    name: 'y.bin',
    data: Buffer.concat([shared, randomBytes(min), randomBytes(7)]),
  });
  const yCopy = await w.upload({ name: 'y-copy.bin', data: y.bytes });
  // A one-chunk file in three files rows (one trashed): one manifest lists its hash.
  const one = await w.upload({ name: 'one.txt', data: Buffer.from('one chunk') });
  await w.upload({ name: 'one-2.txt', data: one.bytes });
  const oneTrashed = await w.upload({ name: 'one-3.txt', data: one.bytes });
  await db.pool.query(`UPDATE storage.files SET is_trashed = true, trashed_at = ${AGE} WHERE id = $1`, [
    oneTrashed.fileId,
  ]);
  // A legacy blob in two files rows, the empty file (no blob row).
  const legacy = await w.upload({ name: 'old.bin', data: randomBytes(100), legacy: true });
  await w.upload({ name: 'old-2.bin', data: legacy.bytes, legacy: true });
  const empty = await w.upload({ name: 'empty', data: Buffer.alloc(0) });
  // Loose chunks: unreferenced and marked; pinned without clearing the mark (pin_claimable_chunks).
  const loose = randomBytes(32).toString('hex');
  const pinned = randomBytes(32).toString('hex');
  await db.pool.query(
    `INSERT INTO storage.blobs (hash, size, ref_count, orphaned_at, created_at)
     VALUES ($1, 10, 0, ${AGE}, ${AGE}), ($2, 10, 1, ${AGE}, ${AGE})`,
    [loose, pinned],
  );
  await db.pool.query(
    `INSERT INTO storage.chunk_manifests (file_hash, chunk_hashes, chunk_sizes, total_size, chunk_count, created_at)
     VALUES ($1, ARRAY[$2], ARRAY[10], 10, 1, ${AGE})`,
    [randomBytes(32).toString('hex'), pinned],
  );
  return { shared: x.objects[0]!.hash, x, y, yCopy, one, legacy, empty, loose, pinned };
}

describe('blobs_consistency on OxiCloud’s domain (OxiBlobRowScan)', () => {
  it('is blobs_consistency of the blob_rows subsystem', () => {
    expect(check().name).toBe(BLOBS_CONSISTENCY_CHECK_NAME);
    expect(new OxiBlobRowScan(h.db).subsystem()).toBe('blob_rows');
  });

  it('clean counters (chunks once per manifest, one-chunk files, legacy, loose and pinned chunks) → 0 findings', async () => {
    const world = await cleanContent();
    const { rows } = await db.pool.query('SELECT hash, ref_count FROM storage.blobs');
    const counts = new Map(rows.map((r) => [r.hash as string, r.ref_count as number]));
    expect(counts.get(world.shared)).toBe(2);
    expect(counts.get(world.one.hash)).toBe(1);
    expect(counts.get(world.legacy.hash)).toBe(2);
    expect(counts.has(world.empty.hash)).toBe(false);
    // The pure rule agrees with the rows the upload path wrote.
    const manifests = await db.pool.query('SELECT file_hash, chunk_hashes FROM storage.chunk_manifests');
    const files = await db.pool.query('SELECT blob_hash FROM storage.files');
    const expectation = new BlobRefCountExpectation()
      .addManifests(manifests.rows.map((m) => ({ fileHash: m.file_hash, chunkHashes: m.chunk_hashes })))
      .addFiles(files.rows.map((f) => ({ blobHash: f.blob_hash })));
    for (const [hash, refCount] of counts)
      expect(expectation.expectedFor(hash).expected, hash).toBe(refCount);

    const run = await h.run(check(), { batch_size: 3 });
    expect(run.status).toBe('Completed');
    expect(run.findings).toEqual([]);
    expect(run.stats['scanned_count']).toBe(counts.size);
  });

  it('a chunk row’s ref_count off → ref_count_mismatch for that chunk, file_count = the manifests listing it', async () => {
    const { shared } = await cleanContent();
    await db.pool.query('UPDATE storage.blobs SET ref_count = 3 WHERE hash = $1', [shared]);
    const run = await h.run(check());
    expect(summary(run.findings)).toEqual([`${REF_COUNT_MISMATCH} Drift ${shared}`]);
    expect(run.findings[0]?.detail).toMatchObject({ ref_count: 3, file_count: 2, delta: 1 });
  });

  it('a one-chunk file bulk-deleted (the trigger decrements its chunk row) → ref_count_mismatch, expected 1', async () => {
    const { one } = await cleanContent();
    await db.pool.query('DELETE FROM storage.files WHERE blob_hash = $1 AND is_trashed', [one.hash]);
    const run = await h.run(check());
    expect(summary(run.findings)).toEqual([`${REF_COUNT_MISMATCH} Drift ${one.hash}`]);
    expect(run.findings[0]?.detail).toMatchObject({ ref_count: 0, file_count: 1 });
  });

  it('a legacy blob’s ref_count lowered → ref_count_mismatch against its files rows', async () => {
    const { legacy } = await cleanContent();
    await db.pool.query('UPDATE storage.blobs SET ref_count = 1 WHERE hash = $1', [legacy.hash]);
    const run = await h.run(check());
    expect(summary(run.findings)).toEqual([`${REF_COUNT_MISMATCH} Drift ${legacy.hash}`]);
    expect(run.findings[0]?.detail).toMatchObject({ ref_count: 1, file_count: 2, delta: -1 });
  });

  it('a blob row under a multi-chunk file’s own hash, counted → ref_count_mismatch, expected 0 (a leak)', async () => {
    const { y } = await cleanContent();
    await db.pool.query(
      `INSERT INTO storage.blobs (hash, size, ref_count, created_at) VALUES ($1, $2, 2, ${AGE})`,
      [y.hash, y.size],
    );
    const run = await h.run(check());
    expect(summary(run.findings)).toEqual([`${REF_COUNT_MISMATCH} Drift ${y.hash}`]);
    expect(run.findings[0]?.detail).toMatchObject({ ref_count: 2, file_count: 0 });
  });

  it('ref_count 0 with orphaned_at NULL → orphaned_at_mismatch (unreferenced_never_marked); a mark while referenced is no finding', async () => {
    const { loose, shared } = await cleanContent();
    await db.pool.query('UPDATE storage.blobs SET orphaned_at = NULL WHERE hash = $1', [loose]);
    await db.pool.query(`UPDATE storage.blobs SET orphaned_at = ${AGE} WHERE hash = $1`, [shared]);
    const run = await h.run(check());
    expect(summary(run.findings)).toEqual([`${ORPHANED_AT_MISMATCH} Drift ${loose}`]);
    expect(run.findings[0]?.detail).toMatchObject({ reason: 'unreferenced_never_marked', ref_count: 0 });
  });
});
