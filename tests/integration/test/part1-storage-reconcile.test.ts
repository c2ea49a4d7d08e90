import { defaultRunArgs, type JobOutcomeOk } from '@oxicloud/scheduler';
import { type OxiCloudDatabase, OxiUsageRepository } from '@oxicloud/storage/oxicloud';
import type { UsageCorrection } from '@oxicloud/tenants';
import { createStorageReconcileJob, storageReconcileConfigFromEnv } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type OxiWorld, oxiWorld } from '../../../packages/storage/src/oxicloud/test-fixtures.js';

/**
 * storage_reconcile as a job on OxiCloud's domain (OxiUsageRepository, the
 * §6 formulas: a drive's `used_bytes` = Σ its live files, trashed ones not
 * counted; a user's envelope = Σ the personal drives it owns): what it
 * corrects, what it reports (rows corrected, the largest corrections, at most
 * 10) and that a second run finds nothing. The formulas case by case
 * (secondary drives, shared drives, externals) are
 * `packages/storage/src/oxicloud/oxi-usage-repository.test.ts`.
 */
describe('storage_reconcile on OxiCloud’s counters', () => {
  let db: TestDatabase;
  let kysely: Kysely<OxiCloudDatabase>;
  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    kysely = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
  });
  beforeEach(async () => {
    // Each test its own users and drives (the cascade takes the drives, their folders and files).
    await db.pool.query('DELETE FROM auth.users');
  });
  afterAll(async () => {
    await kysely?.destroy();
    await db?.drop();
  });

  const job = () =>
    createStorageReconcileJob({
      repository: new OxiUsageRepository(kysely),
      config: storageReconcileConfigFromEnv({}),
    });
  const setCounters = async (w: OxiWorld, drive: number, user: number) => {
    await db.pool.query('UPDATE storage.drives SET used_bytes = $2 WHERE id = $1', [w.driveId, drive]);
    await db.pool.query('UPDATE auth.users SET storage_used_bytes = $2 WHERE id = $1', [w.userId, user]);
  };
  const bytes = (n: number) => Buffer.alloc(n, n % 251);

  it('corrects injected drift (a trashed file counted), reports rows corrected and the largest, then 0', async () => {
    // True usage: D1 = 100 (the 200-byte file is trashed: not counted), D2 = 1000, D3 = 0.
    const [w1, w2, w3] = [await oxiWorld(db.pool), await oxiWorld(db.pool), await oxiWorld(db.pool)];
    await w1.upload({ name: 'a', data: bytes(100) });
    const trashed = await w1.upload({ name: 'b', data: bytes(200) });
    await db.pool.query(
      "UPDATE storage.files SET is_trashed = true, trashed_at = now() - interval '1 day', original_folder_id = folder_id WHERE id = $1",
      [trashed.fileId],
    );
    await w2.upload({ name: 'd', data: bytes(600) });
    await w2.upload({ name: 'e', data: bytes(400) });
    await setCounters(w1, 300, 300); // the drive counts its trash (−200); the envelope follows the drive
    await setCounters(w2, 0, 1000); // the drive lost its files (+1000); the envelope is right
    await setCounters(w3, 0, 500); // an envelope with nothing under it (−500)

    const reconcile = job();
    expect(reconcile.intervalMs).toBe(600_000);
    const outcome = (await reconcile.run(defaultRunArgs, new AbortController().signal)) as JobOutcomeOk;
    expect(outcome.kind).toBe('ok');
    expect(outcome.count).toBe(4);
    expect(outcome.extra['drives_corrected']).toBe(2);
    expect(outcome.extra['users_corrected']).toBe(2);
    expect(outcome.extra['largest']).toEqual([
      { id: w2.driveId, kind: 'drive', before: 0, after: 1000, delta: 1000 },
      { id: w3.userId, kind: 'user', before: 500, after: 0, delta: -500 },
      { id: w1.driveId, kind: 'drive', before: 300, after: 100, delta: -200 },
      { id: w1.userId, kind: 'user', before: 300, after: 100, delta: -200 },
    ] satisfies UsageCorrection[]);

    const drives = await db.pool.query<{ id: string; used_bytes: string }>(
      'SELECT id, used_bytes FROM storage.drives',
    );
    expect(Object.fromEntries(drives.rows.map((r) => [r.id, Number(r.used_bytes)]))).toEqual({
      [w1.driveId]: 100,
      [w2.driveId]: 1000,
      [w3.driveId]: 0,
    });
    const users = await db.pool.query<{ id: string; storage_used_bytes: string }>(
      'SELECT id, storage_used_bytes FROM auth.users',
    );
    expect(Object.fromEntries(users.rows.map((r) => [r.id, Number(r.storage_used_bytes)]))).toEqual({
      [w1.userId]: 100,
      [w2.userId]: 1000,
      [w3.userId]: 0,
    });

    const again = (await reconcile.run(defaultRunArgs, new AbortController().signal)) as JobOutcomeOk;
    expect(again.count).toBe(0);
    expect(again.extra['largest']).toEqual([]);
  });

  it('a drive drift propagates to its owner in the same run; the list keeps only the 10 largest', async () => {
    const worlds: OxiWorld[] = [];
    for (let i = 1; i <= 6; i++) {
      const w = await oxiWorld(db.pool);
      await w.upload({ name: 'f', data: bytes(i * 10) });
      worlds.push(w);
    }
    const outcome = (await job().run(defaultRunArgs, new AbortController().signal)) as JobOutcomeOk;
    // Six drives at 0 and their six owners' envelopes: twelve corrections, the ten largest listed.
    expect(outcome.count).toBe(12);
    const largest = outcome.extra['largest'] as UsageCorrection[];
    expect(largest).toHaveLength(10);
    expect(largest.map((c) => c.delta)).toEqual([60, 60, 50, 50, 40, 40, 30, 30, 20, 20]);
    expect(largest.slice(0, 2)).toEqual(
      expect.arrayContaining([
        { id: worlds[5]!.driveId, kind: 'drive', before: 0, after: 60, delta: 60 },
        { id: worlds[5]!.userId, kind: 'user', before: 0, after: 60, delta: 60 },
      ]),
    );
  });
});
