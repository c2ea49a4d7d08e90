import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PgFindingStore } from '@oxicloud/consistency';
import {
  type BlobSequenceHasher,
  type BlobStorage,
  MANIFEST_HASH_MISMATCH,
  MANIFEST_REF_COUNT_HIGH,
  MANIFEST_REF_COUNT_LOW,
  MANIFEST_SHAPE_MISMATCH,
  MANIFEST_UNREFERENCED,
  MANIFESTS_CONSISTENCY_CHECK_NAME,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EncryptedBlobStorage } from '../blob/encrypted-blob-storage.js';
import { LocalFsBlobStorage } from '../blob/local-fs-blob-storage.js';
import { CDC_CHUNK_SIZES } from '../content/file-content.js';
import { blake3Hex } from '../hashing/blake3.js';
import { Blake3WorkerPool } from '../hashing/blake3-worker-pool.js';
import { createBlobHasher } from '../hashing/streaming-blob-hasher.js';
import { MULTI_CHUNK_PAGE_MAX_CHUNKS, OxiManifestScan } from './oxi-manifest-scan.js';
import { AGE, type OxiHarness, type OxiWorld, oxiHarness, oxiWorld, summary } from './test-fixtures.js';

let db: TestDatabase;
let h: OxiHarness;
let w: OxiWorld;
let dir: string;
let workers: Blake3WorkerPool;
/** A real store and a world writing its bytes there: the local disk, and an encrypted one (AES-256-GCM) over it. */
const stores: Record<'local' | 'encrypted', { blobs: BlobStorage; hasher: BlobSequenceHasher; w: OxiWorld }> =
  {} as never;

/**
 * The hasher the check is built with (the harness registers the first check
 * of a name for the whole file): it counts what a run reads and hashes with
 * the current test's store, and throws when a test has none (a run that must
 * read no bytes).
 */
const probe = {
  store: null as BlobSequenceHasher | null,
  sequences: 0,
  blobs: 0,
  onSequence: undefined as ((calls: number) => void) | undefined,
};
const target = (): BlobSequenceHasher => {
  if (probe.store === null) throw new Error('this run read bytes: it must not');
  return probe.store;
};
const probingHasher: BlobSequenceHasher = {
  hashStoredBlob(hash, signal) {
    probe.blobs++;
    return target().hashStoredBlob(hash, signal);
  },
  hashStoredSequence(hashes, signal) {
    probe.sequences++;
    probe.onSequence?.(probe.sequences);
    return target().hashStoredSequence(hashes, signal);
  },
};

beforeAll(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  h = oxiHarness(db.pool);
  w = await oxiWorld(db.pool);
  dir = await mkdtemp(join(tmpdir(), 'oxicloud-manifests-'));
  workers = new Blake3WorkerPool({ size: 2 });
  const local = new LocalFsBlobStorage({ root: join(dir, 'plain') });
  const encrypted = new EncryptedBlobStorage({
    inner: new LocalFsBlobStorage({ root: join(dir, 'encrypted') }),
    key: randomBytes(32),
  });
  for (const [name, blobs] of [
    ['local', local],
    ['encrypted', encrypted],
  ] as const) {
    stores[name] = { blobs, hasher: createBlobHasher(blobs, workers), w: await oxiWorld(db.pool, blobs) };
  }
});
afterAll(async () => {
  await h?.close();
  await h?.db.destroy();
  await workers?.close();
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  await db.pool.query(
    'DELETE FROM storage.files; DELETE FROM storage.chunk_manifests; DELETE FROM storage.blobs',
  );
  Object.assign(probe, { store: null, sequences: 0, blobs: 0, onSequence: undefined });
});

const check = () =>
  new OxiManifestScan(h.db, {
    checks: { manifests_consistency: { hasher: probingHasher } },
  }).consistencyChecks()[0]!;
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
    // With a hasher, deep runs have a pass of their own, declared with the kind it records.
    expect(check().deep).toBe(true);
    expect(check().kinds.find((k) => k.kind === MANIFEST_HASH_MISMATCH)).toMatchObject({
      severity: 'DataLoss',
      meaning: expect.stringMatching(/a pass of their own.*re-reads shared chunks/s),
    });
    // Without one, neither.
    const plain = new OxiManifestScan(h.db).consistencyChecks()[0]!;
    expect(plain.deep).toBeUndefined();
    expect(plain.kinds.map((k) => k.kind)).not.toContain(MANIFEST_HASH_MISMATCH);
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

/** Three chunks of the fixture's 64 KiB cut points: 64 KiB, 64 KiB and a short tail. */
const threeChunks = () => Buffer.concat([randomBytes(min), randomBytes(min), randomBytes(900)]);
/** A manifest's chunks listed in another order: both arrays, so the shape still holds. */
const reorder = (fileHash: string, order: readonly number[]) =>
  q(
    `UPDATE storage.chunk_manifests
        SET chunk_hashes = ARRAY(SELECT chunk_hashes[i] FROM unnest($2::int[]) WITH ORDINALITY AS o(i, n) ORDER BY n),
            chunk_sizes = ARRAY(SELECT chunk_sizes[i] FROM unnest($2::int[]) WITH ORDINALITY AS o(i, n) ORDER BY n)
      WHERE file_hash = $1`,
    [fileHash, order],
  );

