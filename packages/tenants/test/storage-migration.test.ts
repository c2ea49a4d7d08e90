import { describe, expect, it } from 'vitest';
import type { BlobRow } from '../src/ports/blob-walk-repository.js';
import {
  createStorageMigrationJob,
  MIGRATION_FAILED_KIND,
  type StorageMigrationJob,
} from '../src/storage-migration/index.js';
import {
  fakeHash,
  hex,
  MemoryBlobStorage,
  MemoryBlobWalk,
  MemoryFindings,
  MemoryJobStore,
} from './fixtures/part2-fakes.js';

interface Setup {
  readonly source: MemoryBlobStorage;
  readonly target: MemoryBlobStorage;
  readonly walk: MemoryBlobWalk;
  readonly findings: MemoryFindings;
  readonly job: StorageMigrationJob;
  readonly rows: BlobRow[];
}

/** `n` blobs on a local source, an empty S3 target, the job copying local → s3. */
function setup(n: number, options: { s3Configured?: boolean } = {}): Setup {
  const source = new MemoryBlobStorage('local');
  const target = new MemoryBlobStorage('s3');
  const rows: BlobRow[] = [];
  for (let i = 0; i < n; i++) {
    const bytes = Buffer.from(`blob number ${i} `.repeat(i + 1));
    const hash = fakeHash(bytes);
    source.blobs.set(hash, bytes);
    rows.push({ hash, size: bytes.length });
  }
  const walk = new MemoryBlobWalk(rows);
  const findings = new MemoryFindings();
  const job = createStorageMigrationJob({
    blobs: walk,
    sourceBackend: 'local',
    resolveBackend: (name) => (name === 'local' ? source : options.s3Configured === false ? null : target),
    findings,
  });
  return { source, target, walk, findings, job, rows: walk.rows };
}

const signal = () => new AbortController().signal;

describe('storage_migration params', () => {
  const { job } = setup(0);

  it('fills in the defaults', () => {
    expect(job.validateParams({ target: 's3' })).toEqual({
      ok: true,
      params: {
        target: 's3',
        batch_size: 1000,
        concurrency: 4,
        throttle_ms: 0,
        max_consecutive_failures: 100,
      },
    });
  });

  it('requires a target and names the allowed ones', () => {
    const result = job.validateParams({});
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toMatch(/^target: required; one of "local", "s3"$/);
  });

  it('names the allowed targets when the target is not one of them', () => {
    const result = job.validateParams({ target: 'gcs' });
    expect(!result.ok && result.message).toBe('target: "gcs" is not a backend; one of "local", "s3"');
  });

  it('refuses a target equal to the source, saying which target is allowed', () => {
    const result = job.validateParams({ target: 'local' });
    expect(result).toEqual({
      ok: false,
      message: expect.stringMatching(
        /target "local" is the backend this server serves from.*allowed target: s3/,
      ),
    });
  });

  it('refuses a target this server has no settings for', () => {
    const result = setup(0, { s3Configured: false }).job.validateParams({ target: 's3' });
    expect(!result.ok && result.message).toMatch(/target "s3" is not configured on this server/);
  });

  it('refuses concurrency outside 1..32, unknown keys and non-numbers, naming each field', () => {
    const zero = job.validateParams({ target: 's3', concurrency: 0 });
    expect(!zero.ok && zero.message).toMatch(/concurrency: .*>=1/);
    const many = job.validateParams({ target: 's3', concurrency: 33 });
    expect(!many.ok && many.message).toMatch(/concurrency: .*<=32/);
    const typo = job.validateParams({ target: 's3', batchsize: 10 });
    expect(!typo.ok && typo.message).toMatch(/batchsize/);
    const text = job.validateParams({ target: 's3', batch_size: '10' });
    expect(!text.ok && text.message).toMatch(/batch_size: .*number/);
  });

  it('estimates the total as the number of blob rows', async () => {
    expect(await setup(7).job.estimateTotal({ target: 's3' })).toBe(7);
  });
});

