import {
  DRIVE_ROOT_MISMATCH,
  DRIVE_USED_BYTES_DRIFT,
  DRIVE_WITHOUT_OWNER,
  DRIVES_CONSISTENCY_CHECK_NAME,
  PERSONAL_DRIVE_OWNER_MISMATCH,
  USER_USED_BYTES_DRIFT,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { OxiCloudDatabase } from './database.js';
import { OxiDriveUsageScan } from './oxi-drive-usage-scan.js';
import { OxiFolderTreeScan } from './oxi-folder-tree-scan.js';
import { checkRunner, oxiTreeFixtures, resetDomain, summary } from './tree-fixtures.js';

let db: TestDatabase;
let kysely: Kysely<OxiCloudDatabase>;
let runner: ReturnType<typeof checkRunner>;
let fx: ReturnType<typeof oxiTreeFixtures>;
let check: ReturnType<OxiDriveUsageScan['consistencyChecks']>[number];

interface World {
  alice: string;
  bob: string;
  external: string;
  group: string;
  personal: string;
  secondary: string;
  bobs: string;
  shared: string;
  groupShared: string;
}
let w: World;

/**
 * A world whose counters are what OxiCloud's sweep leaves: alice has a
 * default (100 live + 50 trashed) and a secondary personal drive (30), and
 * co-owns a shared drive (1000, not in her envelope); bob has his default
 * drive (7); a group owns a second shared drive (5); an external user owns nothing.
 */
async function seed(): Promise<World> {
  const alice = await fx.user('alice');
  const bob = await fx.user('bob');
  const external = await fx.user('guest', { external: true });
  const group = await fx.group('team-a', [alice, bob]);
  const personal = await fx.personalDrive(alice);
  const secondary = await fx.personalDrive(alice, { default: false });
  const bobs = await fx.personalDrive(bob);
  const shared = await fx.sharedDrive('Projects', { type: 'user', id: bob });
  await fx.grant({ type: 'user', id: alice }, { type: 'drive', id: shared.driveId }, { role: 'owner' });
  const groupShared = await fx.sharedDrive('Team space', { type: 'group', id: group });
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
  await fx.file(groupShared.driveId, groupShared.rootId, 'h', 5);
  const set = (table: string, column: string, value: number, id: string) =>
    db.pool.query(`UPDATE ${table} SET ${column} = $1 WHERE id = $2`, [value, id]);
  await set('storage.drives', 'used_bytes', 100, personal.driveId);
  await set('storage.drives', 'used_bytes', 30, secondary.driveId);
  await set('storage.drives', 'used_bytes', 7, bobs.driveId);
  await set('storage.drives', 'used_bytes', 1000, shared.driveId);
  await set('storage.drives', 'used_bytes', 5, groupShared.driveId);
  await set('auth.users', 'storage_used_bytes', 130, alice);
  await set('auth.users', 'storage_used_bytes', 7, bob);
  return {
    alice,
    bob,
    external,
    group,
    personal: personal.driveId,
    secondary: secondary.driveId,
    bobs: bobs.driveId,
    shared: shared.driveId,
    groupShared: groupShared.driveId,
  };
}

beforeAll(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  kysely = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
  runner = checkRunner(db.pool);
  fx = oxiTreeFixtures(db.pool);
  check = new OxiDriveUsageScan(kysely).consistencyChecks()[0]!;
});
afterAll(async () => {
  await runner?.shutdown().catch(() => undefined);
  await db?.drop();
});
beforeEach(async () => {
  await resetDomain(db.pool);
  w = await seed();
});

