/**
 * The repair run on real Postgres and a real local blob store: an approved
 * plan is applied as a recoverable run; an item whose resource changed since
 * the plan is skipped with the reason while the rest applies; every applied
 * item has one audit row; a paused run resumes without applying anything twice.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PgRepairPlans, type Severity, severityRank } from '@oxicloud/consistency';
import { RecoverableEngine } from '@oxicloud/recoverable';
import { blake3Hex, LocalFsBlobStorage, PgRepairStore } from '@oxicloud/storage';
import {
  type BlobHasher,
  createRepairActions,
  createRepairJob,
  createRepairPlanner,
  REPAIR_JOB_NAME,
  RESTORE_PARENT,
  type RepairActions,
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

describe('the repair run', () => {
  let db: TestDatabase;
  let root: string;
  let storage: LocalFsBlobStorage;
  let plans: PgRepairPlans;
  let store: PgRepairStore;
  let user: string;
  let drive: string;

  const hasher: BlobHasher = {
    async hashStoredBlob(hash) {
      const chunks: Uint8Array[] = [];
      for await (const chunk of await storage.get(hash)) chunks.push(chunk);
      const bytes = Buffer.concat(chunks);
      return { hash: blake3Hex(bytes), size: bytes.byteLength, head: bytes.subarray(0, 4096) };
    },
  };

  async function insertFinding(check: string, kind: string, resourceId: string, severity: Severity) {
    const id = randomUUID();
    await db.pool.query(
      `INSERT INTO jobs.findings (id, check_name, kind, resource_id, severity, severity_rank, highest_severity,
                                 first_seen_at, last_seen_at, last_seen_boundary)
       VALUES ($1, $2, $3, $4, $5, $6, $5, now(), now(), now())`,
      [id, check, kind, resourceId, severity, severityRank(severity)],
    );
    return id;
  }

  function engineWith(actions: RepairActions) {
    const engine = new RecoverableEngine({ pool: db.pool });
    engine.register(createRepairJob({ plans, actions, store, blobs: storage }));
    return engine;
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    root = await mkdtemp(join(tmpdir(), 'oxicloud-repair-run-'));
    storage = new LocalFsBlobStorage({ root });
    plans = new PgRepairPlans({ pool: db.pool });
    store = new PgRepairStore(storageDb(db.pool));
  });
  afterAll(async () => {
    await db.drop();
    await rm(root, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await db.pool.query(
      `DELETE FROM jobs.repair_audit; DELETE FROM jobs.repair_plans; DELETE FROM jobs.findings; DELETE FROM jobs.recoverable_runs;
       DELETE FROM storage.files; DELETE FROM storage.blobs; DELETE FROM storage.folders;
       DELETE FROM storage.drives; DELETE FROM auth.users`,
    );
    user = await insertUser(db.pool, 'owner');
    drive = await insertDrive(db.pool, user, 'main');
  });

  /** Five faults, their findings, and what the test needs to look at them. */
  async function faults() {
    const a = await insertFolder(db.pool, drive, null, 'a');
    const b = await insertFolder(db.pool, drive, a, 'b');
    await db.pool.query("UPDATE storage.folders SET path = '/wrong/b' WHERE id = $1", [b]);
    const c = await insertFolder(db.pool, drive, null, 'c');
    const d = await insertFolder(db.pool, drive, c, 'd');
    await db.pool.query("UPDATE storage.folders SET path = '/wrong/d' WHERE id = $1", [d]);
    const trashed = await insertFolder(db.pool, drive, null, 'bin', new Date());
    const live = await insertFolder(db.pool, drive, trashed, 'live');
    const orphan = new TextEncoder().encode('orphan bytes');
    const orphanHash = blake3Hex(orphan);
    await storage.put(orphanHash, orphan, orphan.byteLength);
    const lost = await insertBlob(db.pool, 'lost', { storage });
    await insertFile(db.pool, { driveId: drive, name: 'lost', hash: lost.hash, size: lost.size });
    await db.pool.query('DELETE FROM storage.blobs WHERE hash = $1', [lost.hash]);
    await storage.delete(lost.hash);
    await db.pool.query('UPDATE storage.drives SET used_bytes = 999 WHERE id = $1', [drive]);
    const findings = {
      drift: await insertFinding('drives_consistency', 'drive_used_bytes_drift', drive, 'Drift'),
      pathB: await insertFinding('folders_consistency', 'path_mismatch', b, 'Drift'),
      pathD: await insertFinding('folders_consistency', 'path_mismatch', d, 'Drift'),
      trashed: await insertFinding('folders_consistency', 'parent_trashed_mismatch', live, 'DataLoss'),
      orphan: await insertFinding('storage_consistency', 'orphan_blob', orphanHash, 'Reclaimable'),
      lost: await insertFinding('files_consistency', 'missing_blob', lost.hash, 'DataLoss'),
    };
    return { a, b, c, d, trashed, live, orphanHash, findings };
  }

  const path = async (id: string) =>
    (await db.pool.query<{ path: string }>('SELECT path FROM storage.folders WHERE id = $1', [id])).rows[0]
      ?.path;

  it('applies an approved plan, skips the item a user changed, audits each applied item, and refuses a stale hash', async () => {
    const f = await faults();
    const actions = createRepairActions({ store, blobs: { blobs: storage, hasher } });
    const planner = createRepairPlanner({ actions, plans });
    const plan = await planner.plan({
      selection: { findingIds: Object.values(f.findings) },
      choices: { [f.findings.trashed]: RESTORE_PARENT },
      actor: 'admin-1',
    });
    expect(plan.unchosen).toBe(0);
    await expect(plans.approve(plan.id, '0'.repeat(64), 'admin-2')).rejects.toMatchObject({
      code: 'PLAN_CONFLICT',
    });
    await plans.approve(plan.id, plan.hash, 'admin-2');

    // A user renames folder d between approval and apply.
    await db.pool.query("UPDATE storage.folders SET name = 'renamed' WHERE id = $1", [f.d]);

    const engine = engineWith(actions);
    const outcome = await engine.runOrResume(REPAIR_JOB_NAME, { params: { plan_id: plan.id } });
    expect(outcome).toMatchObject({ kind: 'ok', extra: { completed: true } });
    const run = await engine.latestRun(REPAIR_JOB_NAME);
    expect(run?.stats).toMatchObject({ applied_items: 4, skipped_items: 1, needs_person_items: 1, count: 4 });

    const stored = await planner.get(plan.id);
    expect(stored?.state).toBe('applied');
    expect(stored?.runId).toBe(run?.run_id);
    const byFinding = new Map(stored?.lines.map((l) => [l.findingId, l]));
    expect(byFinding.get(f.findings.pathD)).toMatchObject({
      status: 'skipped',
      skipReason: expect.stringMatching(/path: planned "\/wrong\/d", now "\/c\/renamed"/),
    });
    expect(byFinding.get(f.findings.lost)?.status).toBe('needs_person');
    for (const key of ['drift', 'pathB', 'trashed', 'orphan'] as const) {
      expect(byFinding.get(f.findings[key])?.status).toBe('applied');
    }

    expect(await path(f.b)).toBe('/a/b');
    expect(await path(f.d)).toBe('/c/renamed');
    const usage = await db.pool.query('SELECT used_bytes FROM storage.drives WHERE id = $1', [drive]);
    expect(Number(usage.rows[0].used_bytes)).toBe(4); // the one file ('lost', 4 bytes)
    const bin = await db.pool.query('SELECT is_trashed FROM storage.folders WHERE id = $1', [f.trashed]);
    expect(bin.rows[0].is_trashed).toBe(false);
    expect(await storage.exists(f.orphanHash)).toBe(false);
    expect(
      (await db.pool.query('SELECT 1 FROM storage.blobs WHERE hash = $1', [f.orphanHash])).rowCount,
    ).toBe(0);

    // Re-verification: each repaired resource re-checked; those that pass are fixed by the repair run.
    const states = await db.pool.query<{
      id: string;
      state: string;
      fixed_run_id: string | null;
      state_changed_by: string;
    }>('SELECT id, state, fixed_run_id, state_changed_by FROM jobs.findings');
    const state = new Map(states.rows.map((r) => [r.id, r]));
    for (const key of ['drift', 'pathB', 'trashed', 'orphan'] as const) {
      expect(state.get(f.findings[key])).toMatchObject({
        state: 'fixed',
        fixed_run_id: run?.run_id,
        state_changed_by: 'repair:admin-2',
      });
      expect(byFinding.get(f.findings[key])?.verified).toBe('passed');
    }
    expect(state.get(f.findings.pathD)?.state).toBe('open'); // skipped: stays open
    expect(state.get(f.findings.lost)?.state).toBe('open'); // needs a person
    const events = await db.pool.query(
      "SELECT count(*)::int AS n FROM jobs.finding_events WHERE event = 'fixed' AND run_id = $1",
      [run?.run_id],
    );
    expect(events.rows[0].n).toBe(4);

    const audit = await db.pool.query(
      'SELECT finding_id, approved_by, run_id, action, before, after FROM jobs.repair_audit WHERE plan_id = $1 ORDER BY position',
      [plan.id],
    );
    expect(audit.rows.map((r) => r.finding_id).sort()).toEqual(
      [f.findings.drift, f.findings.pathB, f.findings.trashed, f.findings.orphan].sort(),
    );
    expect(audit.rows.every((r) => r.approved_by === 'admin-2' && r.run_id === run?.run_id)).toBe(true);
    expect(audit.rows.find((r) => r.action === 'recompute_drive_used_bytes')).toMatchObject({
      before: { used_bytes: 999, files_bytes: 4 },
      after: { used_bytes: 4 },
    });
  });

  it('a run paused after its first batch resumes where it stopped: every item applied once, one audit row each', async () => {
    const f = await faults();
    const base = createRepairActions({ store, blobs: { blobs: storage, hasher } });
    const planner = createRepairPlanner({ actions: base, plans });
    const plan = await planner.plan({
      selection: { findingIds: Object.values(f.findings) },
      choices: { [f.findings.trashed]: RESTORE_PARENT },
      actor: 'admin-1',
    });
    await plans.approve(plan.id, plan.hash, 'admin-1');
    const applied: string[] = [];
    let cancel: Promise<unknown> | undefined;
    let engine: RecoverableEngine | undefined;
    const counting: RepairActions = {
      ...base,
      async applyIn(line, tx) {
        applied.push(line.findingId);
        // Ask the run to pause (from another connection: it waits for this batch's checkpoint to commit);
        // a later checkpoint sees CancelRequested and the run lands Paused.
        cancel ??= engine?.cancel(REPAIR_JOB_NAME);
        return base.applyIn(line, tx);
      },
    };
    engine = engineWith(counting);
    const first = await engine.runOrResume(REPAIR_JOB_NAME, { params: { plan_id: plan.id, batch_size: 1 } });
    await cancel;
    expect(first).toMatchObject({ kind: 'ok', extra: { paused: true } });
    const paused = await engine.latestRun(REPAIR_JOB_NAME);
    expect(paused?.status).toBe('Paused');
    const auditAfterPause = await db.pool.query('SELECT count(*)::int AS n FROM jobs.repair_audit');
    expect(auditAfterPause.rows[0].n).toBe(applied.length);
    expect(applied.length).toBeGreaterThanOrEqual(1);

    const second = await engine.runOrResume(REPAIR_JOB_NAME, { params: { plan_id: plan.id, batch_size: 1 } });
    expect(second).toMatchObject({ kind: 'ok', extra: { completed: true } });
    const done = await engine.latestRun(REPAIR_JOB_NAME);
    expect(done?.run_id).toBe(paused?.run_id);
    expect(new Set(applied).size).toBe(applied.length); // no item applied twice
    expect(applied.length).toBe(5); // every action line once (the needs-a-person line is never applied)
    const audit = await db.pool.query(
      'SELECT position, count(*)::int AS n FROM jobs.repair_audit WHERE plan_id = $1 GROUP BY position',
      [plan.id],
    );
    expect(audit.rows.length).toBe(5);
    expect(audit.rows.every((r) => r.n === 1)).toBe(true);
    expect(done?.stats).toMatchObject({ applied_items: 5, skipped_items: 0, needs_person_items: 1 });
  });
});
