import { randomUUID } from 'node:crypto';
import { serve } from '@hono/node-server';
import { type AdminUserRecord, createAdminApp, signAdminToken } from '@oxicloud/admin-api';
import { PgRepairPlans, severityRank } from '@oxicloud/consistency';
import { RecoverableEngine } from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import { type OxiCloudDatabase, OxiRepairStore } from '@oxicloud/storage/oxicloud';
import {
  createRepairActions,
  createRepairJob,
  createRepairPlanner,
  createRepairService,
} from '@oxicloud/tenants';
import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from './admin-client.js';
import { type CliIo, sleep } from './cli-io.js';
import type { JobsCommandContext } from './commands.js';
import { JobsClientError } from './jobs-client-error.js';
import { parseChoices, repairApplyCommand, repairPlanCommand, repairShowCommand } from './repair-commands.js';

const SECRET = 'repair-cli-test-secret-at-least-32-bytes!!';
const silent: Logger = { info() {}, warn() {}, error() {}, debug() {} };

function captureIo(): CliIo & { out: () => string } {
  let out = '';
  return {
    stdout: {
      write: (t: string) => {
        out += t;
      },
    },
    stderr: { write: () => undefined },
    now: () => Date.now(),
    sleep,
    out: () => out,
  };
}

/**
 * A shared drive of OxiCloud's domain (the four writes in one transaction,
 * owned by `ownerId` through its grant) whose `used_bytes` drifted to
 * `usedBytes` (it holds no file).
 */
async function sharedDrive(pool: pg.Pool, ownerId: string, name: string, usedBytes: number): Promise<string> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query(
      `INSERT INTO storage.drives (kind, used_bytes) VALUES ('shared', $1) RETURNING id`,
      [usedBytes],
    );
    const id = rows[0].id as string;
    const root = await client.query(
      'INSERT INTO storage.folders (name, parent_id, drive_id) VALUES ($1, NULL, $2) RETURNING id',
      [name, id],
    );
    await client.query('UPDATE storage.drives SET root_folder_id = $1 WHERE id = $2', [root.rows[0].id, id]);
    await client.query(
      `INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by)
       VALUES ('user', $1, 'drive', $2, 'owner', $1)`,
      [ownerId, id],
    );
    await client.query('COMMIT');
    return id;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

