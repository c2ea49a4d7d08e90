import {
  DRIVE_ID_PARENT_MISMATCH,
  FOLDERS_CONSISTENCY_CHECK_NAME,
  LPATH_MISMATCH,
  ORPHAN_ROOT,
  PARENT_TRASHED_MISMATCH,
  PATH_MISMATCH,
  TRASH_FLAGS_MISMATCH,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { OxiCloudDatabase } from './database.js';
import { OxiFolderTreeScan } from './oxi-folder-tree-scan.js';
import { checkRunner, folderLabel, oxiTreeFixtures, resetDomain, summary } from './tree-fixtures.js';

let db: TestDatabase;
let kysely: Kysely<OxiCloudDatabase>;
let runner: ReturnType<typeof checkRunner>;
let fx: ReturnType<typeof oxiTreeFixtures>;
let check: ReturnType<OxiFolderTreeScan['consistencyChecks']>[number];

/** A clean world: two personal drives, a shared drive owned by a group, nested folders, a trashed subtree. */
interface World {
  alice: string;
  personal: { driveId: string; rootId: string };
  secondary: { driveId: string; rootId: string };
  shared: { driveId: string; rootId: string };
  docs: string;
  work: string;
  deep: string;
  old: string;
  oldInner: string;
  team: string;
  folderCount: number;
}
let w: World;

async function seed(): Promise<World> {
  const alice = await fx.user('alice');
  const bob = await fx.user('bob');
  const group = await fx.group('team-a', [alice, bob]);
  const personal = await fx.personalDrive(alice);
  const secondary = await fx.personalDrive(alice, { default: false });
  const shared = await fx.sharedDrive('Team space', { type: 'group', id: group });
  const docs = await fx.folder(personal.driveId, personal.rootId, 'docs');
  const work = await fx.folder(personal.driveId, docs, 'work');
  const deep = await fx.folder(personal.driveId, work, 'deep');
  const old = await fx.folder(personal.driveId, personal.rootId, 'old');
  const oldInner = await fx.folder(personal.driveId, old, 'inner');
  await fx.file(personal.driveId, oldInner, 'a.txt', 10);
  await fx.trashFolder(old, 3);
  const team = await fx.folder(shared.driveId, shared.rootId, 'plans');
  await fx.folder(secondary.driveId, secondary.rootId, 'archive');
  return { alice, personal, secondary, shared, docs, work, deep, old, oldInner, team, folderCount: 10 };
}

beforeAll(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  kysely = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
  runner = checkRunner(db.pool);
  fx = oxiTreeFixtures(db.pool);
  check = new OxiFolderTreeScan(kysely).consistencyChecks()[0]!;
});
afterAll(async () => {
  await runner?.shutdown().catch(() => undefined);
  await db?.drop();
});
beforeEach(async () => {
  await resetDomain(db.pool);
  w = await seed();
});