describe('OxiDriveUsageScan: drives_consistency with OxiCloud’s formulas', () => {
  it('is drives_consistency of the usage counters', () => {
    expect(check.name).toBe(DRIVES_CONSISTENCY_CHECK_NAME);
    expect(check.subsystem).toBe('used_bytes');
  });

  it('counters as OxiCloud’s sweep leaves them (trashed not counted, secondary drive in the envelope, shared not) → 0 findings', async () => {
    const run = await runner.run(check, { batch_size: 2 });
    expect(run.status).toBe('Completed');
    expect(run.findings).toEqual([]);
    // Drives (usage), users, drives again (shape).
    expect(run.stats['scanned_count']).toBe(5 + 3 + 5);
  });

  it('a drive counting its trashed files → drive_used_bytes_drift, owner from default_for_user', async () => {
    await db.pool.query('UPDATE storage.drives SET used_bytes = 150 WHERE id = $1', [w.personal]);
    // Keep the envelope on the stored drive values, so only the drive drifts.
    await db.pool.query('UPDATE auth.users SET storage_used_bytes = 180 WHERE id = $1', [w.alice]);
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual([`${DRIVE_USED_BYTES_DRIFT} Drift ${w.personal}`]);
    expect(run.findings[0]?.detail).toMatchObject({
      recorded: 150,
      actual: 100,
      delta: 50,
      owner_id: w.alice,
    });
  });

  it('the owner of a secondary personal drive and of a group-owned shared drive comes from the owner grant', async () => {
    await db.pool.query('UPDATE storage.drives SET used_bytes = used_bytes + 1 WHERE id = ANY($1::uuid[])', [
      [w.secondary, w.groupShared],
    ]);
    await db.pool.query('UPDATE auth.users SET storage_used_bytes = 131 WHERE id = $1', [w.alice]);
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual(
      [
        `${DRIVE_USED_BYTES_DRIFT} Drift ${w.secondary}`,
        `${DRIVE_USED_BYTES_DRIFT} Drift ${w.groupShared}`,
      ].sort(),
    );
    const owner = (id: string) => run.findings.find((f) => f.resourceId === id)?.detail['owner_id'];
    expect(owner(w.secondary)).toBe(w.alice);
    expect(owner(w.groupShared)).toBe(w.group);
  });

  it('a default drive that lost its owner grant still names its owner: default_for_user', async () => {
    await db.pool.query("DELETE FROM storage.role_grants WHERE resource_id = $1 AND role = 'owner'", [
      w.bobs,
    ]);
    await db.pool.query('UPDATE storage.drives SET used_bytes = 8 WHERE id = $1', [w.bobs]);
    // Without the grant the drive is no longer in bob's envelope (OxiCloud's formula): 0.
    await db.pool.query('UPDATE auth.users SET storage_used_bytes = 0 WHERE id = $1', [w.bob]);
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual(
      [`${DRIVE_USED_BYTES_DRIFT} Drift ${w.bobs}`, `${DRIVE_WITHOUT_OWNER} DataLoss ${w.bobs}`].sort(),
    );
    const usage = run.findings.find((f) => f.kind === DRIVE_USED_BYTES_DRIFT);
    expect(usage?.detail).toMatchObject({ recorded: 8, actual: 7, owner_id: w.bob });
  });

  it("a shared drive with no owner grant left (orphaned, §8) reports owner_id ''", async () => {
    await db.pool.query("DELETE FROM storage.role_grants WHERE resource_id = $1 AND role = 'owner'", [
      w.groupShared,
    ]);
    await db.pool.query('UPDATE storage.drives SET used_bytes = 0 WHERE id = $1', [w.groupShared]);
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual(
      [
        `${DRIVE_USED_BYTES_DRIFT} Drift ${w.groupShared}`,
        `${DRIVE_WITHOUT_OWNER} DataLoss ${w.groupShared}`,
      ].sort(),
    );
    const usage = run.findings.find((f) => f.kind === DRIVE_USED_BYTES_DRIFT);
    expect(usage?.detail).toMatchObject({ recorded: 0, actual: 5, owner_id: '' });
  });

  it('an envelope that leaves out the secondary drive, or counts the shared one → user_used_bytes_drift', async () => {
    await db.pool.query('UPDATE auth.users SET storage_used_bytes = 100 WHERE id = $1', [w.alice]);
    await db.pool.query('UPDATE auth.users SET storage_used_bytes = 1007 WHERE id = $1', [w.bob]);
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual(
      [`${USER_USED_BYTES_DRIFT} Drift ${w.alice}`, `${USER_USED_BYTES_DRIFT} Drift ${w.bob}`].sort(),
    );
    const detail = (id: string) => run.findings.find((f) => f.resourceId === id)?.detail;
    expect(detail(w.alice)).toMatchObject({ recorded: 100, actual: 130, drive_count: 2 });
    expect(detail(w.bob)).toMatchObject({ recorded: 1007, actual: 7, drive_count: 1 });
  });

  it('an external user who holds an owner grant on a personal drive is no usage finding; the second user owner is a shape one', async () => {
    await fx.grant({ type: 'user', id: w.external }, { type: 'drive', id: w.bobs }, { role: 'owner' });
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual([`${PERSONAL_DRIVE_OWNER_MISMATCH} Drift ${w.bobs}`]);
    expect(run.findings[0]?.detail).toMatchObject({ problems: ['user_owner_count'], user_owner_grants: 2 });
  });
});

