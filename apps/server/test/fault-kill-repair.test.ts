import { categoryOrderFor } from '@oxicloud/storage';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminClient,
  adminToken,
  type CliProcess,
  freePort,
  killHard,
  scratchDir,
  serverEnv,
  sleep,
  startServer,
} from './fault-support.js';

/** Kills of the server process during the one repair run (each after some progress since the last). */
const KILLS = 3;
const USERS = 80;
const DRIVES_PER_USER = 10;
const FILES_PER_DRIVE = 2;
/** Every 4th user's envelope drifts too (a `user_used_bytes_drift` finding). */
const USER_DRIFT_EVERY = 4;
const USER_DRIFT = 12_345;
const DRIVE_FINDINGS = USERS * DRIVES_PER_USER;
const USER_FINDINGS = USERS / USER_DRIFT_EVERY;
/** 820 items: 9 batches of the run's default 100 (a plan holds at most 1000 findings). */
const ITEMS = DRIVE_FINDINGS + USER_FINDINGS;

interface PlanJson {
  id: string;
  hash: string;
  state: string;
  run_id: string | null;
  approved_by: string | null;
  lines: Array<{
    type: string;
    action?: string;
    findingId: string;
    status: string;
    skip_reason: string | null;
    verified?: string | null;
  }>;
}

/**
 * Issue 21 ("kill -9 during apply, then resume: every item applied once, the
 * audit has one row per applied item"), on OxiCloud's storage domain (the
 * server's default; `OxiRepairStore`): a real `oxijobs serve` process on a
 * dataset with 800 personal drives (80 users × one default and nine
 * secondary drives, each owned through its grant) whose `used_bytes` drifted and 20 users whose
 * envelope drifted. drives_consistency finds them; the plan (HTTP) covers all
 * 820; apply runs the `repair` run, which is killed with SIGKILL 3 times
 * while items apply and once more while it re-verifies them (after the last
 * batch, before the run is Completed). After each restart the boot sweep has
 * paused the run ('server restart mid-run'), and it is never resumed by
 * itself (applying the plan again is refused); a trigger through the admin
 * API resumes the same run. At the end: every drive's `used_bytes` is
 * exactly its files' sum and every user's envelope exactly its drives' sum
 * (a delta applied twice would leave the owner's envelope off), the audit
 * has exactly one row per item, no item was skipped, every line is verified
 * `passed` with its finding `fixed` by the run, and a new drives_consistency
 * run finds nothing.
 */
