import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { StoredFinding } from '@oxicloud/consistency';
import { blake3Hex } from '@oxicloud/storage';
import {
  BLOB_HASH_MISMATCH,
  BLOB_MIME_MISMATCH,
  MISSING_BLOB_BYTES,
  ORPHAN_BLOB,
  STORAGE_CONSISTENCY_CHECK_NAME,
} from '@oxicloud/tenants';
import type { TestDatabase } from '@oxicloud/test-support';
import { beforeEach, describe, expect, it } from 'vitest';
import { type ConsistencyHarness, summary } from './consistency-fixtures.js';
import {
  ago,
  type BlobWorld,
  corruptLocalBlob,
  DAY,
  HOUR,
  indexWithHook,
  putBlob,
  storageWithListHook,
  useBlobWorld,
} from './storage-consistency-fixtures.js';

const ctx = useBlobWorld();
let db: TestDatabase;
let h: ConsistencyHarness;
let w: BlobWorld;
beforeEach(() => {
  ({ db, h, w } = ctx);
});

const put = (options: Parameters<typeof putBlob>[2] = {}) => putBlob(db.pool, w, options);
const kinds = (findings: readonly StoredFinding[]) =>
  findings.map((f) => `${f.kind} ${f.severity} ${f.resourceId}`);

/** Five consistent blobs: bytes, row, one or two files each, all two days old. */
async function cleanBlobs(n = 5) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await put({ files: 1 + (i % 2) }));
  return out;
}

