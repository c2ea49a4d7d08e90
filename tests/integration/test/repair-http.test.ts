/**
 * `/api/admin/repairs` through the hono app on real Postgres: plan by a
 * filter, read it, choose, apply with the hash (a stale hash is refused),
 * follow the run to the end; bad input gets a 400 that says what is allowed.
 */
import { randomUUID } from 'node:crypto';
import { type AdminUserRecord, createAdminApp, signAdminToken } from '@oxicloud/admin-api';
import { PgRepairPlans, severityRank } from '@oxicloud/consistency';
import { RecoverableEngine } from '@oxicloud/recoverable';
import { JobRegistry, type Logger } from '@oxicloud/scheduler';
import { OxiRepairStore } from '@oxicloud/storage/oxicloud';
import {
  createRepairActions,
  createRepairJob,
  createRepairPlanner,
  createRepairService,
  REPAIR_JOB_NAME,
  TRASH_CHILD,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  insertOxiDrive as insertDrive,
  insertOxiFolder as insertFolder,
  insertOxiUser as insertUser,
  oxiKysely,
} from './oxicloud-domain-fixtures.js';

const SECRET = 'a-test-secret-that-is-long-enough-for-hs256!!';

describe('/api/admin/repairs', () => {
  let db: TestDatabase;
  let app: ReturnType<typeof createAdminApp>;
  let engine: RecoverableEngine;
  let token: string;
  let drive: string;
  let live: string;
  const audit: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    const { rows } = await db.pool.query(
      `INSERT INTO auth.users (username, email, role) VALUES ('root', 'root@example.test', 'admin') RETURNING id::text, username, role`,
    );
    token = await signAdminToken({
      secret: SECRET,
      user: rows[0] as AdminUserRecord,
      expiresInSeconds: 3600,
    });
    const push = (fields: object) => audit.push(fields as Record<string, unknown>);
    const logger: Logger = { info: push, warn: push, error: push, debug: () => undefined };
    const plans = new PgRepairPlans({ pool: db.pool });
    const store = new OxiRepairStore(oxiKysely(db.pool));
    const actions = createRepairActions({ store });
    engine = new RecoverableEngine({ pool: db.pool });
    engine.register(createRepairJob({ plans, actions, store }));
    const planner = createRepairPlanner({ actions, plans });
    app = createAdminApp({
      jobs: new JobRegistry({ logger }),
      users: {
        findById: async (id) =>
          ((await db.pool.query('SELECT id::text, username, role FROM auth.users WHERE id::text = $1', [id]))
            .rows[0] as AdminUserRecord | undefined) ?? null,
      },
      repairs: createRepairService({ planner, plans, engine }),
      jwtSecret: SECRET,
      logger,
    });
    const owner = await insertUser(db.pool, 'owner');
    drive = await insertDrive(db.pool, owner, 'main', 777);
    const bin = await insertFolder(db.pool, drive, null, 'bin', new Date());
    live = await insertFolder(db.pool, drive, bin, 'live');
    const finding = async (check: string, kind: string, resource: string, severity: 'Drift' | 'DataLoss') =>
      db.pool.query(
        `INSERT INTO jobs.findings (id, check_name, kind, resource_id, severity, severity_rank, highest_severity,
                                   first_seen_at, last_seen_at, last_seen_boundary)
         VALUES ($1, $2, $3, $4, $5, $6, $5, now(), now(), now())`,
        [randomUUID(), check, kind, resource, severity, severityRank(severity)],
      );
    await finding('drives_consistency', 'drive_used_bytes_drift', drive, 'Drift');
    await finding('folders_consistency', 'parent_trashed_mismatch', live, 'DataLoss');
  });
  afterAll(async () => {
    await engine.shutdown();
    await db.drop();
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    // biome-ignore lint/suspicious/noExplicitAny: the test reads nested JSON freely
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  it('plans, reads, chooses, refuses a stale hash, applies, and the run repairs', async () => {
    const planned = await call('POST', '/api/admin/repairs/plan', {
      filter: { check: 'folders_consistency' },
    });
    expect(planned.status).toBe(201);
    expect(planned.body['lines']).toHaveLength(1);
    expect(planned.body['unchosen']).toBe(1);
    const id = planned.body['id'] as string;
    const read = await call('GET', `/api/admin/repairs/${id}`);
    expect(read.body).toEqual(planned.body);

    const chosen = await call('POST', `/api/admin/repairs/${id}/choices`, {
      choices: { [planned.body['lines'][0].findingId]: TRASH_CHILD },
    });
    expect(chosen.status).toBe(200);
    expect(chosen.body['hash']).not.toBe(planned.body['hash']);

    const stale = await call('POST', `/api/admin/repairs/${id}/apply`, { hash: planned.body['hash'] });
    expect(stale.status).toBe(409);
    expect(stale.body['error'].code).toBe('REPAIR_PLAN_CONFLICT');

    const applied = await call('POST', `/api/admin/repairs/${id}/apply`, { hash: chosen.body['hash'] });
    expect(applied.status).toBe(202);
    await engine.whenIdle();
    const run = await engine.latestRun(REPAIR_JOB_NAME);
    expect(run?.run_id).toBe(applied.body['run_id']);
    expect(run?.status).toBe('Completed');
    const after = await call('GET', `/api/admin/repairs/${id}`);
    expect(after.body['state']).toBe('applied');
    expect(after.body['lines'][0]).toMatchObject({
      status: 'applied',
      skip_reason: null,
      choice: TRASH_CHILD,
    });
    const trashed = await db.pool.query('SELECT is_trashed FROM storage.folders WHERE id = $1', [live]);
    expect(trashed.rows[0].is_trashed).toBe(true);
    expect(audit.some((l) => l['event'] === 'admin.request' && l['repair'] === 'apply')).toBe(true);

    const again = await call('POST', `/api/admin/repairs/${id}/apply`, { hash: chosen.body['hash'] });
    expect(again.status).toBe(409);
  });

  it('answers bad input with a 400 that says what is allowed, an unknown plan with a 404', async () => {
    const both = await call('POST', '/api/admin/repairs/plan', {
      finding_ids: [randomUUID()],
      filter: { kind: 'x' },
    });
    expect(both.status).toBe(400);
    expect(JSON.stringify(both.body)).toMatch(/exactly one of finding_ids or filter/);
    const badId = await call('POST', '/api/admin/repairs/plan', { finding_ids: ['nope'] });
    expect(badId.status).toBe(400);
    const emptyFilter = await call('POST', '/api/admin/repairs/plan', { filter: {} });
    expect(emptyFilter.status).toBe(400);
    expect(emptyFilter.body['error'].message).toMatch(/at least one of check, kind, severity/);
    const malformed = await call('POST', '/api/admin/repairs/plan', '{');
    expect(malformed.status).toBe(400);
    const missing = await call('GET', `/api/admin/repairs/${randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(missing.body['error'].code).toBe('REPAIR_PLAN_NOT_FOUND');
    const notUuid = await call('GET', '/api/admin/repairs/xyz');
    expect(notUuid.status).toBe(400);
    const badHash = await call('POST', `/api/admin/repairs/${randomUUID()}/apply`, { hash: 'abc' });
    expect(badHash.status).toBe(400);
    const unknown = await call('POST', `/api/admin/repairs/${randomUUID()}/apply`, { hash: 'a'.repeat(64) });
    expect(unknown.status).toBe(404);
    const unknownChoice = await call('POST', `/api/admin/repairs/${randomUUID()}/choices`, {
      choices: { [randomUUID()]: TRASH_CHILD },
    });
    expect(unknownChoice.status).toBe(404);
    expect(unknownChoice.body['error'].code).toBe('REPAIR_PLAN_NOT_FOUND');
    void drive;
  });
});