describe('OxiDriveUsageScan: each drive’s shape (§12 items 5 and 8)', () => {
  const rootOf = async (driveId: string) =>
    (await db.pool.query('SELECT root_folder_id FROM storage.drives WHERE id = $1', [driveId])).rows[0]
      .root_folder_id as string;
  const problems = (run: Awaited<ReturnType<typeof runner.run>>, id: string, kind: string) =>
    run.findings.find((f) => f.resourceId === id && f.kind === kind)?.detail['problems'];

  it('a root another drive names too, a root that is not one, and no root at all → drive_root_mismatch, each rule named', async () => {
    // The group's drive points at the shared drive's root (no unique index stops it).
    await db.pool.query('UPDATE storage.drives SET root_folder_id = $2 WHERE id = $1', [
      w.groupShared,
      await rootOf(w.shared),
    ]);
    // Bob's drive points at a folder inside it; alice's secondary drive at nothing.
    const inside = await fx.folder(w.bobs, await rootOf(w.bobs), 'inside');
    await db.pool.query('UPDATE storage.drives SET root_folder_id = $2 WHERE id = $1', [w.bobs, inside]);
    await db.pool.query('UPDATE storage.drives SET root_folder_id = NULL WHERE id = $1', [w.secondary]);
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual(
      [w.groupShared, w.shared, w.bobs, w.secondary]
        .map((id) => `${DRIVE_ROOT_MISMATCH} DataLoss ${id}`)
        .sort(),
    );
    expect(problems(run, w.groupShared, DRIVE_ROOT_MISMATCH)).toEqual(['root_in_other_drive', 'root_shared']);
    expect(problems(run, w.shared, DRIVE_ROOT_MISMATCH)).toEqual(['root_shared']);
    expect(problems(run, w.bobs, DRIVE_ROOT_MISMATCH)).toEqual(['root_has_parent']);
    expect(problems(run, w.secondary, DRIVE_ROOT_MISMATCH)).toEqual(['root_unset']);
  });

  it('a second drive made on a drive’s root: both drives drive_root_mismatch, and folders_consistency names the root', async () => {
    const root = await rootOf(w.bobs);
    // A four-write that linked an existing root instead of its own: nothing refuses it.
    const {
      rows: [second],
    } = await db.pool.query(
      "INSERT INTO storage.drives (kind, root_folder_id) VALUES ('shared', $1) RETURNING id",
      [root],
    );
    await fx.grant({ type: 'user', id: w.bob }, { type: 'drive', id: second.id }, { role: 'owner' });
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual(
      [w.bobs, second.id].map((id) => `${DRIVE_ROOT_MISMATCH} DataLoss ${id}`).sort(),
    );
    expect(problems(run, w.bobs, DRIVE_ROOT_MISMATCH)).toEqual(['root_shared']);
    expect(problems(run, second.id, DRIVE_ROOT_MISMATCH)).toEqual(['root_in_other_drive', 'root_shared']);
    // The root is a folder a drive other than its own names (§12 item 3): the folder check's finding.
    const folders = new OxiFolderTreeScan(kysely).consistencyChecks()[0]!;
    const tree = await runner.run(folders);
    expect(summary(tree.findings)).toEqual([`drive_id_parent_mismatch DataLoss ${root}`]);
    expect(tree.findings[0]?.detail).toMatchObject({ drive_id: w.bobs, parent_drive_id: second.id });
  });

  it('a root moved into another drive by OxiCloud’s move_folder, usage following → only its drive’s drive_root_mismatch', async () => {
    const root = await rootOf(w.bobs);
    const into = await rootOf(w.personal);
    // folder_db_repository.rs move_folder: parent and drive from the destination; the cascade carries the subtree.
    await db.pool.query(
      `WITH dest AS (SELECT drive_id FROM storage.folders WHERE id = $1::uuid)
       UPDATE storage.folders f
          SET parent_id = $1::uuid, drive_id = COALESCE((SELECT drive_id FROM dest), f.drive_id), updated_at = now()
        WHERE f.id = $2::uuid AND NOT f.is_trashed`,
      [into, root],
    );
    const { rows: moved } = await db.pool.query('SELECT drive_id FROM storage.files WHERE name = $1', ['f']);
    expect(moved).toEqual([{ drive_id: w.personal }]);
    // The sweep's counters after the move: bob's 7 bytes are alice's now.
    const set = (table: string, column: string, value: number, id: string) =>
      db.pool.query(`UPDATE ${table} SET ${column} = $1 WHERE id = $2`, [value, id]);
    await set('storage.drives', 'used_bytes', 0, w.bobs);
    await set('storage.drives', 'used_bytes', 107, w.personal);
    await set('auth.users', 'storage_used_bytes', 0, w.bob);
    await set('auth.users', 'storage_used_bytes', 137, w.alice);
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual([`${DRIVE_ROOT_MISMATCH} DataLoss ${w.bobs}`]);
    expect(problems(run, w.bobs, DRIVE_ROOT_MISMATCH)).toEqual(['root_has_parent', 'root_in_other_drive']);
    // The moved tree is whole in alice's drive: no folder finding.
    const folders = new OxiFolderTreeScan(kysely).consistencyChecks()[0]!;
    expect((await runner.run(folders)).findings).toEqual([]);
  });

  it('a default user who is not the drive’s owner → personal_drive_owner_mismatch (default_not_owner)', async () => {
    await db.pool.query('UPDATE storage.drives SET default_for_user = $2 WHERE id = $1', [
      w.secondary,
      w.external,
    ]);
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual([`${PERSONAL_DRIVE_OWNER_MISMATCH} Drift ${w.secondary}`]);
    expect(run.findings[0]?.detail).toMatchObject({
      problems: ['default_not_owner'],
      default_for_user: w.external,
    });
  });

  it('an owner grant that expired leaves the drive without an owner', async () => {
    await db.pool.query(
      `UPDATE storage.role_grants SET expires_at = now() - interval '1 day'
        WHERE resource_id = $1 AND role = 'owner'`,
      [w.groupShared],
    );
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual([`${DRIVE_WITHOUT_OWNER} DataLoss ${w.groupShared}`]);
  });
});