describe('storage_consistency on LocalFsBlobStorage + Postgres', () => {
  it('is the check of the blobs subsystem under the plan job name', () => {
    const check = w.check();
    expect(check.name).toBe(STORAGE_CONSISTENCY_CHECK_NAME);
    expect(check.name).toBe('storage_consistency');
    expect(check.subsystem).toBe('blobs');
    expect(check.concurrentSafe()).toBe(true);
    expect(check.graceWindowMs({ force: false, deep: false })).toBe(HOUR);
  });

  it('clean data: completed, 0 findings, every blob scanned', async () => {
    await cleanBlobs();
    const run = await h.run(w.check());
    expect(run.outcome).toMatchObject({ kind: 'ok', count: 0, extra: { completed: true } });
    expect(run.findings).toEqual([]);
    expect(run.stats['scanned_count']).toBe(5);
    expect(await w.check().estimateTotal?.({ force: false, deep: false })).toBeGreaterThanOrEqual(5);
  });

  it('an old file on disk without a row → exactly one orphan_blob (Reclaimable)', async () => {
    await cleanBlobs();
    const orphan = await put({ row: false });
    const run = await h.run(w.check());
    expect(kinds(run.findings)).toEqual([`orphan_blob Reclaimable ${orphan.hash}`]);
    expect(run.findings[0]?.detail).toMatchObject({
      size: orphan.bytes.length,
      has_row: false,
      backend: 'local',
    });
    expect(run.outcome).toMatchObject({ kind: 'ok', count: 1 });
    expect(run.stats['scanned_count']).toBe(6);
    expect(
      h.lines.filter(
        (l) => l['target'] === 'audit' && l['event'] === 'consistency.storage_consistency.finding',
      ),
    ).toHaveLength(1);
  });

  it('a young orphan (mtime within the grace) → nothing, unless force', async () => {
    await cleanBlobs(2);
    const young = await put({ row: false, modifiedAt: ago(10 * 60_000) });
    expect((await h.run(w.check())).findings).toEqual([]);
    const forced = await h.run(w.check(), { force: true });
    expect(kinds(forced.findings)).toEqual([`orphan_blob Reclaimable ${young.hash}`]);
  });

  it("a row with ref_count 0, marked (GC not yet run) or never marked → nothing (the unmarked row is blobs_consistency's)", async () => {
    await cleanBlobs(2);
    await put({ files: 0 }); // the insert trigger sets orphaned_at
    await put({ files: 0, bytes: false }); // GC half-way: bytes gone, row still there, nothing references it
    await put({ files: 0, orphanedAt: null }); // never marked: blobs_consistency's orphaned_at_mismatch
    const run = await h.run(w.check());
    expect(run.findings).toEqual([]);
  });

  it('a row whose bytes are gone → exactly one missing_blob_bytes (DataLoss) with its fan-out', async () => {
    await cleanBlobs();
    const lost = await put({ files: 3 });
    await w.storage.delete(lost.hash);
    await put({ bytes: false, createdAt: ago(5 * 60_000) }); // young row: its bytes may still be on their way
    const run = await h.run(w.check());
    expect(kinds(run.findings)).toEqual([`missing_blob_bytes DataLoss ${lost.hash}`]);
    expect(run.findings[0]?.detail).toMatchObject({
      size: lost.bytes.length,
      ref_count: 3,
      file_count: 3,
      live_file_count: 3,
      affected_file_ids: lost.fileIds,
      affected_file_ids_truncated: false,
    });
  });

  it('reports missing bytes after the last listed key', async () => {
    // The first key in hash order keeps its bytes: the listing ends there, the rows go on.
    const [kept, ...lost] = (await cleanBlobs(7)).sort((a, b) => (a.hash < b.hash ? -1 : 1));
    for (const b of lost) await w.storage.delete(b.hash);
    const run = await h.run(w.check(), { batch_size: 2 });
    expect(summary(run.findings)).toEqual(lost.map((b) => `missing_blob_bytes DataLoss ${b.hash}`).sort());
    expect(summary(run.findings).join()).not.toContain(kept!.hash);
    expect(run.stats['scanned_count']).toBe(7);
  });

  it('an empty backend under old rows is a wrong root, not data loss: the store canary refuses the run, recording nothing', async () => {
    const blobs = await cleanBlobs(6);
    for (const b of blobs) await w.storage.delete(b.hash);
    const run = await h.run(w.check(), { batch_size: 2 });
    expect(run.status).toBe('Failed');
    expect(run.outcome).toMatchObject({
      kind: 'err',
      message: expect.stringMatching(
        /^storage_consistency: refused: wrong storage root \/ key: none of \d+ objects .* \d+ absent \(wrong storage root or bucket\?\)/,
      ),
    });
    expect(run.findings).toEqual([]);
    // One object back where the rows say (the first in hash order, the canary's first sample):
    // the store is the rows' own, and the rest is real loss.
    const first = [...blobs].sort((a, b) => (a.hash < b.hash ? -1 : 1))[0]!;
    await w.storage.put(first.hash, first.bytes, first.bytes.length);
    const after = await h.run(w.check(), { batch_size: 2 });
    expect(after.status).toBe('Completed');
    expect(summary(after.findings)).toHaveLength(5);
  });

  it('small batches: orphans and missing interleaved in hash order are all found once', async () => {
    const blobs = await cleanBlobs(9);
    const orphans = [await put({ row: false }), await put({ row: false }), await put({ row: false })];
    const missing = [blobs[1], blobs[4], blobs[8]].map((b) => b?.hash as string);
    for (const hash of missing) await w.storage.delete(hash);
    const run = await h.run(w.check(), { batch_size: 2 });
    expect(summary(run.findings)).toEqual(
      [
        ...orphans.map((o) => `orphan_blob Reclaimable ${o.hash}`),
        ...missing.map((m) => `missing_blob_bytes DataLoss ${m}`),
      ].sort(),
    );
    expect(run.stats['scanned_count']).toBe(12);
    expect(run.outcome).toMatchObject({ kind: 'ok', count: 6 });
  });

  describe('Pass 2: a transition between the passes is no finding', () => {
    it('a row that lands after Pass 1 saw bytes without a row → no orphan_blob', async () => {
      await cleanBlobs(2);
      const late = await put({ row: false });
      const index = indexWithHook(w.index, async () => {
        await db.pool.query(
          'INSERT INTO storage.blobs (hash, size, created_at) VALUES ($1, $2, now()) ON CONFLICT DO NOTHING',
          [late.hash, late.bytes.length],
        );
      });
      const run = await h.run(w.check({ index }));
      expect(run.status).toBe('Completed');
      expect(run.findings).toEqual([]);
    });

    it('bytes that land after the listing missed them → no missing_blob_bytes', async () => {
      await cleanBlobs(2);
      const late = await put({ bytes: false });
      const blobs = storageWithListHook(w.storage, {
        afterList: async () => {
          await w.storage.put(late.hash, late.bytes, late.bytes.length);
        },
      });
      const run = await h.run(w.check({ blobs }));
      expect(run.status).toBe('Completed');
      expect(run.findings).toEqual([]);
    });

    it('a row deleted after Pass 1 saw it without bytes → no missing_blob_bytes', async () => {
      await cleanBlobs(2);
      const gone = await put({ bytes: false });
      const index = indexWithHook(w.index, async () => {
        await db.pool.query('DELETE FROM storage.files WHERE blob_hash = $1', [gone.hash]);
        await db.pool.query('DELETE FROM storage.blobs WHERE hash = $1', [gone.hash]);
      });
      expect((await h.run(w.check({ index }))).findings).toEqual([]);
    });

    it('without the transition the same setups are findings (the hooks are what made the difference)', async () => {
      await cleanBlobs(2);
      const orphan = await put({ row: false });
      const missing = await put({ bytes: false });
      expect(summary((await h.run(w.check())).findings)).toEqual(
        [`orphan_blob Reclaimable ${orphan.hash}`, `missing_blob_bytes DataLoss ${missing.hash}`].sort(),
      );
    });
  });

  describe('deep mode', () => {
    it('bytes overwritten with other bytes → blob_hash_mismatch (DataLoss); not without deep', async () => {
      await cleanBlobs(3);
      const victim = await put({ files: 2 });
      const other = await corruptLocalBlob(w.storage, victim.hash, ago(3 * DAY));
      expect((await h.run(w.check())).findings).toEqual([]);
      const run = await h.run(w.check(), { deep: true });
      expect(kinds(run.findings)).toEqual([`blob_hash_mismatch DataLoss ${victim.hash}`]);
      expect(run.findings[0]?.detail).toMatchObject({
        actual_hash: blake3Hex(other),
        stored_size: other.length,
        row_size: victim.bytes.length,
        ref_count: 2,
      });
    });

    it('respects the 24 h deep grace (bytes modified 2 h ago are not re-hashed), force makes it 0', async () => {
      await cleanBlobs(2);
      const victim = await put();
      await corruptLocalBlob(w.storage, victim.hash, ago(2 * HOUR));
      expect((await h.run(w.check(), { deep: true })).findings).toEqual([]);
      const forced = await h.run(w.check(), { deep: true, force: true });
      expect(kinds(forced.findings)).toEqual([`blob_hash_mismatch DataLoss ${victim.hash}`]);
    });

    it('a sniffed type that contradicts the recorded content type → blob_mime_mismatch (Drift)', async () => {
      const jpeg = Buffer.concat([
        Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]),
        Buffer.alloc(500, 7),
      ]);
      const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(400, 32)]);
      const wrong = await put({ data: jpeg, contentType: 'image/png' });
      await put({ data: Buffer.concat([jpeg, Buffer.from('x')]), contentType: 'image/jpeg' }); // right
      await put({ data: Buffer.concat([jpeg, Buffer.from('y')]), contentType: 'image/jpg' }); // alias
      await put({ data: pdf, contentType: 'application/octet-stream' }); // "unknown" is never contradicted
      await put({ data: Buffer.concat([pdf, Buffer.from('z')]), contentType: null });
      const run = await h.run(w.check(), { deep: true });
      expect(kinds(run.findings)).toEqual([`blob_mime_mismatch Drift ${wrong.hash}`]);
      expect(run.findings[0]?.detail).toMatchObject({
        recorded_content_type: 'image/png',
        sniffed_mime: 'image/jpeg',
      });
    });
  });

  it('cancel mid-scan → Paused with a cursor; resume → the same findings once, scanned_count kept', async () => {
    const blobs = await cleanBlobs(10);
    const orphans = [await put({ row: false }), await put({ row: false })];
    const missing = [blobs[2], blobs[7]].map((b) => b?.hash as string);
    for (const hash of missing) await w.storage.delete(hash);
    const expected = [
      ...orphans.map((o) => `orphan_blob Reclaimable ${o.hash}`),
      ...missing.map((m) => `missing_blob_bytes DataLoss ${m}`),
    ].sort();

    let cancelAt = 2;
    const index = indexWithHook(w.index, async (call) => {
      if (call === cancelAt) {
        await db.pool.query(
          "UPDATE jobs.recoverable_runs SET status = 'CancelRequested' WHERE job_name = $1 AND status = 'Running'",
          [STORAGE_CONSISTENCY_CHECK_NAME],
        );
      }
    });
    const check = w.check({ index });
    const first = await h.run(check, { batch_size: 3 });
    expect(first.status).toBe('Paused');
    expect(first.outcome).toMatchObject({ kind: 'ok', extra: { paused: true } });
    expect(first.cursor).not.toBeNull();
    expect(first.cursor?.[0]).toBe(1); // phase byte
    expect(first.cursor?.length).toBe(33);
    const scannedAtPause = first.stats['scanned_count'] as number;
    expect(scannedAtPause).toBeGreaterThan(0);
    expect(scannedAtPause).toBeLessThan(12);

    cancelAt = -1;
    const second = await h.run(check);
    expect(second.runId).toBe(first.runId);
    expect(second.status).toBe('Completed');
    expect(summary(second.findings)).toEqual(expected);
    expect(second.stats['scanned_count']).toBe(12);
    expect(second.stats['count']).toBe(expected.length);
    const { rows } = await db.pool.query(
      'SELECT count(*)::int AS n FROM jobs.run_findings WHERE run_id = $1',
      [second.runId],
    );
    expect(rows[0].n).toBe(expected.length);
  });

  it('a replayed batch (checkpoint lost) records nothing twice; Pass 2 on the replay drops what healed', async () => {
    await cleanBlobs(3);
    const orphan = await put({ row: false });
    let heal = false;
    const index = indexWithHook(w.index, async () => {
      if (!heal) return;
      await db.pool.query(
        'INSERT INTO storage.blobs (hash, size, created_at) VALUES ($1, $2, now()) ON CONFLICT DO NOTHING',
        [orphan.hash, orphan.bytes.length],
      );
    });
    const check = w.check({ index }); // the harness registers one instance per job name
    const first = await h.run(check);
    expect(kinds(first.findings)).toEqual([`orphan_blob Reclaimable ${orphan.hash}`]);
    const rewind = () =>
      db.pool.query(
        "UPDATE jobs.recoverable_runs SET status = 'Paused', cursor = NULL, completed_at = NULL WHERE id = $1",
        [first.runId],
      );
    // Replay as if the checkpoint had been lost: the same finding, not a second one, not counted again.
    await rewind();
    const replay = await h.run(check);
    expect(replay.runId).toBe(first.runId);
    expect(kinds(replay.findings)).toEqual([`orphan_blob Reclaimable ${orphan.hash}`]);
    expect(replay.stats['count']).toBe(1);
    // Replay again while its row lands between the passes: the finding recorded earlier is dropped.
    await rewind();
    heal = true;
    const healed = await h.run(check);
    expect(healed.findings).toEqual([]);
    expect(healed.stats['findings_dropped']).toBe(1);
  });
});

