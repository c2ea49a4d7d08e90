import { randomBytes } from 'node:crypto';
import {
  MANIFEST_REF_COUNT_HIGH,
  MANIFEST_REF_COUNT_LOW,
  MANIFEST_SHAPE_MISMATCH,
  MANIFEST_UNREFERENCED,
  MANIFESTS_CONSISTENCY_CHECK_NAME,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CDC_CHUNK_SIZES } from '../content/file-content.js';
import { OxiManifestScan } from './oxi-manifest-scan.js';
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

const check = () => new OxiManifestScan(h.db).consistencyChecks()[0]!;
const { min } = CDC_CHUNK_SIZES;
const q = (text: string, values: unknown[] = []) => db.pool.query(text, values);

/** Content as OxiCloud's upload path leaves it: each manifest counts the files naming it. */
async function cleanContent() {
  const multi = await w.upload({
    name: 'multi.bin',
    data: Buffer.concat([randomBytes(min), randomBytes(900)]),
  });
  await w.upload({ name: 'multi-copy.bin', data: multi.bytes });
  const trashed = await w.upload({ name: 'multi-trashed.bin', data: multi.bytes });
  await q(`UPDATE storage.files SET is_trashed = true, trashed_at = ${AGE} WHERE id = $1`, [trashed.fileId]);
  const one = await w.upload({ name: 'one.txt', data: Buffer.from('one chunk') });
  const empty = await w.upload({ name: 'empty', data: Buffer.alloc(0) });
  await q(`UPDATE storage.chunk_manifests SET created_at = ${AGE}`);
  return { multi, one, empty };
}

describe('manifests_consistency on OxiCloud’s domain (OxiManifestScan)', () => {
  it('is manifests_consistency of the chunk_manifests subsystem, between files and blobs in the batch', () => {
    expect(check().name).toBe(MANIFESTS_CONSISTENCY_CHECK_NAME);
    expect(new OxiManifestScan(h.db).subsystem()).toBe('chunk_manifests');
    expect(check().order).toBeGreaterThan(30);
    expect(check().order).toBeLessThan(33);
  });

  it('clean manifests (multi-chunk with a trashed copy, one-chunk, empty) → 0 findings', async () => {
    const { multi } = await cleanContent();
    const { rows } = await q('SELECT ref_count FROM storage.chunk_manifests WHERE file_hash = $1', [
      multi.hash,
    ]);
    // Trashed files hold their content: the count includes them.
    expect(rows[0]?.ref_count).toBe(3);
    const run = await h.run(check(), { batch_size: 2 });
    expect(run.status).toBe('Completed');
    expect(run.findings).toEqual([]);
    expect(run.stats['scanned_count']).toBe(3);
  });

  it('a count below its files (what a folder copy leaves) → manifest_ref_count_low, DataLoss', async () => {
    const { multi } = await cleanContent();
    await q('UPDATE storage.chunk_manifests SET ref_count = 1 WHERE file_hash = $1', [multi.hash]);
    const run = await h.run(check());
    expect(summary(run.findings)).toEqual([`${MANIFEST_REF_COUNT_LOW} DataLoss ${multi.hash}`]);
    expect(run.findings[0]?.detail).toMatchObject({ ref_count: 1, file_count: 3, delta: -2, chunk_count: 2 });
  });

  it('a count above its files (a bulk delete) → manifest_ref_count_high; no file left → manifest_unreferenced', async () => {
    const { multi, one } = await cleanContent();
    // The bulk paths delete files rows and never touch the manifest (fact sheet §5).
    await q('DELETE FROM storage.files WHERE blob_hash = $1 AND is_trashed', [multi.hash]);
    await q('DELETE FROM storage.files WHERE blob_hash = $1', [one.hash]);
    const run = await h.run(check());
    expect(summary(run.findings).sort()).toEqual(
      [
        `${MANIFEST_REF_COUNT_HIGH} Drift ${multi.hash}`,
        `${MANIFEST_UNREFERENCED} Reclaimable ${one.hash}`,
      ].sort(),
    );
    const unreferenced = run.findings.find((f) => f.kind === MANIFEST_UNREFERENCED);
    expect(unreferenced?.detail).toMatchObject({ ref_count: 1, file_count: 0, total_size: one.size });
  });

  it('each broken shape rule is named in one manifest_shape_mismatch, by manifestShapeProblems’ codes', async () => {
    const { multi, one, empty } = await cleanContent();
    const other = await w.upload({ name: 'other.txt', data: Buffer.from('another one chunk') });
    const twin = await w.upload({
      name: 'twin.bin',
      data: Buffer.concat([randomBytes(min), randomBytes(3)]),
    });
    await q(`UPDATE storage.chunk_manifests SET created_at = ${AGE}`);
    await q('UPDATE storage.chunk_manifests SET total_size = total_size + 1 WHERE file_hash = $1', [
      multi.hash,
    ]);
    await q('UPDATE storage.chunk_manifests SET chunk_count = 2 WHERE file_hash = $1', [one.hash]);
    await q(
      `UPDATE storage.chunk_manifests
          SET chunk_hashes = ARRAY[upper($2)], chunk_sizes = ARRAY[2097152::bigint], total_size = 2097152,
              chunk_count = 1
        WHERE file_hash = $1`,
      [empty.hash, randomBytes(32).toString('hex')],
    );
    // A one-chunk manifest must be named by its chunk (same bytes).
    await q('UPDATE storage.chunk_manifests SET chunk_hashes = ARRAY[$2] WHERE file_hash = $1', [
      other.hash,
      multi.objects[0]!.hash,
    ]);
    // Emptied arrays under a non-empty hash: the empty manifest is BLAKE3 of nothing.
    await q(
      `UPDATE storage.chunk_manifests SET chunk_hashes = '{}', chunk_sizes = '{}', total_size = 0, chunk_count = 0
        WHERE file_hash = $1`,
      [twin.hash],
    );
    const run = await h.run(check());
    const problems = Object.fromEntries(
      run.findings
        .filter((f) => f.kind === MANIFEST_SHAPE_MISMATCH)
        .map((f) => [f.resourceId, (f.detail as { problems: string[] }).problems]),
    );
    expect(problems).toEqual({
      [multi.hash]: ['total_size_mismatch'],
      [one.hash]: ['chunk_count_mismatch'],
      [empty.hash]: ['chunk_too_large', 'invalid_hash'],
      [other.hash]: ['single_chunk_hash_mismatch'],
      [twin.hash]: ['empty_file_hash_mismatch'],
    });
    expect(run.findings.every((f) => f.kind === MANIFEST_SHAPE_MISMATCH)).toBe(true);
  });

  it('a young manifest is left to the grace unless forced', async () => {
    const { multi } = await cleanContent();
    await q('UPDATE storage.chunk_manifests SET ref_count = 1, created_at = now() WHERE file_hash = $1', [
      multi.hash,
    ]);
    expect((await h.run(check())).findings).toEqual([]);
    expect(summary((await h.run(check(), { force: true })).findings)).toEqual([
      `${MANIFEST_REF_COUNT_LOW} DataLoss ${multi.hash}`,
    ]);
  });
});
