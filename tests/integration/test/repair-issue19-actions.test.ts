/**
 * The repair actions for issue 19's kinds on real Postgres: a blob row's
 * counter and mark recounted under the row lock, dangling and lingering
 * grants deleted, and the kinds with no single right answer marked "needs a
 * person" with why. Each plans without writing, applies what it planned,
 * refuses (writing nothing) when the resource changed, and re-verifies with
 * the check's own predicate (the check run again reports nothing).
 */
import { randomUUID } from 'node:crypto';
import { checkJob, PgFindingStore } from '@oxicloud/consistency';
import { RecoverableEngine } from '@oxicloud/recoverable';
import { PgBlobRowScan, PgGrantScan, PgRepairStore } from '@oxicloud/storage';
import {
  type ActionLine,
  createRepairActions,
  type RepairActions,
  type RepairFinding,
  type RepairLine,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  insertBlob,
  insertDrive,
  insertFile,
  insertFolder,
  insertUser,
  storageDb,
} from './part1-fixtures.js';

let seq = 0;
function finding(
  checkName: string,
  kind: string,
  resourceId: string,
  detail: Record<string, unknown> = {},
): RepairFinding {
  seq += 1;
  return { id: `f-${seq}`, checkName, kind, resourceId, lastSeenRunId: null, detail };
}

function asAction(line: RepairLine): ActionLine {
  if (line.type !== 'action') throw new Error(`expected an action line, got: ${JSON.stringify(line)}`);
  return line;
}