describe.each([
  'local',
  'encrypted',
] as const)('manifests_consistency deep: the whole-file hash, %s store', (name) => {
  const use = () => {
    probe.store = stores[name].hasher;
    return stores[name];
  };

  it('clean multi-chunk content → 0 findings; each multi-chunk manifest hashed once, one-chunk and empty not', async () => {
    const { w } = use();
    const a = await w.upload({ name: 'a.bin', data: threeChunks() });
    await w.upload({ name: 'a-copy.bin', data: a.bytes });
    // Shares a's first chunk: the pass reads it again, once per manifest listing it.
    await w.upload({ name: 'b.bin', data: Buffer.concat([a.objects[0]!.bytes, randomBytes(min + 5)]) });
    await w.upload({ name: 'one.txt', data: Buffer.from('one chunk') });
    await w.upload({ name: 'empty', data: Buffer.alloc(0) });
    await q(`UPDATE storage.chunk_manifests SET created_at = ${AGE}`);
    const run = await h.run(check(), { deep: true, batch_size: 3 });
    expect(run.status).toBe('Completed');
    expect(run.findings).toEqual([]);
    expect(probe).toMatchObject({ sequences: 2, blobs: 0 });
    // Four manifests walked twice: the rows, then the whole-file pass.
    expect(run.stats['scanned_count']).toBe(8);
  });

  it('chunks listed in another order (shape intact, every chunk intact) → exactly one manifest_hash_mismatch', async () => {
    const { w } = use();
    const a = await w.upload({ name: 'a.bin', data: threeChunks() });
    await w.upload({ name: 'a-trashed.bin', data: a.bytes });
    await w.upload({ name: 'b.bin', data: threeChunks() });
    await q(`UPDATE storage.chunk_manifests SET created_at = ${AGE}`);
    await reorder(a.hash, [1, 3, 2]);
    const run = await h.run(check(), { deep: true });
    expect(summary(run.findings)).toEqual([`${MANIFEST_HASH_MISMATCH} DataLoss ${a.hash}`]);
    const [c0, c1, c2] = a.objects.map((o) => o.bytes);
    expect(run.findings[0]?.detail).toEqual({
      actual_hash: blake3Hex(Buffer.concat([c0!, c2!, c1!])),
      total_size: a.size,
      chunk_count: 3,
      file_count: 2,
    });
    // Its magnitude (the findings ledger keeps it): the files that read the wrong bytes.
    const { rows: ledger } = await q(
      'SELECT magnitude::float8 AS magnitude FROM jobs.findings WHERE check_name = $1 AND kind = $2 AND resource_id = $3',
      [MANIFESTS_CONSISTENCY_CHECK_NAME, MANIFEST_HASH_MISMATCH, a.hash],
    );
    expect(ledger[0]?.magnitude).toBe(2);
    // Before reporting, its three chunks were hashed one by one against their keys.
    expect(probe).toMatchObject({ sequences: 2, blobs: 3 });

    // A run without deep reads no bytes (the probe throws on any read) and does not look at the order.
    probe.store = null;
    const normal = await h.run(check());
    expect(normal.status).toBe('Completed');
    expect(normal.findings).toEqual([]);
    expect(probe).toMatchObject({ sequences: 2, blobs: 3 });
  });

  it('a chunk with other bytes, or missing, is the chunk’s finding (storage_consistency’s), not a manifest’s', async () => {
    const { w, blobs } = use();
    const a = await w.upload({ name: 'a.bin', data: threeChunks() });
    const b = await w.upload({ name: 'b.bin', data: threeChunks() });
    await q(`UPDATE storage.chunk_manifests SET created_at = ${AGE}`);
    const overwritten = a.objects[1]!;
    await blobs.put(overwritten.hash, randomBytes(overwritten.size), overwritten.size);
    await blobs.delete(b.objects[2]!.hash);
    const run = await h.run(check(), { deep: true });
    expect(run.status).toBe('Completed');
    expect(run.findings).toEqual([]);
    // a's whole differed, so its chunks were re-hashed (the overwritten one failed); b could not be read at all.
    expect(probe.sequences).toBe(2);
    expect(probe.blobs).toBeGreaterThanOrEqual(1);
  });

  it('an abort mid-pass pauses at the last manifest hashed; the resume finishes the pass, the finding once', async () => {
    const { w } = use();
    // Registers the check (the harness keeps the first) before the run driven by hand.
    await h.run(check());
    const uploads = [];
    for (let i = 0; i < 4; i++) uploads.push(await w.upload({ name: `f${i}.bin`, data: threeChunks() }));
    await q(`UPDATE storage.chunk_manifests SET created_at = ${AGE}`);
    const sorted = uploads.map((u) => u.hash).sort();
    await reorder(sorted[0]!, [2, 1, 3]);
    const controller = new AbortController();
    probe.onSequence = (calls) => {
      if (calls === 2) controller.abort(new Error('shutdown'));
    };
    const findings = new PgFindingStore({ pool: db.pool });
    const latest = async () => {
      const { rows } = await q(
        `SELECT id, status, stats, cursor FROM jobs.recoverable_runs
          WHERE job_name = $1 ORDER BY started_at DESC, id DESC LIMIT 1`,
        [MANIFESTS_CONSISTENCY_CHECK_NAME],
      );
      const row = rows[0];
      return { ...row, findings: await findings.list(row.id, { limit: 100 }) };
    };

    await h.engine.runOrResume(MANIFESTS_CONSISTENCY_CHECK_NAME, {
      params: { deep: true, batch_size: 1 },
      signal: controller.signal,
    });
    const first = await latest();
    expect(first.status).toBe('Paused');
    // Phase 2, after the one manifest whose whole file was hashed; its finding committed with it.
    expect(first.cursor[0]).toBe(2);
    expect(Buffer.from(first.cursor.subarray(1)).toString('hex')).toBe(sorted[0]);
    expect(summary(first.findings)).toEqual([`${MANIFEST_HASH_MISMATCH} DataLoss ${sorted[0]}`]);

    probe.onSequence = undefined;
    await h.engine.runOrResume(MANIFESTS_CONSISTENCY_CHECK_NAME);
    const second = await latest();
    expect(second.id).toBe(first.id);
    expect(second.status).toBe('Completed');
    expect(summary(second.findings)).toEqual([`${MANIFEST_HASH_MISMATCH} DataLoss ${sorted[0]}`]);
    // Each manifest hashed once, the one the abort cut twice; each row walked once per phase.
    expect(probe.sequences).toBe(5);
    expect(second.stats['scanned_count']).toBe(8);
  });
});

