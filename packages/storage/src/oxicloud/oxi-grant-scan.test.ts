import { randomUUID } from 'node:crypto';
import { type JobOutcomeOk, silentLogger } from '@oxicloud/scheduler';
import {
  createGrantCleanupJob,
  DANGLING_GRANT,
  EXPIRED_GRANT_LINGERING,
  GRANTS_CONSISTENCY_CHECK_NAME,
  grantsConsistencyConfigFromEnv,
  isTenantsError,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { OxiCloudDatabase } from './database.js';
import { OxiGrantRepository } from './oxi-grant-repository.js';
import { OXICLOUD_INTERNAL_GROUP_ID, OxiGrantScan } from './oxi-grant-scan.js';
import { checkRunner, oxiTreeFixtures, resetDomain, summary } from './tree-fixtures.js';

let db: TestDatabase;
let kysely: Kysely<OxiCloudDatabase>;
let runner: ReturnType<typeof checkRunner>;
let fx: ReturnType<typeof oxiTreeFixtures>;
let check: ReturnType<OxiGrantScan['consistencyChecks']>[number];

interface World {
  alice: string;
  bob: string;
  group: string;
  driveId: string;
  rootId: string;
  folder: string;
  file: string;
  trashedFile: string;
  calendar: string;
  addressBook: string;
  playlist: string;
  share: { shareId: string; grantId: string };
  grants: number;
}
let w: World;

/** Grants on every subject and resource type, all live, as OxiCloud writes them. */
async function seed(): Promise<World> {
  const alice = await fx.user('alice');
  const bob = await fx.user('bob');
  const group = await fx.group('team-a', [bob], alice);
  const drive = await fx.personalDrive(alice); // its owner grant: 1
  const shared = await fx.sharedDrive('Team space', { type: 'group', id: group }); // 2
  const folder = await fx.folder(drive.driveId, drive.rootId, 'docs');
  const file = await fx.file(drive.driveId, folder, 'a.txt', 1);
  const trashedFile = await fx.file(drive.driveId, folder, 'b.txt', 1);
  await fx.trashFile(trashedFile.id);
  const q = async (text: string, values: unknown[]) =>
    (await db.pool.query(text, values)).rows[0].id as string;
  const calendar = await q(
    "INSERT INTO caldav.calendars (id, name, owner_id) VALUES ($1, 'cal', $2) RETURNING id",
    [randomUUID(), alice],
  );
  const addressBook = await q(
    "INSERT INTO carddav.address_books (id, name, owner_id) VALUES ($1, 'book', $2) RETURNING id",
    [randomUUID(), alice],
  );
  const playlist = await q("INSERT INTO audio.playlists (name, owner_id) VALUES ('mix', $1) RETURNING id", [
    alice,
  ]);
  const bobUser = { type: 'user' as const, id: bob };
  await fx.grant(bobUser, { type: 'folder', id: folder }, { role: 'editor' }); // 3
  await fx.grant(bobUser, { type: 'file', id: file.id }); // 4
  await fx.grant(bobUser, { type: 'file', id: trashedFile.id }); // 5: grants on trashed items persist
  await fx.grant({ type: 'group', id: group }, { type: 'calendar', id: calendar }); // 6
  await fx.grant(
    { type: 'group', id: OXICLOUD_INTERNAL_GROUP_ID },
    { type: 'address_book', id: addressBook },
  ); // 7
  await fx.grant(bobUser, { type: 'playlist', id: playlist }, { expires: "now() + interval '1 day'" }); // 8
  const share = await fx.share({ type: 'folder', id: folder, name: 'docs' }, alice); // 9
  await fx.grant(bobUser, { type: 'drive', id: shared.driveId }, { role: 'contributor' }); // 10
  return {
    alice,
    bob,
    group,
    driveId: drive.driveId,
    rootId: drive.rootId,
    folder,
    file: file.id,
    trashedFile: trashedFile.id,
    calendar,
    addressBook,
    playlist,
    share,
    grants: 10,
  };
}

beforeAll(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  kysely = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
  runner = checkRunner(db.pool);
  fx = oxiTreeFixtures(db.pool);
  check = new OxiGrantScan(kysely).consistencyChecks()[0]!;
});
afterAll(async () => {
  await runner?.shutdown().catch(() => undefined);
  await db?.drop();
});
beforeEach(async () => {
  await resetDomain(db.pool);
  w = await seed();
});

const gone = () => randomUUID();

