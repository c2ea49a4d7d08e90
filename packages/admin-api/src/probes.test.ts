import { silentLogger } from '@oxicloud/scheduler';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApp, type ReadinessReport, signAdminToken } from './index.js';

const SECRET = 'probes-test-secret-at-least-32-bytes-long';

const ready: ReadinessReport = {
  database: { ok: true },
  schema: { ok: true, expected: '0010_x.sql', current: '0010_x.sql' },
  migrations: { ok: true, pending: [] },
};

describe('/livez, /readyz and the listing overdue field', () => {
  let db: TestDatabase;
  let token: string;
  let report: ReadinessReport = ready;
  const app = () =>
    createAdminApp({
      jobs: {
        list: () => [
          {
            name: 'trash_cleanup',
            interval_ms: 1000,
            timeout_ms: null,
            next_run_at: null,
            running: false,
            last_outcome: null,
          },
          {
            name: 'grant_cleanup',
            interval_ms: 1000,
            timeout_ms: null,
            next_run_at: null,
            running: false,
            last_outcome: null,
          },
        ],
        trigger: async () => undefined,
      },
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
      readiness: { check: async () => report },
      freshness: {
        overdue: async () => [
          {
            job: 'trash_cleanup',
            deep: false,
            max_age_ms: 1000,
            last_success_at: null,
            overdue_since: '2026-01-01T00:00:01.500Z',
          },
        ],
      },
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    const { rows } = await db.pool.query(
      "INSERT INTO auth.users (username, email, role) VALUES ('alice', 'alice@example.org', 'admin') RETURNING id::text, username, role",
    );
    token = await signAdminToken({ secret: SECRET, user: rows[0], expiresInSeconds: 600 });
  });
  afterAll(async () => {
    await db.drop();
  });

  it('/livez answers without a token', async () => {
    const res = await app().request('/livez');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('/readyz is 200 when every part is ok and 503 naming the parts that failed', async () => {
    report = ready;
    const ok = await app().request('/readyz');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: 'ready', failing: [] });
    report = {
      database: { ok: true },
      schema: { ok: false, expected: '0010_x.sql', current: '0009_y.sql' },
      migrations: { ok: false, pending: ['0010_x.sql'] },
    };
    const pending = await app().request('/readyz');
    expect(pending.status).toBe(503);
    expect(await pending.json()).toMatchObject({
      status: 'not_ready',
      failing: ['schema', 'migrations'],
      migrations: { pending: ['0010_x.sql'] },
    });
  });

  it('the listing carries overdue for the overdue job and null for the others', async () => {
    const res = await app().request('/api/admin/jobs', { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const jobs = (await res.json()) as Array<{ name: string; overdue: unknown }>;
    expect(jobs.find((j) => j.name === 'trash_cleanup')?.overdue).toEqual({
      deep: false,
      max_age_ms: 1000,
      last_success_at: null,
      overdue_since: '2026-01-01T00:00:01.500Z',
    });
    expect(jobs.find((j) => j.name === 'grant_cleanup')?.overdue).toBeNull();
  });
});