describe('the deep pass’s walk (OxiManifestScan.scanMultiChunkManifests)', () => {
  const hex = (i: number) => i.toString(16).padStart(64, '0');
  /** A manifest row of `count` generated chunk keys (no bytes, no files: the walk reads the rows only). */
  const row = (
    fileHash: string,
    count: number,
    created: string = AGE,
    firstChunk = "lpad(to_hex(i), 64, '0')",
  ) =>
    q(
      `INSERT INTO storage.chunk_manifests
         (file_hash, chunk_hashes, chunk_sizes, total_size, chunk_count, ref_count, created_at)
       SELECT $1, ARRAY(SELECT CASE WHEN i = 1 THEN ${firstChunk} ELSE lpad(to_hex(i), 64, '0') END
                          FROM generate_series(1, $2::int) i),
              array_fill(1::bigint, ARRAY[$2::int]), $2, $2, 1, ${created}`,
      [fileHash, count],
    );

  it('sends the multi-chunk manifests old enough with readable keys, and ends a page at its chunk budget', async () => {
    const big = Math.ceil(MULTI_CHUNK_PAGE_MAX_CHUNKS * 0.6);
    await row(hex(1), 1);
    await row(hex(2), big);
    await row(hex(3), 2, 'now()'); // young
    await row(hex(4), 2, AGE, "upper(lpad(to_hex(i), 64, 'a'))"); // a malformed key: unreadable
    await row(hex(5), big);
    await row(hex(6), 2);
    const scan = new OxiManifestScan(h.db);
    const options = { createdBefore: new Date(Date.now() - 3_600_000) };
    const brief = (page: Awaited<ReturnType<OxiManifestScan['scanMultiChunkManifests']>>) => ({
      ...page,
      manifests: page.manifests.map((m) => `${m.fileHash.slice(-1)}@${m.position}:${m.chunkHashes.length}`),
    });
    // The budget is reached within hex(5): the page ends there, whatever the limit.
    expect(brief(await scan.scanMultiChunkManifests(null, 10, options))).toEqual({
      scanned: 5,
      lastKey: hex(5),
      manifests: [`2@2:${big}`, `5@5:${big}`],
      last: false,
    });
    expect(brief(await scan.scanMultiChunkManifests(hex(5), 10, options))).toEqual({
      scanned: 1,
      lastKey: hex(6),
      manifests: ['6@1:2'],
      last: true,
    });
    // A full page without anything to hash still moves the walk on.
    expect(brief(await scan.scanMultiChunkManifests(hex(2), 2, options))).toEqual({
      scanned: 2,
      lastKey: hex(4),
      manifests: [],
      last: false,
    });
    // Pass 2 re-reads only what the walk would send: not one-chunk, young or missing manifests.
    const now = await scan.rereadMultiChunkManifests([hex(1), hex(3), hex(6), hex(9)], options);
    expect(
      now.map((m) => ({ fileHash: m.fileHash, chunks: m.chunkHashes.length, files: m.fileCount })),
    ).toEqual([{ fileHash: hex(6), chunks: 2, files: 0 }]);
  });
});