describe('OxiFolderTreeScan: folders_consistency on OxiCloud’s tree', () => {
  it('is folders_consistency of the folder tree', () => {
    expect(check.name).toBe(FOLDERS_CONSISTENCY_CHECK_NAME);
    expect(check.subsystem).toBe('folder_tree');
  });

  it('trash columns that disagree with the flag → trash_flags_mismatch (Drift) naming the problem; a cascaded one keeping its own original_parent_id is fine', async () => {
    const q = (text: string, values: unknown[]) => db.pool.query(text, values);
    // A trashed folder without trashed_at; a live one with a trashed_at left; a live one with original_parent_id.
    await q('UPDATE storage.folders SET trashed_at = NULL WHERE id = $1', [w.old]);
    await q("UPDATE storage.folders SET trashed_at = now() - interval '1 day' WHERE id = $1", [w.deep]);
    await q('UPDATE storage.folders SET original_parent_id = parent_id WHERE id = $1', [w.team]);
    // Trashed by the cascade but with an original_parent_id of an earlier trash of its own: allowed.
    await q('UPDATE storage.folders SET original_parent_id = parent_id WHERE id = $1', [w.oldInner]);
    const run = await runner.run(check, { batch_size: 3 });
    expect(summary(run.findings)).toEqual(
      [w.old, w.deep, w.team].map((id) => `${TRASH_FLAGS_MISMATCH} Drift ${id}`).sort(),
    );
    const problems = Object.fromEntries(run.findings.map((f) => [f.resourceId, f.detail['problem']]));
    expect(problems).toEqual({
      [w.old]: 'trashed_without_trashed_at',
      [w.deep]: 'live_with_trashed_at',
      [w.team]: 'live_with_original_parent',
    });
  });

  it('a tree written as OxiCloud writes it (roots without a slash, `_` labels, a trashed subtree) → 0 findings', async () => {
    const { rows } = await db.pool.query(
      'SELECT path, lpath::text AS lpath FROM storage.folders WHERE id = ANY($1::uuid[]) ORDER BY path',
      [[w.personal.rootId, w.deep]],
    );
    // What OxiCloud's trigger writes, which the scan's expectations must match.
    expect(rows).toEqual([
      { path: 'Personal', lpath: folderLabel(w.personal.rootId) },
      {
        path: 'Personal/docs/work/deep',
        lpath: [w.personal.rootId, w.docs, w.work, w.deep].map(folderLabel).join('.'),
      },
    ]);
    const run = await runner.run(check, { batch_size: 3 });
    expect(run.status).toBe('Completed');
    expect(run.findings).toEqual([]);
    expect(run.stats['scanned_count']).toBe(w.folderCount);
  });

  it('a drifted path → path_mismatch only (expected: parent.path/name; a root: its name)', async () => {
    // Plain UPDATEs of path (the path trigger does not fire on them): OxiCloud's cascade
    // trigger carries the root's new prefix down, so its child stays consistent with it.
    await db.pool.query("UPDATE storage.folders SET path = '/Personal/docs/work/deep' WHERE id = $1", [
      w.deep,
    ]);
    await db.pool.query("UPDATE storage.folders SET path = '/Team space' WHERE id = $1", [w.shared.rootId]);
    const { rows } = await db.pool.query('SELECT path FROM storage.folders WHERE id = $1', [w.team]);
    expect(rows[0].path).toBe('/Team space/plans');
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual(
      [`${PATH_MISMATCH} Drift ${w.deep}`, `${PATH_MISMATCH} Drift ${w.shared.rootId}`].sort(),
    );
    expect(run.findings.find((f) => f.resourceId === w.shared.rootId)?.detail).toMatchObject({
      recorded: '/Team space',
      expected: 'Team space',
    });
  });

  it('a drifted lpath (dashes kept in a label) → lpath_mismatch only', async () => {
    const wrong = `${folderLabel(w.personal.rootId)}.${folderLabel(w.docs)}.${folderLabel(w.work)}.${w.deep.replaceAll('-', '')}`;
    await fx.drift(['UPDATE storage.folders SET lpath = $1::ltree WHERE id = $2', [wrong, w.deep]]);
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual([`${LPATH_MISMATCH} Drift ${w.deep}`]);
    expect(run.findings[0]?.detail).toMatchObject({
      recorded: wrong,
      expected: [w.personal.rootId, w.docs, w.work, w.deep].map(folderLabel).join('.'),
    });
  });

  it("a folder whose drive differs from its parent's → drive_id_parent_mismatch only", async () => {
    await fx.drift(['UPDATE storage.folders SET drive_id = $1 WHERE id = $2', [w.shared.driveId, w.deep]]);
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual([`${DRIVE_ID_PARENT_MISMATCH} DataLoss ${w.deep}`]);
    expect(run.findings[0]?.detail).toMatchObject({
      drive_id: w.shared.driveId,
      parent_drive_id: w.personal.driveId,
    });
  });

  it('a root another drive points at (two drives, one root) → drive_id_parent_mismatch on the root', async () => {
    // The secondary drive is re-pointed at the default drive's root, its own root removed.
    await fx.drift(
      [
        'UPDATE storage.drives SET root_folder_id = $1 WHERE id = $2',
        [w.personal.rootId, w.secondary.driveId],
      ],
      ['DELETE FROM storage.folders WHERE drive_id = $1', [w.secondary.driveId]],
    );
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual([`${DRIVE_ID_PARENT_MISMATCH} DataLoss ${w.personal.rootId}`]);
    expect(run.findings[0]?.detail).toMatchObject({ parent_drive_id: w.secondary.driveId });
  });

  it('a live root no drive points at, and the folders below it → orphan_root (a trashed root is not)', async () => {
    const stray = '0193aaaa-0000-7000-8000-000000000001';
    const trashedStray = '0193aaaa-0000-7000-8000-000000000002';
    await fx.drift(
      [
        `INSERT INTO storage.folders (id, name, parent_id, path, lpath, drive_id)
         VALUES ($1, 'Stray', NULL, 'Stray', $2::ltree, $3)`,
        [stray, folderLabel(stray), w.personal.driveId],
      ],
      [
        `INSERT INTO storage.folders (id, name, parent_id, path, lpath, drive_id, is_trashed, trashed_at)
         VALUES ($1, 'Gone', NULL, 'Gone', $2::ltree, $3, true, now() - interval '3 days')`,
        [trashedStray, folderLabel(trashedStray), w.personal.driveId],
      ],
    );
    // Their children: the chain of the first ends at a top-level folder that is not the
    // drive's root (unreachable from it); the second's at a trashed one (the trash's).
    const under = await fx.folder(w.personal.driveId, stray, 'under');
    const inTrash = await fx.folder(w.personal.driveId, trashedStray, 'in-trash');
    await db.pool.query(
      "UPDATE storage.folders SET is_trashed = true, trashed_at = now() - interval '3 days' WHERE id = $1",
      [inTrash],
    );
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual([stray, under].map((id) => `${ORPHAN_ROOT} DataLoss ${id}`).sort());
  });

  it('a parent cycle → orphan_root on each folder of it, no path findings', async () => {
    // docs → work → deep, then docs.parent := deep: a cycle cut off from the root.
    await fx.drift(['UPDATE storage.folders SET parent_id = $1 WHERE id = $2', [w.deep, w.docs]]);
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual(
      [w.docs, w.work, w.deep].map((id) => `${ORPHAN_ROOT} DataLoss ${id}`).sort(),
    );
  });

  it('a live folder under a trashed parent (legacy trash) → parent_trashed_mismatch, past the grace only', async () => {
    await db.pool.query('UPDATE storage.folders SET is_trashed = false, trashed_at = NULL WHERE id = $1', [
      w.oldInner,
    ]);
    const run = await runner.run(check);
    expect(summary(run.findings)).toEqual([`${PARENT_TRASHED_MISMATCH} DataLoss ${w.oldInner}`]);
    // Trashed a moment ago: within the 1 h grace, not (yet) a finding.
    await fx.trashFolder(w.work, 0);
    await db.pool.query('UPDATE storage.folders SET is_trashed = false, trashed_at = NULL WHERE id = $1', [
      w.deep,
    ]);
    const again = await runner.run(check);
    expect(summary(again.findings)).toEqual([`${PARENT_TRASHED_MISMATCH} DataLoss ${w.oldInner}`]);
  });
});