describe('OxiGrantScan: grants_consistency on OxiCloud’s grants', () => {
  it('is grants_consistency of the grants', () => {
    expect(check.name).toBe(GRANTS_CONSISTENCY_CHECK_NAME);
    expect(check.subsystem).toBe('grants');
  });

  it('grants of every subject type (user, group, Internal, token) on every resource type → 0 findings', async () => {
    const run = await runner.run(check, { batch_size: 3 });
    expect(run.status).toBe('Completed');
    expect(run.findings).toEqual([]);
    expect(run.stats['scanned_count']).toBe(w.grants);
  });

  it('a grant on a missing resource of each type → dangling_grant each (detail names the type)', async () => {
    const bob = { type: 'user' as const, id: w.bob };
    const ids = [];
    for (const type of ['folder', 'file', 'drive', 'calendar', 'address_book', 'playlist']) {
      ids.push(await fx.grant(bob, { type, id: gone() }));
    }
    // A live folder id named as a file is no file.
    ids.push(await fx.grant(bob, { type: 'file', id: w.folder }));
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual(ids.map((id) => `${DANGLING_GRANT} Reclaimable ${id}`).sort());
    const types = run.findings.map((f) => f.detail['resource_type']).sort();
    expect(types).toEqual(['address_book', 'calendar', 'drive', 'file', 'file', 'folder', 'playlist']);
  });

  it('a grant whose subject is gone (user, group, share) → dangling_grant each; young ones wait for the grace', async () => {
    const res = { type: 'folder', id: w.folder };
    const user = await fx.grant({ type: 'user', id: gone() }, res);
    const group = await fx.grant({ type: 'group', id: gone() }, res);
    const token = await fx.grant({ type: 'token', id: gone() }, res);
    await fx.grant({ type: 'user', id: gone() }, res, { daysAgo: 0 }); // granted just now: inside the 1 h grace
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual(
      [user, group, token].map((id) => `${DANGLING_GRANT} Reclaimable ${id}`).sort(),
    );
  });

  it('expired grants are the purge’s: never dangling; lingering only past cleanup grace + margin', async () => {
    const res = { type: 'file', id: gone() };
    await fx.grant({ type: 'user', id: w.bob }, res, { expires: "now() - interval '2 days'" });
    const lingering = await fx.grant({ type: 'user', id: w.alice }, res, {
      expires: "now() - interval '9 days'",
    });
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual([`${EXPIRED_GRANT_LINGERING} Drift ${lingering}`]);
    expect(run.findings[0]?.detail).toMatchObject({ resource_exists: false });
  });

  it('the margin is configurable (env, validated) and added to the cleanup grace', async () => {
    const g = await fx.grant(
      { type: 'user', id: w.bob },
      { type: 'drive', id: w.driveId },
      {
        expires: "now() - interval '3 days'",
      },
    );
    expect(grantsConsistencyConfigFromEnv({})).toEqual({ lingerMarginMs: 7 * 86_400_000 });
    const config = grantsConsistencyConfigFromEnv({ OXICLOUD_GRANTS_CONSISTENCY_LINGER_MARGIN_DAYS: '1' });
    // A runner of its own: the shared one keeps the check it registered first (default margin).
    const own = checkRunner(db.pool);
    try {
      const run = await own.run(
        new OxiGrantScan(kysely, {
          checks: { grants_consistency: { cleanupGraceMs: 3_600_000, ...config } },
        }).consistencyChecks()[0]!,
      );
      expect(summary(run.findings)).toEqual([`${EXPIRED_GRANT_LINGERING} Drift ${g}`]);
    } finally {
      await own.shutdown();
    }
    let thrown: unknown;
    try {
      grantsConsistencyConfigFromEnv({ OXICLOUD_GRANTS_CONSISTENCY_LINGER_MARGIN_DAYS: 'week' });
    } catch (error) {
      thrown = error;
    }
    expect(isTenantsError(thrown, 'INVALID_CONFIG')).toBe(true);
    expect(String((thrown as Error).message)).toContain('OXICLOUD_GRANTS_CONSISTENCY_LINGER_MARGIN_DAYS');
  });
});

describe('OxiGrantRepository: grant_cleanup on OxiCloud’s grants', () => {
  const job = () =>
    createGrantCleanupJob({
      repository: new OxiGrantRepository(kysely),
      config: { intervalMs: null, graceMs: 15 * 86_400_000, batchSize: 2 },
      logger: silentLogger,
    });
  const run = async () => (await job().run({ force: false }, new AbortController().signal)) as JobOutcomeOk;
  const grantIds = async () =>
    (await db.pool.query<{ id: string }>('SELECT id FROM storage.role_grants ORDER BY id')).rows.map(
      (r) => r.id,
    );

  it('nothing expired past the grace → nothing deleted', async () => {
    await fx.grant(
      { type: 'user', id: w.bob },
      { type: 'drive', id: w.driveId },
      {
        expires: "now() - interval '14 days'",
      },
    );
    const before = await grantIds();
    const outcome = await run();
    expect(outcome.kind).toBe('ok');
    expect(outcome.count).toBe(0);
    expect(await grantIds()).toEqual(before);
  });

  it('deletes only expires_at < now − grace; the last token grant takes its share along (the trigger), another keeps it', async () => {
    const before = await grantIds();
    const old = (days: number) => ({ expires: `now() - interval '${days} days'` });
    const a = await fx.grant({ type: 'user', id: w.bob }, { type: 'drive', id: w.driveId }, old(16));
    const b = await fx.grant(
      { type: 'group', id: w.group },
      { type: 'address_book', id: w.addressBook },
      old(40),
    );
    const c = await fx.grant({ type: 'user', id: w.alice }, { type: 'playlist', id: gone() }, old(20));
    // An expiring share link: its only token grant expired 20 days ago.
    const expiredShare = await fx.share({ type: 'file', id: w.file }, w.alice, old(20));
    // A share with two token grants, one long expired: the share stays.
    const kept = await fx.share({ type: 'file', id: w.trashedFile }, w.alice);
    const d = await fx.grant({ type: 'token', id: kept.shareId }, { type: 'folder', id: w.folder }, old(30));
    const outcome = await run();
    expect(outcome.kind).toBe('ok');
    expect(outcome.count).toBe(5);
    expect(await grantIds()).toEqual([...before, kept.grantId].sort());
    const shares = await db.pool.query<{ id: string }>('SELECT id FROM storage.shares ORDER BY id');
    expect(shares.rows.map((r) => r.id)).toEqual([w.share.shareId, kept.shareId].sort());
    expect([a, b, c, d, expiredShare.grantId].every((id) => !before.includes(id))).toBe(true);
  });
});