describe('storage_consistency over several thousand keys', () => {
  it('walks more than one default batch and finds the planted faults', async () => {
    const values: string[] = [];
    const params: unknown[] = [];
    const hashes: string[] = [];
    for (let i = 0; i < 1500; i++) {
      const bytes = randomBytes(16);
      const hash = blake3Hex(bytes);
      hashes.push(hash);
      // Straight into the shard (no fsync per blob): the layout LocalFsBlobStorage lists.
      await mkdir(dirname(w.storage.pathOf(hash)), { recursive: true });
      await writeFile(w.storage.pathOf(hash), bytes);
      params.push(hash, bytes.length);
      values.push(`($${params.length - 1}, $${params.length}, 1, now() - interval '2 days')`);
    }
    await db.pool.query(
      `INSERT INTO storage.blobs (hash, size, ref_count, created_at) VALUES ${values.join(',')}`,
      params,
    );
    // Every mtime is "now": force, so the grace does not hide the planted ones.
    const sorted = [...hashes].sort();
    const missing = [sorted[0], sorted[1000], sorted[1499]] as string[];
    for (const m of missing) await w.storage.delete(m);
    const orphan = await put({ row: false });
    const run = await h.run(w.check(), { force: true });
    expect(run.status).toBe('Completed');
    expect(summary(run.findings)).toEqual(
      [
        ...missing.map((m) => `missing_blob_bytes DataLoss ${m}`),
        `orphan_blob Reclaimable ${orphan.hash}`,
      ].sort(),
    );
    expect(run.stats['scanned_count']).toBe(1501);
  }, 60_000);
});

it('exports the finding kinds the tests spell out', () => {
  expect([ORPHAN_BLOB, MISSING_BLOB_BYTES, BLOB_HASH_MISMATCH, BLOB_MIME_MISMATCH]).toEqual([
    'orphan_blob',
    'missing_blob_bytes',
    'blob_hash_mismatch',
    'blob_mime_mismatch',
  ]);
});
