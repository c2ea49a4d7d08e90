import { defaultRunArgs, type JobOutcomeOk } from '@oxicloud/scheduler';
import { createStorageReconcileJob, DRIVES_CONSISTENCY_CHECK_NAME } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { OxiCloudDatabase } from './database.js';
import { OxiDriveUsageScan } from './oxi-drive-usage-scan.js';
import { OxiUsageRepository } from './oxi-usage-repository.js';
import { checkRunner, oxiTreeFixtures, resetDomain } from './tree-fixtures.js';

let db: TestDatabase;
let kysely: Kysely<OxiCloudDatabase>;
let fx: ReturnType<typeof oxiTreeFixtures>;
let runner: ReturnType<typeof checkRunner>;

interface World {
  alice: string;
  bob: string;
  external: string;
  personal: string;
  secondary: string;
  bobs: string;
  shared: string;
}
let w: World;

/**
 * Counters all 0 (as created): alice has a default personal drive (60 + 40
 * live, 20 + 30 trashed) and a secondary one (30), and co-owns a shared
 * drive (1000); bob has his default drive (7); an external user holds an
 * owner grant on bob's drive (never written: the CHECK forbids it).
 */
async function seed(): Promise<World> {
  const alice = await fx.user('alice');
  const bob = await fx.user('bob');
  const external = await fx.user('guest', { external: true });
  const personal = await fx.personalDrive(alice);
  const secondary = await fx.personalDrive(alice, { default: false });
  const bobs = await fx.personalDrive(bob);
  const shared = await fx.sharedDrive('Projects', { type: 'user', id: bob });
  await fx.grant({ type: 'user', id: alice }, { type: 'drive', id: shared.driveId }, { role: 'owner' });
  await fx.grant({ type: 'user', id: external }, { type: 'drive', id: bobs.driveId }, { role: 'owner' });
  // An expired owner grant still counts (OxiCloud's sweep ignores expires_at).
  await db.pool.query(
    "UPDATE storage.role_grants SET expires_at = now() - interval '1 day' WHERE resource_id = $1",
    [secondary.driveId],
  );
  const docs = await fx.folder(personal.driveId, personal.rootId, 'docs');
  await fx.file(personal.driveId, docs, 'a', 60);
  await fx.file(personal.driveId, personal.rootId, 'b', 40);
  const old = await fx.folder(personal.driveId, docs, 'old');
  await fx.file(personal.driveId, old, 'c', 20);
  const d = await fx.file(personal.driveId, docs, 'd', 30);
  await fx.trashFolder(old);
  await fx.trashFile(d.id);
  await fx.file(secondary.driveId, secondary.rootId, 'e', 30);
  await fx.file(bobs.driveId, bobs.rootId, 'f', 7);
  await fx.file(shared.driveId, shared.rootId, 'g', 1000);
  return {
    alice,
    bob,
    external,
    personal: personal.driveId,
    secondary: secondary.driveId,
    bobs: bobs.driveId,
    shared: shared.driveId,
  };
}

const reconcile = async () =>
  (await createStorageReconcileJob({
    repository: new OxiUsageRepository(kysely),
    config: { intervalMs: null },
  }).run(defaultRunArgs, new AbortController().signal)) as JobOutcomeOk;

const counters = async () => {
  const drives = await db.pool.query<{ id: string; used_bytes: string; updated_at: Date }>(
    'SELECT id, used_bytes, updated_at FROM storage.drives',
  );
  const users = await db.pool.query<{ id: string; storage_used_bytes: string; updated_at: Date }>(
    'SELECT id, storage_used_bytes, updated_at FROM auth.users',
  );
  return {
    drive: Object.fromEntries(drives.rows.map((r) => [r.id, Number(r.used_bytes)])),
    user: Object.fromEntries(users.rows.map((r) => [r.id, Number(r.storage_used_bytes)])),
    driveUpdatedAt: Object.fromEntries(drives.rows.map((r) => [r.id, r.updated_at.getTime()])),
  };
};

beforeAll(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  kysely = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
  fx = oxiTreeFixtures(db.pool);
  runner = checkRunner(db.pool);
});
afterAll(async () => {
  await runner?.shutdown().catch(() => undefined);
  await db?.drop();
});
beforeEach(async () => {
  await resetDomain(db.pool);
  w = await seed();
});

describe('OxiUsageRepository: storage_reconcile with OxiCloud’s formulas', () => {
  it('drives := Σ live file sizes; envelope := Σ personal drives owned by a user grant (secondary in, shared out); externals untouched', async () => {
    const outcome = await reconcile();
    expect(outcome.kind).toBe('ok');
    const after = await counters();
    expect(after.drive).toEqual({
      [w.personal]: 100, // 20 + 30 trashed not counted
      [w.secondary]: 30,
      [w.bobs]: 7,
      [w.shared]: 1000,
    });
    expect(after.user).toEqual({ [w.alice]: 130, [w.bob]: 7, [w.external]: 0 });
    expect(outcome.count).toBe(4 + 2);
    expect(outcome.extra).toMatchObject({ drives_corrected: 4, users_corrected: 2 });
    expect((outcome.extra['largest'] as { id: string }[])[0]).toMatchObject({
      id: w.shared,
      kind: 'drive',
      before: 0,
      after: 1000,
      delta: 1000,
    });
  });

  it('what it leaves is what drives_consistency calls clean: no usage finding, and a second run changes nothing', async () => {
    await reconcile();
    const check = new OxiDriveUsageScan(kysely).consistencyChecks()[0]!;
    expect(check.name).toBe(DRIVES_CONSISTENCY_CHECK_NAME);
    const run = await runner.run(check);
    // Only the shapes this world has on purpose (§12 item 8), which a usage reconcile does not touch:
    // bob's drive has a second user owner, the secondary drive's only owner grant has expired.
    expect(run.findings.map((f) => `${f.kind} ${f.resourceId}`).sort()).toEqual(
      [`drive_without_owner ${w.secondary}`, `personal_drive_owner_mismatch ${w.bobs}`].sort(),
    );
    const before = await counters();
    const again = await reconcile();
    expect(again.count).toBe(0);
    expect(await counters()).toEqual(before);
  });

  it('writes only the rows that differ: updated_at moves on those drives only', async () => {
    await reconcile();
    const before = await counters();
    await fx.file(w.secondary, (await rootOf(w.secondary)) as string, 'new', 5);
    const outcome = await reconcile();
    expect(outcome.extra).toMatchObject({ drives_corrected: 1, users_corrected: 1 });
    const after = await counters();
    expect(after.drive[w.secondary]).toBe(35);
    expect(after.user[w.alice]).toBe(135);
    for (const id of [w.personal, w.bobs, w.shared]) {
      expect(after.driveUpdatedAt[id]).toBe(before.driveUpdatedAt[id]);
    }
    expect(after.driveUpdatedAt[w.secondary]).toBeGreaterThan(before.driveUpdatedAt[w.secondary]!);
  });
});

async function rootOf(driveId: string): Promise<string | undefined> {
  const { rows } = await db.pool.query('SELECT root_folder_id FROM storage.drives WHERE id = $1', [driveId]);
  return rows[0]?.root_folder_id;
}
