import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultRunArgs, type JobOutcomeOk } from '@oxicloud/scheduler';
import { LocalFsBlobStorage, PgOrphanBlobRepository } from '@oxicloud/storage';
import type { OrphanBlobRepository } from '@oxicloud/tenants';
import { createDedupGcJob, dedupGcConfigFromEnv } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ago, HOUR, insertBlob, insertDrive, insertFile, insertUser, storageDb } from './part1-fixtures.js';

describe('dedup_gc on Postgres + LocalFsBlobStorage', () => {
  let db: TestDatabase;
  let root: string;
  let storage: LocalFsBlobStorage;
  let drive: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    drive = await insertDrive(db.pool, await insertUser(db.pool, 'owner'), 'main');
  });
  afterAll(async () => {
    await db.drop();
  });
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'oxicloud-dedup-gc-'));
    storage = new LocalFsBlobStorage({ root });
    await db.pool.query('DELETE FROM storage.files; DELETE FROM storage.blobs');
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const signal = () => new AbortController().signal;
  const rowExists = async (hash: string) =>
    (await db.pool.query('SELECT 1 FROM storage.blobs WHERE hash = $1', [hash])).rowCount === 1;
  const gcJob = (repository: OrphanBlobRepository = new PgOrphanBlobRepository(storageDb(db.pool))) =>
    createDedupGcJob({ repository, blobs: storage, config: { ...dedupGcConfigFromEnv({}), batchSize: 2 } });

  it('deletes only orphans older than the grace (bytes and row); force takes the young ones too', async () => {
    const old1 = await insertBlob(db.pool, 'old orphan 1', { storage, orphanedAt: ago(2 * HOUR) });
    const old2 = await insertBlob(db.pool, 'old orphan 2 (longer)', { storage, orphanedAt: ago(3 * HOUR) });
    const old3 = await insertBlob(db.pool, 'old orphan 3', { storage, orphanedAt: ago(5 * HOUR) });
    const young = await insertBlob(db.pool, 'young orphan', { storage, orphanedAt: ago(10 * 60_000) });
    const used = await insertBlob(db.pool, 'referenced', { storage, orphanedAt: ago(5 * HOUR) });
    await insertFile(db.pool, { driveId: drive, name: 'f', hash: used.hash, size: used.size });

    const job = gcJob();
    const outcome = (await job.run(defaultRunArgs, signal())) as JobOutcomeOk;
    expect(outcome.kind).toBe('ok');
    expect(outcome.count).toBe(3);
    expect(outcome.extra).toEqual({
      blobs_deleted: 3,
      bytes_freed: old1.size + old2.size + old3.size,
      blobs_kept: 0,
      skipped_referenced: 0,
      resumed: 0,
      grace_seconds: 3600,
      forced: false,
    });
    for (const gone of [old1, old2, old3]) {
      expect(await rowExists(gone.hash)).toBe(false);
      expect(await storage.exists(gone.hash)).toBe(false);
    }
    for (const kept of [young, used]) {
      expect(await rowExists(kept.hash)).toBe(true);
      expect(await storage.exists(kept.hash)).toBe(true);
    }

    const forced = (await job.run({ force: true }, signal())) as JobOutcomeOk;
    expect(forced.extra).toMatchObject({
      blobs_deleted: 1,
      bytes_freed: young.size,
      grace_seconds: 0,
      forced: true,
    });
    expect(await rowExists(young.hash)).toBe(false);
    expect(await storage.exists(young.hash)).toBe(false);
    expect(await rowExists(used.hash)).toBe(true);
    expect(await storage.exists(used.hash)).toBe(true);
  });

  it('a row whose bytes are already gone is still collected (bytes first, then row: a rerun heals)', async () => {
    const half = await insertBlob(db.pool, 'bytes never written', { orphanedAt: ago(2 * HOUR) });
    const outcome = (await gcJob().run(defaultRunArgs, signal())) as JobOutcomeOk;
    expect(outcome.count).toBe(1);
    expect(await rowExists(half.hash)).toBe(false);
  });

  it('race, committed: a file referencing the blob lands between listing and the locked delete → kept', async () => {
    const target = await insertBlob(db.pool, 'about to be referenced', {
      storage,
      orphanedAt: ago(2 * HOUR),
    });
    const other = await insertBlob(db.pool, 'stays an orphan', { storage, orphanedAt: ago(2 * HOUR) });
    const real = new PgOrphanBlobRepository(storageDb(db.pool));
    let listed: string[] = [];
    const hooked: OrphanBlobRepository = {
      async listOrphanCandidates(cutoff, options) {
        const candidates = await real.listOrphanCandidates(cutoff, options);
        if (options.after === null) {
          listed = candidates.map((c) => c.hash);
          // The upload path commits a file that references the blob right now.
          await insertFile(db.pool, { driveId: drive, name: 'late', hash: target.hash, size: target.size });
        }
        return candidates;
      },
      listMarked: (options) => real.listMarked(options),
      markForDeletion: (hashes, cutoff) => real.markForDeletion(hashes, cutoff),
      finishDeletion: (hashes, deleteBytes) => real.finishDeletion(hashes, deleteBytes),
    };
    const outcome = (await gcJob(hooked).run(defaultRunArgs, signal())) as JobOutcomeOk;
    expect(listed).toContain(target.hash);
    expect(outcome.extra).toMatchObject({ blobs_deleted: 1, blobs_kept: 1 });
    expect(await rowExists(target.hash)).toBe(true);
    expect(await storage.exists(target.hash)).toBe(true);
    const { rows } = await db.pool.query('SELECT ref_count, orphaned_at FROM storage.blobs WHERE hash = $1', [
      target.hash,
    ]);
    expect(rows[0]).toEqual({ ref_count: 1, orphaned_at: null });
    expect(await rowExists(other.hash)).toBe(false);
    expect(await storage.exists(other.hash)).toBe(false);
  });

  /**
   * Connection B holds a file INSERT open (its trigger has bumped ref_count and
   * holds the blob row lock). GC lists the blob as a candidate (B is not
   * committed), then its SELECT … FOR UPDATE must wait for B. On COMMIT the
   * lock re-check sees ref_count = 1 and keeps the blob; on ROLLBACK it is
   * still an orphan and goes. Both outcomes prove the decision is taken under
   * the lock, after the concurrent transaction settles.
   */
  async function raceWithOpenInsert(finish: 'COMMIT' | 'ROLLBACK') {
    const target = await insertBlob(db.pool, `raced blob (${finish})`, {
      storage,
      orphanedAt: ago(2 * HOUR),
    });
    const b = new pg.Client({ connectionString: db.url });
    await b.connect();
    try {
      await b.query('BEGIN');
      await insertFile(b as unknown as pg.PoolClient, {
        driveId: drive,
        name: 'racing',
        hash: target.hash,
        size: target.size,
      });
      const bPid = (await b.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;

      const running = gcJob().run(defaultRunArgs, signal());
      // Wait until the GC's SELECT … FOR UPDATE is blocked behind B.
      const deadline = Date.now() + 10_000;
      for (;;) {
        const { rows } = await db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND $1 = ANY(pg_blocking_pids(pid))`,
          [bPid],
        );
        if (rows[0]!.n > 0) break;
        if (Date.now() > deadline) throw new Error('GC never blocked on the open file insert');
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(await storage.exists(target.hash)).toBe(true);
      await b.query(finish);
      const outcome = (await running) as JobOutcomeOk;
      return { outcome, target };
    } finally {
      await b.end();
    }
  }

  it('race, in flight: GC waits for an open file INSERT and keeps the blob once it commits', async () => {
    const { outcome, target } = await raceWithOpenInsert('COMMIT');
    expect(outcome.extra).toMatchObject({ blobs_deleted: 0, blobs_kept: 1 });
    expect(await rowExists(target.hash)).toBe(true);
    expect(await storage.exists(target.hash)).toBe(true);
  });

  it('race, in flight: the same blob is collected when the file INSERT rolls back', async () => {
    const { outcome, target } = await raceWithOpenInsert('ROLLBACK');
    expect(outcome.extra).toMatchObject({ blobs_deleted: 1, blobs_kept: 0 });
    expect(await rowExists(target.hash)).toBe(false);
    expect(await storage.exists(target.hash)).toBe(false);
  });
});