describe('storage_migration run', () => {
  it('copies every blob once, in hash order, checkpointing per batch with the last hash', async () => {
    const s = setup(7);
    const store = new MemoryJobStore({ target: 's3', batch_size: 3, concurrency: 2 });
    const outcome = await s.job.runResumable(store, signal());
    expect(outcome).toEqual({ kind: 'completed' });
    expect([...s.target.puts].sort()).toEqual(s.rows.map((r) => r.hash));
    for (const row of s.rows) expect(s.target.blobs.get(row.hash)).toEqual(s.source.blobs.get(row.hash));
    expect(store.checkpoints.map((c) => hex(c.cursor))).toEqual([
      s.rows[2]?.hash,
      s.rows[5]?.hash,
      s.rows[6]?.hash,
    ]);
    const bytes = s.rows.reduce((n, r) => n + r.size, 0);
    expect(store.stats).toEqual({
      count: 7,
      scanned_count: 7,
      copied_blobs: 7,
      skipped_blobs: 0,
      failed_blobs: 0,
      bytes_copied: bytes,
      catch_up_scanned_blobs: 0,
      catch_up_copied_blobs: 0,
    });
  });

  it('skips blobs the target already holds with the right size, and re-copies a wrong-size one', async () => {
    const s = setup(4);
    const [a, b] = s.rows as [BlobRow, BlobRow];
    s.target.blobs.set(a.hash, s.source.blobs.get(a.hash) as Uint8Array);
    s.target.blobs.set(b.hash, new Uint8Array(1));
    const store = new MemoryJobStore({ target: 's3' });
    expect(await s.job.runResumable(store, signal())).toEqual({ kind: 'completed' });
    expect(s.target.puts).not.toContain(a.hash);
    expect(s.target.puts).toContain(b.hash);
    expect(store.stats).toMatchObject({ count: 4, copied_blobs: 3, skipped_blobs: 1, failed_blobs: 0 });
  });

  it('counts failures, records a DataLoss finding per blob with the reason, and keeps going', async () => {
    const s = setup(5);
    const [missing, refused, truncated] = s.rows as [BlobRow, BlobRow, BlobRow];
    s.source.blobs.delete(missing.hash);
    s.target.failPut.add(refused.hash);
    s.target.truncatePut.add(truncated.hash);
    const store = new MemoryJobStore({ target: 's3', concurrency: 1 });
    expect(await s.job.runResumable(store, signal())).toEqual({ kind: 'completed' });
    expect(store.stats).toMatchObject({ count: 2, copied_blobs: 2, failed_blobs: 3, scanned_count: 5 });
    const reasons = Object.fromEntries(
      [...s.findings.findings.values()].map((f) => [f.resourceId, [f.kind, f.severity, f.detail['reason']]]),
    );
    expect(reasons).toEqual({
      [missing.hash]: [MIGRATION_FAILED_KIND, 'DataLoss', 'source_missing'],
      [refused.hash]: [MIGRATION_FAILED_KIND, 'DataLoss', 'write_failed'],
      [truncated.hash]: [MIGRATION_FAILED_KIND, 'DataLoss', 'size_mismatch'],
    });
    expect(s.findings.findings.get(`${MIGRATION_FAILED_KIND}/${truncated.hash}`)?.detail).toMatchObject({
      expected_size: truncated.size,
      actual_size: truncated.size >> 1,
    });
  });

  it('pauses with the cursor of the last checkpoint on CancelRequested, and resumes after it', async () => {
    const s = setup(6);
    const store = new MemoryJobStore({ target: 's3', batch_size: 2, concurrency: 1 });
    store.statuses = ['CancelRequested'];
    const first = await s.job.runResumable(store, signal());
    expect(first.kind).toBe('paused');
    expect(first.kind === 'paused' && hex(first.cursor)).toBe(s.rows[1]?.hash);
    expect(s.target.puts).toHaveLength(2);

    store.statuses = ['Running'];
    expect(await s.job.runResumable(store, signal())).toEqual({ kind: 'completed' });
    const mainPages = s.walk.pages.filter((p) => p.since === undefined);
    expect(mainPages.at(-3)?.after).toBe(s.rows[1]?.hash);
    expect(s.target.puts).toHaveLength(6);
    expect(new Set(s.target.puts).size).toBe(6);
    expect(store.stats).toMatchObject({ count: 6, copied_blobs: 6, scanned_count: 6 });
  });

  it('catches up on blobs written during the run below the cursor, without counting any blob twice', async () => {
    const s = setup(6);
    const store = new MemoryJobStore({ target: 's3', batch_size: 2, concurrency: 1 });
    const below = Buffer.from('uploaded mid-run, sorts first');
    const above = Buffer.from('uploaded mid-run, sorts last');
    store.onCheckpoint = (index) => {
      if (index !== 0) return;
      const now = new Date();
      s.source.blobs.set('0'.repeat(63) + '1', below);
      s.source.blobs.set('f'.repeat(64), above);
      s.walk.insert({ hash: '0'.repeat(63) + '1', size: below.length, createdAt: now });
      s.walk.insert({ hash: 'f'.repeat(64), size: above.length, createdAt: now });
    };
    expect(await s.job.runResumable(store, signal())).toEqual({ kind: 'completed' });
    expect([...s.target.puts].sort()).toEqual(s.walk.rows.map((r) => r.hash));
    expect(s.target.puts).toHaveLength(8);
    expect(store.stats).toMatchObject({
      count: 8,
      copied_blobs: 8,
      catch_up_copied_blobs: 1,
      skipped_blobs: 0,
    });
    const catchUp = s.walk.pages.filter((p) => p.since !== undefined);
    expect(catchUp[0]).toMatchObject({ after: null, since: new Date(store.startedAt.getTime() - 3_600_000) });
    expect(hex(store.cursor)).toBe(`02${'f'.repeat(64)}`);
  });

  it('resumes a run paused in the catch-up pass there, not from the start', async () => {
    const s = setup(3);
    const store = new MemoryJobStore({ target: 's3' }, Uint8Array.of(2));
    expect(await s.job.runResumable(store, signal())).toEqual({ kind: 'completed' });
    expect(s.target.puts).toEqual([]);
    expect(s.walk.pages.every((p) => p.since !== undefined)).toBe(true);
  });

  it('on shutdown stops mid-batch, checkpoints the finished prefix and pauses there', async () => {
    const s = setup(10);
    const controller = new AbortController();
    // The source aborts the signal while the 4th blob is being read.
    const get = s.source.get.bind(s.source);
    let reads = 0;
    s.source.get = async (hash) => {
      reads += 1;
      if (reads === 4) controller.abort(new Error('shutdown'));
      return get(hash);
    };
    const store = new MemoryJobStore({ target: 's3', batch_size: 100, concurrency: 1 });
    const outcome = await s.job.runResumable(store, controller.signal);
    expect(outcome.kind === 'paused' && hex(outcome.cursor)).toBe(s.rows[3]?.hash);
    expect(store.checkpoints).toHaveLength(1);
    expect(store.stats).toMatchObject({ count: 4, scanned_count: 4 });
  });

  it("writes a batch's failure findings with its checkpoint, and counts a blob failing again in a later batch once", async () => {
    const s = setup(4);
    const [, second] = s.rows as [BlobRow, BlobRow];
    s.target.failPut.add(second.hash);
    const store = new MemoryJobStore({ target: 's3', batch_size: 1, concurrency: 1 });
    store.statuses = ['Running', 'CancelRequested'];
    await s.job.runResumable(store, signal());
    // The finding of the second blob's batch was written by that batch's checkpoint.
    expect(s.findings.findings.has(`${MIGRATION_FAILED_KIND}/${second.hash}`)).toBe(true);
    expect(store.checkpoints).toHaveLength(2);
    store.statuses = ['Running'];
    expect(await s.job.runResumable(store, signal())).toEqual({ kind: 'completed' });
    expect(s.findings.findings.size).toBe(1);
    expect(store.stats['failed_blobs']).toBe(1);
  });

  it('ends Failed, naming the target, after max_consecutive_failures copies in a row fail', async () => {
    const s = setup(6);
    for (const row of s.rows) s.target.failPut.add(row.hash);
    const store = new MemoryJobStore({ target: 's3', max_consecutive_failures: 3, concurrency: 1 });
    const outcome = await s.job.runResumable(store, signal());
    expect(outcome).toEqual({
      kind: 'failed',
      message: expect.stringMatching(/3 copies in a row failed .*write_failed.*is the s3 backend reachable/),
    });
    expect(store.checkpoints).toHaveLength(0);
  });

  it('ends Failed without copying when the target is unhealthy', async () => {
    const s = setup(2);
    s.target.healthy = false;
    const outcome = await s.job.runResumable(new MemoryJobStore({ target: 's3' }), signal());
    expect(outcome).toEqual({
      kind: 'failed',
      message: expect.stringMatching(/target backend s3 is not healthy/),
    });
    expect(s.target.puts).toEqual([]);
  });

  it('ends Failed with the validation message when the stored params are bad', async () => {
    const outcome = await setup(1).job.runResumable(new MemoryJobStore({ target: 'local' }), signal());
    expect(outcome).toEqual({
      kind: 'failed',
      message: expect.stringMatching(/^invalid params for storage_migration: target "local" .*serves from/),
    });
  });

  it('accepts the force and deep keys the engine adds to stored params', async () => {
    const store = new MemoryJobStore({ target: 's3', batch_size: 10, force: false, deep: false });
    expect(await setup(2).job.runResumable(store, signal())).toEqual({ kind: 'completed' });
  });

  it('ends Failed on a cursor that is not a blob hash', async () => {
    const store = new MemoryJobStore({ target: 's3' }, new Uint8Array(16));
    const outcome = await setup(1).job.runResumable(store, signal());
    expect(outcome).toEqual({
      kind: 'failed',
      message: expect.stringMatching(/not a blob hash.*32 bytes, got 16/),
    });
  });
});