describe('repair actions for the blob-row, grant, tree and mime kinds', () => {
  let db: TestDatabase;
  let actions: RepairActions;
  let engine: RecoverableEngine;
  let findings: PgFindingStore;
  let user: string;
  let drive: string;

  const one = async <T>(q: string, values: unknown[] = []): Promise<T> =>
    (await db.pool.query(q, values)).rows[0] as T;
  const blobRow = (hash: string) =>
    one<{ ref_count: number; orphaned_at: Date | null }>(
      'SELECT ref_count, orphaned_at FROM storage.blobs WHERE hash = $1',
      [hash],
    );

  /** Runs a check with force and returns `kind resource` of its findings. */
  async function runCheck(name: 'blobs_consistency' | 'grants_consistency'): Promise<string[]> {
    const outcome = await engine.runOrResume(name, { params: { force: true } });
    expect(outcome.kind).toBe('ok');
    const run = await engine.latestRun(name);
    return (await findings.list(run?.run_id as string, { limit: 100 })).map(
      (f) => `${f.kind} ${f.resourceId}`,
    );
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    const sdb = storageDb(db.pool);
    actions = createRepairActions({ store: new PgRepairStore(sdb) });
    findings = new PgFindingStore({ pool: db.pool });
    engine = new RecoverableEngine({ pool: db.pool });
    for (const check of [
      ...new PgBlobRowScan(sdb).consistencyChecks(),
      ...new PgGrantScan(sdb).consistencyChecks(),
    ]) {
      engine.register(checkJob(check, { findings }));
    }
  });
  afterAll(async () => {
    await engine.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
    await db.drop();
  });
  beforeEach(async () => {
    await db.pool.query(
      `DELETE FROM storage.role_grants; DELETE FROM storage.files; DELETE FROM storage.blobs;
       DELETE FROM storage.folders; DELETE FROM storage.drives; DELETE FROM auth.users`,
    );
    user = await insertUser(db.pool, 'owner');
    drive = await insertDrive(db.pool, user, 'main');
  });

  describe('ref_count_mismatch / orphaned_at_mismatch → recount the blob row', () => {
    it('sets ref_count to the referencing files and clears a mark set while referenced; the check then reports nothing', async () => {
      const blob = await insertBlob(db.pool, 'shared bytes');
      await insertFile(db.pool, { driveId: drive, name: 'a', hash: blob.hash, size: blob.size });
      await insertFile(db.pool, { driveId: drive, name: 'b', hash: blob.hash, size: blob.size });
      // The issue 19 fault: the counter lowered to 0 by hand and orphaned_at backdated.
      await db.pool.query(
        "UPDATE storage.blobs SET ref_count = 0, orphaned_at = now() - interval '30 days' WHERE hash = $1",
        [blob.hash],
      );
      expect(await runCheck('blobs_consistency')).toEqual([`ref_count_mismatch ${blob.hash}`]);

      const line = asAction(
        await actions.plan(finding('blobs_consistency', 'ref_count_mismatch', blob.hash)),
      );
      expect(line.action).toBe('recount_blob_ref_count');
      expect(line.resource).toEqual({ type: 'blob', id: blob.hash });
      expect(line.before).toMatchObject({ ref_count: 0, file_count: 2, deleting: false });
      expect(line.after).toEqual({ ref_count: 2, orphaned_at: null });
      expect(line.derived).toEqual([]);
      expect(line.summary).toMatch(/ref_count 0 → 2/);
      expect((await blobRow(blob.hash)).ref_count).toBe(0); // planning wrote nothing

      expect(await actions.apply(line)).toMatchObject({
        status: 'applied',
        before: { ref_count: 0, file_count: 2 },
        after: { ref_count: 2, orphaned_at: null },
      });
      expect(await blobRow(blob.hash)).toEqual({ ref_count: 2, orphaned_at: null });
      expect(await actions.verify(line)).toBeNull();
      expect(await runCheck('blobs_consistency')).toEqual([]);
    });

    it('marks an unreferenced, never-marked row now (dedup_gc then waits its full grace)', async () => {
      const blob = await insertBlob(db.pool, 'never marked');
      await db.pool.query('UPDATE storage.blobs SET orphaned_at = NULL WHERE hash = $1', [blob.hash]);
      const line = asAction(
        await actions.plan(finding('blobs_consistency', 'orphaned_at_mismatch', blob.hash)),
      );
      expect(line.before).toMatchObject({ ref_count: 0, file_count: 0, orphaned_at: null });
      expect(line.after).toEqual({ ref_count: 0, orphaned_at: 'now()' });
      expect(await actions.verify(line)).toBe('orphaned_at unset while unreferenced');
      const before = Date.now();
      expect(await actions.apply(line)).toMatchObject({ status: 'applied' });
      const row = await blobRow(blob.hash);
      expect(row.ref_count).toBe(0);
      expect(row.orphaned_at?.getTime()).toBeGreaterThanOrEqual(before - 5_000);
      expect(await actions.verify(line)).toBeNull();
    });

    it('a counter left high keeps the recorded mark once it drops to 0', async () => {
      const blob = await insertBlob(db.pool, 'left high');
      await db.pool.query(
        "UPDATE storage.blobs SET ref_count = 3, orphaned_at = now() - interval '2 days' WHERE hash = $1",
        [blob.hash],
      );
      const recorded = (await blobRow(blob.hash)).orphaned_at?.toISOString();
      const line = asAction(
        await actions.plan(finding('blobs_consistency', 'ref_count_mismatch', blob.hash)),
      );
      expect(line.after).toEqual({ ref_count: 0, orphaned_at: recorded });
      expect(await actions.apply(line)).toMatchObject({ status: 'applied' });
      expect(await blobRow(blob.hash)).toEqual({ ref_count: 0, orphaned_at: new Date(recorded as string) });
    });

    it('skips, writing nothing, when a file was added between plan and apply', async () => {
      const blob = await insertBlob(db.pool, 'racing upload');
      await insertFile(db.pool, { driveId: drive, name: 'a', hash: blob.hash, size: blob.size });
      await db.pool.query('UPDATE storage.blobs SET ref_count = 5 WHERE hash = $1', [blob.hash]);
      const line = asAction(
        await actions.plan(finding('blobs_consistency', 'ref_count_mismatch', blob.hash)),
      );
      expect(line.after).toMatchObject({ ref_count: 1 });
      await insertFile(db.pool, { driveId: drive, name: 'b', hash: blob.hash, size: blob.size }); // trigger: 5 → 6
      const outcome = await actions.apply(line);
      expect(outcome.status).toBe('skipped');
      expect(outcome.status === 'skipped' && outcome.reason).toMatch(
        /file_count: planned 1, now 2; ref_count: planned 5, now 6/,
      );
      expect((await blobRow(blob.hash)).ref_count).toBe(6);
    });

    it('a row marked for deletion needs a person (the deletion protocol owns it)', async () => {
      const blob = await insertBlob(db.pool, 'being deleted');
      await db.pool.query('UPDATE storage.blobs SET ref_count = 2, deleting_at = now() WHERE hash = $1', [
        blob.hash,
      ]);
      const line = await actions.plan(finding('blobs_consistency', 'ref_count_mismatch', blob.hash));
      expect(line).toMatchObject({
        type: 'needs_person',
        reason: expect.stringMatching(/marked for deletion/),
      });
    });
  });

  describe('dangling_grant / expired_grant_lingering → delete the grant', () => {
    async function grant(type: string, resourceId: string, expires: string | null = null) {
      const { rows } = await db.pool.query(
        `INSERT INTO storage.role_grants (subject_id, resource_type, resource_id, role, created_at, expires_at)
         VALUES ($1, $2, $3, 'viewer', now() - interval '40 days', ${expires ?? 'NULL'}) RETURNING id`,
        [user, type, resourceId],
      );
      return rows[0].id as string;
    }
    const grantCount = async () =>
      (await one<{ n: number }>('SELECT count(*)::int AS n FROM storage.role_grants')).n;

    it('deletes a grant on a missing file and an expired grant left behind; the check then reports nothing', async () => {
      const keep = await grant('drive', drive);
      const missing = randomUUID();
      const dangling = await grant('file', missing);
      const lingering = await grant('drive', drive, "now() - interval '30 days'");
      expect((await runCheck('grants_consistency')).sort()).toEqual(
        [`dangling_grant ${dangling}`, `expired_grant_lingering ${lingering}`].sort(),
      );

      const d = asAction(await actions.plan(finding('grants_consistency', 'dangling_grant', dangling)));
      expect(d).toMatchObject({
        action: 'delete_dangling_grant',
        resource: { type: 'grant', id: dangling },
        before: { resource_type: 'file', resource_id: missing, role: 'viewer', resource_exists: false },
        after: { grant: null },
        derived: [],
      });
      const l = asAction(
        await actions.plan(finding('grants_consistency', 'expired_grant_lingering', lingering)),
      );
      expect(l).toMatchObject({ action: 'delete_expired_grant', before: { expired: true } });
      expect(await grantCount()).toBe(3); // planning wrote nothing

      expect(await actions.apply(d)).toMatchObject({ status: 'applied', after: { grant: null } });
      expect(await actions.apply(l)).toMatchObject({ status: 'applied' });
      const left = await db.pool.query('SELECT id FROM storage.role_grants');
      expect(left.rows.map((r) => r.id)).toEqual([keep]);
      expect(await actions.verify(d)).toBeNull();
      expect(await actions.verify(l)).toBeNull();
      expect(await runCheck('grants_consistency')).toEqual([]);
    });

    it('skips when the resource was re-created, or the grant extended, between plan and apply', async () => {
      const folderId = randomUUID();
      const dangling = await grant('folder', folderId);
      const lingering = await grant('drive', drive, "now() - interval '30 days'");
      const d = asAction(await actions.plan(finding('grants_consistency', 'dangling_grant', dangling)));
      const l = asAction(
        await actions.plan(finding('grants_consistency', 'expired_grant_lingering', lingering)),
      );
      await db.pool.query(
        `INSERT INTO storage.folders (id, drive_id, parent_id, name) VALUES ($1, $2, NULL, 'restored')`,
        [folderId, drive],
      );
      await db.pool.query(
        "UPDATE storage.role_grants SET expires_at = now() + interval '1 day' WHERE id = $1",
        [lingering],
      );
      const o1 = await actions.apply(d);
      expect(o1.status === 'skipped' && o1.reason).toMatch(/resource_exists: planned false, now true/);
      const o2 = await actions.apply(l);
      expect(o2.status === 'skipped' && o2.reason).toMatch(/expired: planned true, now false/);
      expect(await grantCount()).toBe(2);
      // A grant on a resource that exists now is no longer dangling: a new plan says so.
      expect(await actions.plan(finding('grants_consistency', 'dangling_grant', dangling))).toMatchObject({
        type: 'needs_person',
        reason: expect.stringMatching(/exists now/),
      });
    });
  });

  describe('kinds with no single right answer', () => {
    it('drive_id_parent_mismatch, orphan_root and mime_mismatch need a person, each saying why', async () => {
      const other = await insertDrive(db.pool, user, 'other');
      const parent = await insertFolder(db.pool, other, null, 'p');
      const folder = await insertFolder(db.pool, drive, null, 'f');
      const lines = await Promise.all([
        actions.plan(
          finding('folders_consistency', 'drive_id_parent_mismatch', folder, {
            drive_id: drive,
            parent_id: parent,
            parent_drive_id: other,
          }),
        ),
        actions.plan(
          finding('files_consistency', 'drive_id_parent_mismatch', randomUUID(), {
            drive_id: drive,
            folder_id: parent,
            folder_drive_id: other,
          }),
        ),
        actions.plan(
          finding('folders_consistency', 'orphan_root', folder, { drive_id: drive, parent_id: parent }),
        ),
        actions.plan(
          finding('files_consistency', 'mime_mismatch', randomUUID(), {
            mime_type: 'text/plain',
            blob_content_type: 'application/pdf',
            blob_hash: 'ab'.repeat(32),
          }),
        ),
      ]);
      expect(lines.map((l) => [l.type, l.resource.type])).toEqual([
        ['needs_person', 'folder'],
        ['needs_person', 'file'],
        ['needs_person', 'folder'],
        ['needs_person', 'file'],
      ]);
      const reasons = lines.map((l) => (l.type === 'needs_person' ? l.reason : ''));
      expect(reasons[0]).toMatch(new RegExp(`parent ${parent}'s drive ${other}.*person's decision`));
      expect(reasons[1]).toMatch(/folder's drive hands its content and quota/);
      expect(reasons[2]).toMatch(/never reaches a top-level folder.*not recorded anywhere/);
      expect(reasons[3]).toMatch(/text\/plain.*application\/pdf.*neither is authoritative/);
      for (const l of lines) expect(l.type === 'needs_person' && l.affected.length).toBeGreaterThan(0);
    });
  });
});
