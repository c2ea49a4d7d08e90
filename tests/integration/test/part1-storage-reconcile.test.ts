import { defaultRunArgs, type JobOutcomeOk } from '@oxicloud/scheduler';
import { PgUsageRepository } from '@oxicloud/storage';
import type { UsageCorrection } from '@oxicloud/tenants';
import { createStorageReconcileJob, storageReconcileConfigFromEnv } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ago, DAY, insertBlob, insertDrive, insertFile, insertUser, storageDb } from './part1-fixtures.js';

describe('storage_reconcile on Postgres', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('corrects injected drift (trashed files count), reports rows corrected and the largest, then 0', async () => {
    const pool = db.pool;
    // True usage: D1 = 100 + 200 (trashed) = 300, D2 = 50, D3 = 1000; U1 = 350, U2 = 1000, U3 = 0.
    const u1 = await insertUser(pool, 'u1', 350);
    const u2 = await insertUser(pool, 'u2', 1000);
    const u3 = await insertUser(pool, 'u3', 500); // drift: has no drive at all
    const d1 = await insertDrive(pool, u1, 'd1', 999); // drift: -699
    const d2 = await insertDrive(pool, u1, 'd2', 50);
    const d3 = await insertDrive(pool, u2, 'd3', 0); // drift: +1000
    const blob = await insertBlob(pool, 'any bytes');
    const file = (driveId: string, name: string, size: number, trashedAt: Date | null = null) =>
      insertFile(pool, { driveId, name, hash: blob.hash, size, trashedAt });
    await file(d1, 'a', 100);
    await file(d1, 'b', 200, ago(DAY));
    await file(d2, 'c', 50);
    await file(d3, 'd', 600);
    await file(d3, 'e', 400);

    const job = createStorageReconcileJob({
      repository: new PgUsageRepository(storageDb(pool)),
      config: storageReconcileConfigFromEnv({}),
    });
    expect(job.intervalMs).toBe(600_000);
    const outcome = (await job.run(defaultRunArgs, new AbortController().signal)) as JobOutcomeOk;
    expect(outcome.kind).toBe('ok');
    expect(outcome.count).toBe(3);
    expect(outcome.extra['drives_corrected']).toBe(2);
    expect(outcome.extra['users_corrected']).toBe(1);
    expect(outcome.extra['largest']).toEqual([
      { id: d3, kind: 'drive', before: 0, after: 1000, delta: 1000 },
      { id: d1, kind: 'drive', before: 999, after: 300, delta: -699 },
      { id: u3, kind: 'user', before: 500, after: 0, delta: -500 },
    ] satisfies UsageCorrection[]);

    const drives = await pool.query<{ id: string; used_bytes: string }>(
      'SELECT id, used_bytes FROM storage.drives',
    );
    expect(Object.fromEntries(drives.rows.map((r) => [r.id, Number(r.used_bytes)]))).toEqual({
      [d1]: 300,
      [d2]: 50,
      [d3]: 1000,
    });
    const users = await pool.query<{ id: string; storage_used_bytes: string }>(
      'SELECT id, storage_used_bytes FROM auth.users',
    );
    expect(Object.fromEntries(users.rows.map((r) => [r.id, Number(r.storage_used_bytes)]))).toEqual({
      [u1]: 350,
      [u2]: 1000,
      [u3]: 0,
    });

    const again = (await job.run(defaultRunArgs, new AbortController().signal)) as JobOutcomeOk;
    expect(again.count).toBe(0);
    expect(again.extra['largest']).toEqual([]);
  });

  it('a drive drift propagates to its owner in the same run; the list keeps only the 10 largest', async () => {
    const pool = db.pool;
    const owner = await insertUser(pool, 'many', 0);
    const blob = await insertBlob(pool, 'many bytes');
    for (let i = 1; i <= 12; i++) {
      const drive = await insertDrive(pool, owner, `m${i}`, 0);
      await insertFile(pool, { driveId: drive, name: 'f', hash: blob.hash, size: i * 10, trashedAt: null });
    }
    const job = createStorageReconcileJob({
      repository: new PgUsageRepository(storageDb(pool)),
      config: storageReconcileConfigFromEnv({}),
    });
    const outcome = (await job.run(defaultRunArgs, new AbortController().signal)) as JobOutcomeOk;
    expect(outcome.count).toBe(13);
    const largest = outcome.extra['largest'] as UsageCorrection[];
    expect(largest).toHaveLength(10);
    expect(largest[0]).toEqual({ id: owner, kind: 'user', before: 0, after: 780, delta: 780 });
    expect(largest.slice(1).map((c) => c.delta)).toEqual([120, 110, 100, 90, 80, 70, 60, 50, 40]);
  });
});
