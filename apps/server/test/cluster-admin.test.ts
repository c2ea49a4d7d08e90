import { createAdminApp, signAdminToken } from '@oxicloud/admin-api';
import { NodeMembership, PgOwnedRuns, PgPeriodicHistory, PgTickCoordinator } from '@oxicloud/cluster';
import { JobRegistry, ok, silentLogger } from '@oxicloud/scheduler';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterView } from '../src/cluster/cluster-view.js';

const SECRET = 'cluster-admin-test-secret-at-least-32-bytes';

/** One node: its membership row, a registry ticking through the shared coordinator, and its admin app. */
async function startNode(db: TestDatabase, gate: Promise<void>) {
  const membership = new NodeMembership({
    pool: db.pool,
    version: '0.1.0',
    heartbeatMs: 1_000,
    logger: silentLogger,
  });
  await membership.start();
  const registry = new JobRegistry({
    logger: silentLogger,
    coordinator: new PgTickCoordinator({ pool: db.pool, node: membership }),
  });
  registry.register(
    {
      name: 'slow_job',
      run: async () => {
        await gate;
        return ok(3, { done: true });
      },
    },
    3_600_000,
    null,
  );
  registry.start();
  const app = createAdminApp({
    jobs: registry,
    users: {
      async findById(id) {
        const { rows } = await db.pool.query(
          'SELECT id::text, username, role FROM auth.users WHERE id::text = $1',
          [id],
        );
        return rows[0] ?? null;
      },
    },
    jwtSecret: SECRET,
    logger: silentLogger,
    cluster: clusterView({
      membership,
      history: new PgPeriodicHistory({ pool: db.pool }),
      ownedRuns: new PgOwnedRuns({ pool: db.pool }),
    }),
  });
  return { membership, registry, app };
}

describe('the cluster in the admin API (two nodes on one real Postgres)', () => {
  let db: TestDatabase;
  let token: string;
  let release: () => void = () => undefined;
  let a: Awaited<ReturnType<typeof startNode>>;
  let b: Awaited<ReturnType<typeof startNode>>;
  const get = (
    node: { app: { request: (p: string, i?: RequestInit) => Response | Promise<Response> } },
    path: string,
  ) => node.app.request(path, { headers: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    db = await createTestDatabase();
    const { rows } = await db.pool.query(
      "INSERT INTO auth.users (username, email, role) VALUES ('ops', 'ops@example.org', 'admin') RETURNING id::text, username, role",
    );
    token = await signAdminToken({ secret: SECRET, user: rows[0], expiresInSeconds: 600 });
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    a = await startNode(db, gate);
    b = await startNode(db, gate);
  });
  afterAll(async () => {
    release();
    for (const node of [a, b]) {
      await node.registry.stop();
      await node.membership.stop();
    }
    await db.drop();
  });

  it('GET /api/admin/nodes needs an admin token', async () => {
    expect((await a.app.request('/api/admin/nodes')).status).toBe(401);
  });

  it('a trigger on B while A runs the job answers already_running naming A; the nodes list shows A running it', async () => {
    const running = a.app.request('/api/admin/jobs/slow_job/trigger', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = await b.app.request('/api/admin/jobs/slow_job/trigger', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(refused.status).toBe(200);
    expect(await refused.json()).toMatchObject({
      ok: true,
      outcome: { kind: 'ok', count: 0, extra: { skipped: 'already_running', node: a.membership.nodeId } },
    });

    const nodes = (await (await get(b, '/api/admin/nodes')).json()) as Array<Record<string, unknown>>;
    expect(nodes.map((n) => n['id'])).toEqual([a.membership.nodeId, b.membership.nodeId]);
    expect(nodes[0]).toMatchObject({ self: false, periodic_jobs: ['slow_job'], runs: [], pid: process.pid });
    expect(nodes[1]).toMatchObject({ self: true, periodic_jobs: [] });
    expect(typeof nodes[0]!['last_heartbeat_at']).toBe('string');
    // B's listing says the job runs (on A), though B runs nothing.
    const listing = (await (await get(b, '/api/admin/jobs')).json()) as Array<Record<string, unknown>>;
    expect(listing[0]).toMatchObject({ name: 'slow_job', running: true });

    release();
    expect(await (await running).json()).toMatchObject({ ok: true, outcome: { kind: 'ok', count: 3 } });
  });

  it("B's listing shows A's last outcome (the shared history) and the slot counters; the history route lists it", async () => {
    const listing = (await (await get(b, '/api/admin/jobs')).json()) as Array<Record<string, unknown>>;
    expect(listing[0]).toMatchObject({
      name: 'slow_job',
      running: false,
      last_outcome: {
        outcome: { kind: 'ok', count: 3, extra: { done: true } },
        source: 'trigger',
        node: a.membership.nodeId,
      },
      missed_slots: 0,
      last_slot_at: null,
    });
    const runs = (await (await get(b, '/api/admin/jobs/slow_job/periodic-runs?limit=5')).json()) as Array<
      Record<string, unknown>
    >;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      job: 'slow_job',
      source: 'trigger',
      slot: null,
      node: a.membership.nodeId,
      cause: null,
    });
  });

  it('the history route refuses a bad limit (400) and an unknown job (404)', async () => {
    const bad = await get(a, '/api/admin/jobs/slow_job/periodic-runs?limit=0');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('from 1 to 500');
    const unknown = await get(a, '/api/admin/jobs/nope/periodic-runs');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('JOB_NOT_FOUND');
  });

  it('a graceful stop deregisters the node', async () => {
    await b.registry.stop();
    await b.membership.stop();
    const nodes = (await (await get(a, '/api/admin/nodes')).json()) as Array<Record<string, unknown>>;
    expect(nodes.map((n) => n['id'])).toEqual([a.membership.nodeId]);
    // Stopped twice in afterAll: a second stop is harmless.
  });
});