/** `oxijobs repair plan|show|apply` against the real admin app on a real port and real Postgres (OxiCloud's domain). */
describe('oxijobs repair plan|show|apply', () => {
  let db: TestDatabase;
  let server: ReturnType<typeof serve>;
  let client: AdminClient;
  let engine: RecoverableEngine;
  let drive: string;

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    const { rows } = await db.pool.query(
      `INSERT INTO auth.users (username, email, role) VALUES ('admin3', 'admin3@example.test', 'admin')
       RETURNING id::text, username, role`,
    );
    const admin = rows[0] as AdminUserRecord;
    const plans = new PgRepairPlans({ pool: db.pool });
    const store = new OxiRepairStore(
      new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) }),
    );
    const actions = createRepairActions({ store });
    engine = new RecoverableEngine({ pool: db.pool });
    engine.register(createRepairJob({ plans, actions, store }));
    const app = createAdminApp({
      jobs: { list: () => [], trigger: async () => undefined },
      health: { database: async () => ({ ok: true, latencyMs: 1 }) },
      users: { findById: async (id) => (id === admin.id ? admin : null) },
      repairs: createRepairService({ planner: createRepairPlanner({ actions, plans }), plans, engine }),
      jwtSecret: SECRET,
      logger: silent,
    });
    const port = await freePort();
    server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const token = await signAdminToken({ secret: SECRET, user: admin, expiresInSeconds: 600 });
    client = new AdminClient({ baseUrl: `http://127.0.0.1:${port}`, token });
    drive = await sharedDrive(db.pool, admin.id, 'main', 10485760);
    await db.pool.query(
      `INSERT INTO jobs.findings (id, check_name, kind, resource_id, severity, severity_rank, highest_severity,
                                 first_seen_at, last_seen_at, last_seen_boundary)
       VALUES ($1, 'drives_consistency', 'drive_used_bytes_drift', $2, 'Drift', $3, 'Drift', now(), now(), now())`,
      [randomUUID(), drive, severityRank('Drift')],
    );
  });
  afterAll(async () => {
    await engine.shutdown();
    await new Promise((resolve) => server.close(resolve));
    await db.drop();
  });

  const ctx = (io: CliIo, json = false): JobsCommandContext => ({ client, io, json });

  it('plan prints a table with the before → after and the apply command; apply starts the run that repairs', async () => {
    const io = captureIo();
    expect(
      await repairPlanCommand(ctx(io), {
        findingIds: [],
        filter: { check: 'drives_consistency' },
        choices: {},
      }),
    ).toBe(0);
    const text = io.out();
    expect(text).toMatch(/drive_used_bytes_drift/);
    expect(text).toMatch(/used_bytes 10,485,760 → 0/);
    const [, id, hash] = /apply: oxijobs repair apply (\S+) --hash ([0-9a-f]{64})/.exec(text) ?? [];
    expect(id).toBeDefined();

    const json = captureIo();
    await repairShowCommand(ctx(json, true), id as string);
    expect(JSON.parse(json.out())).toMatchObject({ id, hash, state: 'planned' });

    const applied = captureIo();
    expect(await repairApplyCommand(ctx(applied), id as string, hash as string)).toBe(0);
    const [, runId] =
      /started run (\S+) \(follow: oxijobs jobs run repair (\S+) --follow\)/.exec(applied.out()) ?? [];
    expect(runId).toBeDefined();
    expect(applied.out()).toContain(`oxijobs jobs run repair ${runId} --follow`);
    await engine.whenIdle();
    const shown = captureIo();
    await repairShowCommand(ctx(shown), id as string);
    expect(shown.out()).toMatch(/#\s+FINDING\s+KIND\s+STATUS\s+VERIFIED\s+WHAT\s+NOTE/);
    expect(shown.out()).toMatch(/drive_used_bytes_drift\s+applied\s+yes\s+drive/);
    expect(shown.out()).toContain(`run ${runId} (follow: oxijobs jobs run repair ${runId} --follow)`);
    const usage = await db.pool.query('SELECT used_bytes FROM storage.drives WHERE id = $1', [drive]);
    expect(Number(usage.rows[0].used_bytes)).toBe(0);
  });

  it('a line whose resource was put right since the plan is "already consistent": nothing written, the finding fixed', async () => {
    const admin = (await db.pool.query("SELECT id FROM auth.users WHERE username = 'admin3'")).rows[0].id;
    const other = await sharedDrive(db.pool, admin, 'second', 4096);
    const findingId = randomUUID();
    await db.pool.query(
      `INSERT INTO jobs.findings (id, check_name, kind, resource_id, severity, severity_rank, highest_severity,
                                 first_seen_at, last_seen_at, last_seen_boundary)
       VALUES ($1, 'drives_consistency', 'drive_used_bytes_drift', $2, 'Drift', $3, 'Drift', now(), now(), now())`,
      [findingId, other, severityRank('Drift')],
    );
    const planned = captureIo();
    await repairPlanCommand(ctx(planned, true), { findingIds: [findingId], filter: {}, choices: {} });
    const plan = JSON.parse(planned.out());
    // What storage_reconcile does between the plan and its apply: the drive's usage is right again.
    await db.pool.query('UPDATE storage.drives SET used_bytes = 0 WHERE id = $1', [other]);
    const audits = async () =>
      (await db.pool.query('SELECT count(*)::int AS n FROM jobs.repair_audit WHERE plan_id = $1', [plan.id]))
        .rows[0].n;
    expect(await repairApplyCommand(ctx(captureIo()), plan.id, plan.hash)).toBe(0);
    await engine.whenIdle();

    const shown = captureIo();
    await repairShowCommand(ctx(shown), plan.id);
    expect(shown.out()).toMatch(/drive_used_bytes_drift\s+already consistent\s+yes\s+drive/);
    expect(shown.out()).not.toMatch(/\sapplied\s+yes/);
    const json = captureIo();
    await repairShowCommand(ctx(json, true), plan.id);
    expect(JSON.parse(json.out()).lines[0]).toMatchObject({
      status: 'already_consistent',
      verified: 'passed',
    });
    expect(await audits()).toBe(0);
    const finding = await db.pool.query('SELECT state FROM jobs.findings WHERE id = $1', [findingId]);
    expect(finding.rows[0].state).toBe('fixed');
    const run = await db.pool.query(
      `SELECT stats FROM jobs.recoverable_runs WHERE id = (SELECT run_id FROM jobs.repair_plans WHERE id = $1)`,
      [plan.id],
    );
    expect(run.rows[0].stats).toMatchObject({ applied_items: 0, already_consistent_items: 1 });
  });

  it('a stale hash is refused with the API message; a malformed choice is a usage error', async () => {
    const io = captureIo();
    await repairPlanCommand(ctx(io, true), {
      findingIds: [],
      filter: { kind: 'drive_used_bytes_drift' },
      choices: {},
    });
    const plan = JSON.parse(io.out());
    const error = await repairApplyCommand(ctx(captureIo()), plan.id, '0'.repeat(64)).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(JobsClientError);
    expect((error as Error).message).toMatch(/hash/);
    expect(() => parseChoices(['nochoice'])).toThrow(/<finding id>=<choice>/);
  });
});