describe('kill -9 of the server during a repair run', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof scratchDir>;
  let server: CliProcess | undefined;

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    dir = scratchDir('fault-kill-repair');
    const client = await db.pool.connect();
    try {
      // OxiCloud's four writes, set-based in one transaction (the root check runs at COMMIT): per user one
      // default and nine secondary personal drives, each with its root folder and its one user owner grant.
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO auth.users (username, email, role)
         VALUES ('admin', 'admin@example.test', 'admin')`,
      );
      await client.query(
        `INSERT INTO auth.users (username, email, role)
         SELECT 'repair-owner-' || g, 'repair-owner-' || g || '@example.test', 'user' FROM generate_series(1, $1::int) g`,
        [USERS],
      );
      // The owner rides in policies until its grant is written (secondary drives have no default_for_user).
      await client.query(
        `INSERT INTO storage.drives (kind, default_for_user, policies)
         SELECT 'personal', CASE WHEN g = 1 THEN u.id END, jsonb_build_object('owner', u.id)
           FROM auth.users u, generate_series(1, $1::int) g
          WHERE u.username LIKE 'repair-owner-%'`,
        [DRIVES_PER_USER],
      );
      await client.query(
        `INSERT INTO storage.folders (name, parent_id, drive_id, created_by, updated_by)
         SELECT 'Personal', NULL, d.id, (d.policies->>'owner')::uuid, (d.policies->>'owner')::uuid
           FROM storage.drives d`,
      );
      await client.query(
        `UPDATE storage.drives d SET root_folder_id = f.id FROM storage.folders f
          WHERE f.drive_id = d.id AND f.parent_id IS NULL`,
      );
      await client.query(
        `INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by)
         SELECT 'user', (d.policies->>'owner')::uuid, 'drive', d.id, 'owner', (d.policies->>'owner')::uuid
           FROM storage.drives d`,
      );
      await client.query(
        `UPDATE storage.drives
            SET policies = '{"include_in_photo_index": true, "include_in_music_index": true}'::jsonb`,
      );
      // Each file its own legacy blob row (ref_count 1: the one file naming it), in its drive's root folder.
      const files = `
        SELECT d.id AS drive_id, d.root_folder_id AS folder_id, 'file-' || g AS name,
               md5(d.id::text || g) || md5(g || d.id::text) AS blob_hash,
               1 + abs(hashtext(d.id::text || g)) % 100000 AS size
          FROM storage.drives d, generate_series(1, ${FILES_PER_DRIVE}) g`;
      await client.query(
        `INSERT INTO storage.blobs (hash, size, ref_count, content_type)
         SELECT blob_hash, size, 1, 'application/octet-stream' FROM (${files}) f`,
      );
      await client.query(
        `INSERT INTO storage.files (drive_id, folder_id, name, blob_hash, size, category_order)
         SELECT drive_id, folder_id, name, blob_hash, size, ${categoryOrderFor('f', 'application/octet-stream')} FROM (${files}) f`,
      );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
    // Every drive drifts (up on even rows, down to half on odd ones); the envelopes follow the drifted drives…
    await db.pool.query(
      `UPDATE storage.drives d
          SET used_bytes = CASE WHEN s.n % 2 = 0 THEN s.total + 1 + s.n % 4096 ELSE s.total / 2 END
         FROM (SELECT f.drive_id, sum(f.size)::bigint AS total,
                      row_number() OVER (ORDER BY f.drive_id) AS n
                 FROM storage.files f GROUP BY f.drive_id) s
        WHERE s.drive_id = d.id`,
    );
    await db.pool.query(
      `UPDATE auth.users u SET storage_used_bytes = s.total
         FROM (SELECT g.subject_id AS owner_id, sum(d.used_bytes)::bigint AS total
                 FROM storage.drives d JOIN storage.role_grants g
                   ON g.resource_type = 'drive' AND g.resource_id = d.id AND g.role = 'owner'
                GROUP BY g.subject_id) s
        WHERE s.owner_id = u.id`,
    );
    // …except every 4th user's, which drifts on its own.
    await db.pool.query(
      `UPDATE auth.users u SET storage_used_bytes = storage_used_bytes + $1
         FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM auth.users
                WHERE username LIKE 'repair-owner-%') s
        WHERE s.id = u.id AND s.n % $2 = 0`,
      [USER_DRIFT, USER_DRIFT_EVERY],
    );
  }, 120_000);

  afterAll(async () => {
    if (server) await killHard(server);
    await db?.drop();
    dir?.remove();
  });

  async function auditCount(planId: string): Promise<number> {
    const { rows } = await db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM jobs.repair_audit WHERE plan_id = $1',
      [planId],
    );
    return rows[0]!.n;
  }

  async function verifiedCount(planId: string): Promise<number> {
    const { rows } = await db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM jobs.repair_plan_items WHERE plan_id = $1 AND verified IS NOT NULL',
      [planId],
    );
    return rows[0]!.n;
  }

  async function runStatus(runId: string): Promise<string | undefined> {
    const { rows } = await db.pool.query<{ status: string }>(
      'SELECT status FROM jobs.recoverable_runs WHERE id = $1',
      [runId],
    );
    return rows[0]?.status;
  }

  it(`${KILLS} kills while items apply and one while they are re-verified, each followed by a resume: every item applied once, one audit row each`, async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = serverEnv({ databaseUrl: db.url, dataDir: dir.path, httpPort: port });
    server = await startServer(env);
    const token = await adminToken(db.pool);
    const api = adminClient(base, token);
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      // biome-ignore lint/suspicious/noExplicitAny: the test reads nested JSON freely
      return { status: res.status, body: (await res.json()) as any };
    };

    // The real check finds the faults.
    const check = await api.trigger('drives_consistency');
    const checked = await api.waitFor('drives_consistency', check.run_id, ['Completed'], 60_000);
    expect(checked.stats['findings']).toBe(ITEMS);

    // Plan through the admin API: one action line per finding, nothing needs a person.
    const planned = await call('POST', '/api/admin/repairs/plan', {
      filter: { check: 'drives_consistency' },
    });
    expect(planned.status, JSON.stringify(planned.body).slice(0, 500)).toBe(201);
    const plan = planned.body as PlanJson;
    expect(plan.lines).toHaveLength(ITEMS);
    expect(plan.lines.every((l) => l.type === 'action')).toBe(true);
    const actions = plan.lines.map((l) => l.action);
    expect(actions.filter((a) => a === 'recompute_drive_used_bytes')).toHaveLength(DRIVE_FINDINGS);
    expect(actions.filter((a) => a === 'recompute_user_used_bytes')).toHaveLength(USER_FINDINGS);

    const applied = await call('POST', `/api/admin/repairs/${plan.id}/apply`, { hash: plan.hash });
    expect(applied.status, JSON.stringify(applied.body)).toBe(202);
    const runId = applied.body.run_id as string;

    let killedMidRun = 0;
    let committed = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      // Kill once the run made progress since the last resume (a checkpoint committed), at a random moment of a batch.
      const deadline = Date.now() + 60_000;
      let seen = await auditCount(plan.id);
      while (seen <= committed && Date.now() < deadline) {
        await sleep(5);
        seen = await auditCount(plan.id);
      }
      expect(seen, `progress before kill ${kill + 1}`).toBeGreaterThan(committed);
      if (seen >= ITEMS) break; // the run outran the kill: nothing left to interrupt
      await sleep(Math.floor(Math.random() * 150));
      await killHard(server);
      server = await startServer(env);

      const run = await api.run('repair', runId);
      if (run.status === 'Completed') break;
      // The boot sweep paused it; nothing resumes it by itself.
      expect(run).toMatchObject({
        status: 'Paused',
        pause_reason: 'server restart mid-run',
        error_message: 'server restart mid-run',
      });
      killedMidRun++;
      const afterKill = await auditCount(plan.id);
      expect(afterKill).toBeGreaterThanOrEqual(committed);
      expect(afterKill).toBeLessThan(ITEMS);
      // The counters, the items' status and the audit rows committed together (the checkpoint).
      expect(Number(run.stats['applied_items'])).toBe(afterKill);
      const done = await db.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM jobs.repair_plan_items WHERE plan_id = $1 AND status = 'applied'",
        [plan.id],
      );
      expect(done.rows[0]!.n).toBe(afterKill);
      committed = afterKill;
      await sleep(300);
      expect((await api.run('repair', runId)).status, 'not resumed by itself').toBe('Paused');
      expect(await auditCount(plan.id)).toBe(committed);

      // Applying the plan again is refused (it is approved already): only a resume continues it.
      const again = await call('POST', `/api/admin/repairs/${plan.id}/apply`, { hash: plan.hash });
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('REPAIR_PLAN_CONFLICT');

      const resumed = await api.trigger('repair');
      expect(resumed).toMatchObject({ run_id: runId, resumed: true });
    }
    expect(killedMidRun, 'kills that landed mid-run').toBeGreaterThanOrEqual(1);

    // One more kill once every item is applied, while the still-Running run re-verifies them: the resumed run
    // applies nothing more and re-checks only what was not verified yet.
    let killedInVerification = false;
    const verifyDeadline = Date.now() + 60_000;
    let verifiedAtKill = await verifiedCount(plan.id);
    while (verifiedAtKill === 0 && (await runStatus(runId)) !== 'Completed' && Date.now() < verifyDeadline) {
      await sleep(5);
      verifiedAtKill = await verifiedCount(plan.id);
    }
    if (verifiedAtKill > 0 && verifiedAtKill < ITEMS) {
      await killHard(server);
      server = await startServer(env);
      const run = await api.run('repair', runId);
      expect(run).toMatchObject({ status: 'Paused', pause_reason: 'server restart mid-run' });
      expect(await auditCount(plan.id)).toBe(ITEMS);
      killedInVerification = true;
      killedMidRun++;
      expect(await api.trigger('repair')).toMatchObject({ run_id: runId, resumed: true });
    }
    // Re-verifying 820 items takes seconds: the kill lands in it (or the test says why it could not).
    expect(killedInVerification, `verified at kill: ${verifiedAtKill} of ${ITEMS}`).toBe(true);

    const finished = await api.waitFor('repair', runId, ['Completed', 'Failed'], 120_000);
    expect(finished.status, JSON.stringify(finished)).toBe('Completed');
    expect(finished.stats).toMatchObject({ applied_items: ITEMS, skipped_items: 0, needs_person_items: 0 });
    expect(finished.attempt).toBe(1 + killedMidRun);

    // Every item applied exactly once: the resources are exact (a delta applied twice would show in the envelopes).
    // OxiCloud's formulas (fact sheet §6): a drive's live files; an envelope, the personal drives owned by grant.
    const drives = await db.pool.query(
      `SELECT d.id, d.used_bytes, COALESCE(sum(f.size) FILTER (WHERE NOT f.is_trashed), 0) AS files
         FROM storage.drives d LEFT JOIN storage.files f ON f.drive_id = d.id
        GROUP BY d.id HAVING d.used_bytes <> COALESCE(sum(f.size) FILTER (WHERE NOT f.is_trashed), 0)`,
    );
    expect(drives.rows).toEqual([]);
    const owned = `(SELECT COALESCE(sum(f.size), 0) FROM storage.files f
                      JOIN storage.drives d ON d.id = f.drive_id AND d.kind = 'personal'
                      JOIN storage.role_grants g ON g.resource_type = 'drive' AND g.resource_id = d.id
                                               AND g.role = 'owner' AND g.subject_type = 'user'
                     WHERE g.subject_id = u.id AND NOT f.is_trashed)`;
    const users = await db.pool.query(
      `SELECT u.id, u.storage_used_bytes, ${owned} AS files FROM auth.users u
        WHERE u.storage_used_bytes <> ${owned}`,
    );
    expect(users.rows).toEqual([]);

    // The audit: exactly one row per item, all by this run, approved by the admin who applied.
    const audit = await db.pool.query<{ position: number; n: number; runs: string[]; by: string[] }>(
      `SELECT position, count(*)::int AS n, array_agg(DISTINCT run_id::text) AS runs,
              array_agg(DISTINCT approved_by) AS by
         FROM jobs.repair_audit WHERE plan_id = $1 GROUP BY position ORDER BY position`,
      [plan.id],
    );
    expect(audit.rows).toHaveLength(ITEMS);
    expect(audit.rows.filter((r) => r.n !== 1)).toEqual([]);
    expect(audit.rows.map((r) => r.position)).toEqual(plan.lines.map((_, i) => i));
    expect(new Set(audit.rows.flatMap((r) => r.runs))).toEqual(new Set([runId]));

    // The plan: applied by this run, every line applied and re-verified; every finding fixed by the run.
    const after = await call('GET', `/api/admin/repairs/${plan.id}`);
    const final = after.body as PlanJson;
    expect(final).toMatchObject({ state: 'applied', run_id: runId });
    expect(new Set(audit.rows.flatMap((r) => r.by))).toEqual(new Set([final.approved_by]));
    expect(final.lines.filter((l) => l.status !== 'applied' || l.verified !== 'passed')).toEqual([]);
    const findings = await db.pool.query<{ state: string; fixed_run_id: string | null; n: number }>(
      `SELECT state, fixed_run_id::text, count(*)::int AS n FROM jobs.findings
        WHERE check_name = 'drives_consistency' GROUP BY 1, 2`,
    );
    expect(findings.rows).toEqual([{ state: 'fixed', fixed_run_id: runId, n: ITEMS }]);
    // One `fixed` event per finding, though the re-verification was interrupted and resumed.
    const events = await db.pool.query<{ finding_id: string; n: number }>(
      `SELECT finding_id, count(*)::int AS n FROM jobs.finding_events
        WHERE event = 'fixed' AND run_id = $1 GROUP BY finding_id`,
      [runId],
    );
    expect(events.rows).toHaveLength(ITEMS);
    expect(events.rows.filter((r) => r.n !== 1)).toEqual([]);

    // And the check itself, run again, finds nothing.
    const recheck = await api.trigger('drives_consistency');
    const rechecked = await api.waitFor('drives_consistency', recheck.run_id, ['Completed'], 60_000);
    expect(rechecked.stats['findings'] ?? 0).toBe(0);
    console.info(
      `kill -9 repair test: ${killedMidRun} kills mid-run (the last after ${verifiedAtKill} of ${ITEMS} items were re-verified)`,
    );
  }, 300_000);
});
