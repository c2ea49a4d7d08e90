import type { JobOutcome, JobRunArgs, Logger } from '@oxicloud/scheduler';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type AdminUserLookup,
  type AdminUserRecord,
  createAdminApp,
  type JobSummary,
  type PeriodicJobs,
  signAdminToken,
} from './index.js';

const SECRET = 'test-secret-that-is-at-least-32-bytes-long!';

interface LogLine {
  level: string;
  fields: Record<string, unknown>;
  message: string | undefined;
}

function capturingLogger(lines: LogLine[]): Logger {
  const at =
    (level: string) =>
    (fields: object, message?: string): void => {
      lines.push({ level, fields: fields as Record<string, unknown>, message });
    };
  return { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
}

/** A fake PeriodicJobs port: two jobs, records each trigger and how many audit lines existed at that moment. */
function fakeCatalog(lines: LogLine[]) {
  const calls: Array<{ name: string; args: JobRunArgs; auditLinesBefore: number }> = [];
  const jobs: JobSummary[] = [
    {
      name: 'trash_cleanup',
      interval_ms: 3_600_000,
      timeout_ms: null,
      next_run_at: '2030-01-01T00:00:00.000Z',
      running: false,
      running_since: null,
      last_outcome: null,
      // Declares a deep mode, so `deep=true` reaches it (a job without one refuses it).
      capabilities: { check: null, deep: true, alerts: [] },
    },
    {
      name: 'failing_job',
      interval_ms: null,
      timeout_ms: 1000,
      next_run_at: null,
      running: false,
      last_outcome: {
        at: '2029-01-01T00:00:00.000Z',
        outcome: { kind: 'err', message: 'boom' },
        cause: 'handler',
        elapsed_ms: 3,
        source: 'trigger',
      },
    },
    {
      name: 'throwing_job',
      interval_ms: null,
      timeout_ms: null,
      next_run_at: null,
      running: false,
      last_outcome: null,
    },
  ];
  const periodic: PeriodicJobs = {
    list: () => jobs,
    async trigger(name, args): Promise<JobOutcome | undefined> {
      calls.push({
        name,
        args,
        auditLinesBefore: lines.filter((l) => l.fields['target'] === 'audit').length,
      });
      if (name === 'trash_cleanup') return { kind: 'ok', count: 7, extra: { forced: args.force } };
      if (name === 'failing_job') return { kind: 'err', message: 'boom' };
      if (name === 'throwing_job') throw new Error('secret internal detail');
      return undefined;
    },
  };
  return { periodic, calls };
}

/** The AdminUserLookup port on the real auth.users table. */
function pgLookup(db: TestDatabase): AdminUserLookup {
  return {
    async findById(id) {
      const { rows } = await db.pool.query(
        'SELECT id::text, username, role FROM auth.users WHERE id::text = $1',
        [id],
      );
      return (rows[0] as AdminUserRecord | undefined) ?? null;
    },
  };
}

async function insertUser(
  db: TestDatabase,
  username: string,
  role: 'admin' | 'user',
): Promise<AdminUserRecord> {
  const { rows } = await db.pool.query(
    "INSERT INTO auth.users (username, email, role) VALUES ($1, $1::text || '@example.org', $2) RETURNING id::text, username, role",
    [username, role],
  );
  return rows[0] as AdminUserRecord;
}

describe('createAdminApp', () => {
  let db: TestDatabase;
  let admin: AdminUserRecord;
  let plain: AdminUserRecord;
  let adminToken: string;
  let lines: LogLine[];
  let fake: ReturnType<typeof fakeCatalog>;
  let app: ReturnType<typeof createAdminApp>;

  const auditLines = () => lines.filter((l) => l.fields['target'] === 'audit').map((l) => l.fields);
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const nodeEnv = { incoming: { socket: { remoteAddress: '10.1.2.3' } } };

  beforeAll(async () => {
    db = await createTestDatabase();
    admin = await insertUser(db, 'alice', 'admin');
    plain = await insertUser(db, 'bob', 'user');
    adminToken = await signAdminToken({ secret: SECRET, user: admin, expiresInSeconds: 3600 });
  });
  afterAll(async () => {
    await db.drop();
  });
  beforeEach(() => {
    lines = [];
    fake = fakeCatalog(lines);
    app = createAdminApp({
      jobs: fake.periodic,
      users: pgLookup(db),
      jwtSecret: SECRET,
      logger: capturingLogger(lines),
      health: {
        async database() {
          const started = performance.now();
          await db.pool.query('SELECT 1');
          return { ok: true, latencyMs: performance.now() - started };
        },
      },
    });
  });

  it('refuses a secret shorter than 32 bytes at creation', () => {
    expect(() =>
      createAdminApp({
        jobs: fake.periodic,
        users: pgLookup(db),
        jwtSecret: 'short',
        logger: capturingLogger([]),
      }),
    ).toThrow(/at least 32 bytes/);
  });

  it('serves /healthz without a token', async () => {
    const res = await app.request('/healthz');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; database: { ok: boolean; latency_ms: number } };
    expect(body.status).toBe('ok');
    expect(body.database.ok).toBe(true);
    expect(body.database.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('answers 503 degraded when the probe reports the database down', async () => {
    const down = createAdminApp({
      jobs: fake.periodic,
      users: pgLookup(db),
      jwtSecret: SECRET,
      logger: capturingLogger([]),
      health: { database: async () => ({ ok: false, error: 'connection refused' }) },
    });
    const res = await down.request('/healthz');
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      service: 'oxijobs',
      status: 'degraded',
      database: { ok: false, error: 'connection refused' },
    });
  });

  it("GET /api/admin/alerts answers the server's alert state to an admin, and 401 without a token", async () => {
    const state = {
      enabled: true,
      smtp: { host: 'mail.example.org', port: 2525, secure: 'none' as const },
      missing: null,
      admin_recipients: 2,
    };
    const withAlerts = createAdminApp({
      jobs: fake.periodic,
      users: pgLookup(db),
      jwtSecret: SECRET,
      logger: capturingLogger([]),
      alerts: { state: async () => state },
    });
    const res = await withAlerts.request('/api/admin/alerts', { headers: bearer(adminToken) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(state);
    expect((await withAlerts.request('/api/admin/alerts')).status).toBe(401);
    // Without the port the route is absent.
    expect((await app.request('/api/admin/alerts', { headers: bearer(adminToken) })).status).toBe(404);
  });

  it('unavailableJobs: a job the server does not register answers 404 with why; repair plans too when repair is one', async () => {
    const reason = "no adapter on OxiCloud's storage domain yet";
    const without = createAdminApp({
      jobs: fake.periodic,
      users: pgLookup(db),
      jwtSecret: SECRET,
      logger: capturingLogger([]),
      unavailableJobs: [
        { job: 'dedup_gc', reason },
        { job: 'repair', reason },
      ],
    });
    const res = await without.request('/api/admin/jobs/dedup_gc/trigger', {
      method: 'POST',
      headers: bearer(adminToken),
    });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('JOB_NOT_FOUND');
    expect(body.error.message).toBe(
      `dedup_gc is not registered on this server: ${reason}; known jobs: trash_cleanup, failing_job, throwing_job`,
    );
    const plans = await without.request('/api/admin/repairs', { headers: bearer(adminToken) });
    expect(plans.status).toBe(404);
    expect(((await plans.json()) as { error: { message: string } }).error.message).toBe(
      `repair plans are not available on this server: ${reason}`,
    );
    expect((await without.request('/api/admin/repairs')).status).toBe(401);
    expect(fake.calls).toEqual([]);
  });

  it('lists the jobs for an admin', async () => {
    const res = await app.request('/api/admin/jobs', { headers: bearer(adminToken) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Array<Record<string, unknown>>;
    expect(body.map((j) => j['name'])).toEqual(['trash_cleanup', 'failing_job', 'throwing_job']);
    expect(body[0]).toMatchObject({ interval_ms: 3_600_000, next_run_at: '2030-01-01T00:00:00.000Z' });
    expect(body[1]).toMatchObject({
      running_since: null,
      last_outcome: { outcome: { kind: 'err', message: 'boom' }, cause: 'handler' },
    });
  });

  describe('auth', () => {
    async function expectStatus(
      headers: Record<string, string>,
      status: number,
      code: string,
      pattern?: RegExp,
    ) {
      const res = await app.request('/api/admin/jobs', { headers });
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe(code);
      if (pattern) expect(body.error.message).toMatch(pattern);
    }

    it('401 without a token', async () => {
      await expectStatus({}, 401, 'UNAUTHENTICATED', /missing bearer token/);
    });
    it('401 for a header that is not Bearer', async () => {
      await expectStatus({ authorization: `Basic ${adminToken}` }, 401, 'UNAUTHENTICATED');
    });
    it('401 for a tampered token (payload changed, signature kept)', async () => {
      const [header, payload, signature] = adminToken.split('.');
      const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
      const forged = Buffer.from(JSON.stringify({ ...claims, sub: plain.id })).toString('base64url');
      await expectStatus(bearer(`${header}.${forged}.${signature}`), 401, 'UNAUTHENTICATED', /signature/);
    });
    it('401 for a token signed with another secret', async () => {
      const other = await signAdminToken({
        secret: 'another-secret-that-is-at-least-32-bytes',
        user: admin,
        expiresInSeconds: 60,
      });
      await expectStatus(bearer(other), 401, 'UNAUTHENTICATED');
    });
    it("401 for an OxiCloud session token (OxiCloud's claim layout, no iss or aud), even signed with this secret", async () => {
      const now = Math.floor(Date.now() / 1000);
      const session = await new SignJWT({
        jti: '0190a4b2-2222-7000-8000-000000000002',
        username: admin.username,
        email: 'alice@example.org',
        role: 'admin',
      })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(admin.id)
        .setIssuedAt(now)
        .setExpirationTime(now + 3600)
        .sign(new TextEncoder().encode(SECRET));
      await expectStatus(
        bearer(session),
        401,
        'UNAUTHENTICATED',
        /not issued for this engine's admin API .*an OxiCloud session token is not one/,
      );
    });
    it('401 for an expired token', async () => {
      const expired = await signAdminToken({
        secret: SECRET,
        user: admin,
        expiresInSeconds: 60,
        now: new Date(Date.now() - 3_600_000),
      });
      await expectStatus(bearer(expired), 401, 'UNAUTHENTICATED', /expired/);
    });
    it('403 for a valid token of a non-admin', async () => {
      const token = await signAdminToken({ secret: SECRET, user: plain, expiresInSeconds: 60 });
      await expectStatus(bearer(token), 403, 'FORBIDDEN', /"bob" has role "user"/);
    });
    it('403 for a token that claims admin for a user whose row says user', async () => {
      const token = await signAdminToken({
        secret: SECRET,
        user: { ...plain, role: 'admin' },
        expiresInSeconds: 60,
      });
      await expectStatus(bearer(token), 403, 'FORBIDDEN');
    });
    it('403 once the user is demoted or deleted', async () => {
      const carol = await insertUser(db, 'carol', 'admin');
      const token = await signAdminToken({ secret: SECRET, user: carol, expiresInSeconds: 60 });
      expect((await app.request('/api/admin/jobs', { headers: bearer(token) })).status).toBe(200);
      await db.pool.query("UPDATE auth.users SET role = 'user' WHERE id = $1", [carol.id]);
      await expectStatus(bearer(token), 403, 'FORBIDDEN');
      await db.pool.query('DELETE FROM auth.users WHERE id = $1', [carol.id]);
      await expectStatus(bearer(token), 403, 'FORBIDDEN', /no longer exists/);
    });
  });

  describe('trigger', () => {
    const post = (path: string, headers: Record<string, string> = {}, body?: string) =>
      app.request(
        path,
        { method: 'POST', headers: { 'user-agent': 'vitest-agent', ...headers }, body },
        nodeEnv,
      );

    it('runs the job and answers the envelope', async () => {
      const res = await post('/api/admin/jobs/trash_cleanup/trigger?force=true', bearer(adminToken));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        ok: true,
        outcome: { kind: 'ok', count: 7, extra: { forced: true } },
      });
      expect(fake.calls).toEqual([
        { name: 'trash_cleanup', args: { force: true, deep: false }, auditLinesBefore: 1 },
      ]);
    });

    it('passes deep and body params through', async () => {
      const res = await post(
        '/api/admin/jobs/trash_cleanup/trigger?deep=true&force=false',
        { ...bearer(adminToken), 'content-type': 'application/json' },
        JSON.stringify({ limit: 5 }),
      );
      expect(res.status).toBe(200);
      expect(fake.calls[0]?.args).toEqual({ force: false, deep: true, params: { limit: 5 } });
    });

    it('answers ok:false with the err outcome', async () => {
      const res = await post('/api/admin/jobs/failing_job/trigger', bearer(adminToken));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: false, outcome: { kind: 'err', message: 'boom' } });
    });

    it('404 JSON for an unknown job, without calling the port', async () => {
      const res = await post('/api/admin/jobs/nope/trigger', bearer(adminToken));
      expect(res.status).toBe(404);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('JOB_NOT_FOUND');
      expect(body.error.message).toContain("'nope'");
      expect(body.error.message).toContain('known jobs: trash_cleanup, failing_job, throwing_job');
      expect(fake.calls).toEqual([]);
    });

    it('400 for force/deep values other than true/false, saying what is allowed', async () => {
      const res = await post('/api/admin/jobs/trash_cleanup/trigger?force=yes', bearer(adminToken));
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('VALIDATION_FAILED');
      expect(body.error.message).toContain('query.force: must be "true" or "false", got "yes"');
      const deep = await post('/api/admin/jobs/trash_cleanup/trigger?deep=1', bearer(adminToken));
      expect(deep.status).toBe(400);
      expect(((await deep.json()) as { error: { message: string } }).error.message).toContain('query.deep');
      expect(fake.calls).toEqual([]);
    });

    it('400 INVALID_PARAMS for deep=true (query or body) on a job without a deep mode, nothing dispatched', async () => {
      for (const [query, body] of [
        ['?deep=true', undefined],
        ['', JSON.stringify({ deep: true, limit: 5 })],
      ] as const) {
        const res = await post(
          `/api/admin/jobs/failing_job/trigger${query}`,
          { ...bearer(adminToken), 'content-type': 'application/json' },
          body,
        );
        expect(res.status, query || body).toBe(400);
        const error = ((await res.json()) as { error: { code: string; message: string } }).error;
        expect(error.code).toBe('INVALID_PARAMS');
        expect(error.message).toBe(
          'failing_job has no deep mode: deep=true is refused; jobs with a deep mode ' +
            '(supports_deep in GET /api/admin/jobs): trash_cleanup',
        );
      }
      // deep=false is always fine.
      expect((await post('/api/admin/jobs/failing_job/trigger?deep=false', bearer(adminToken))).status).toBe(
        200,
      );
      expect(fake.calls.map((call) => call.args)).toEqual([{ force: false, deep: false }]);
    });

    it('400 MALFORMED_JSON for a body that is not JSON', async () => {
      const res = await post(
        '/api/admin/jobs/trash_cleanup/trigger',
        { ...bearer(adminToken), 'content-type': 'application/json' },
        '{"params": ',
      );
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('MALFORMED_JSON');
      expect(fake.calls).toEqual([]);
    });

    it('500 JSON without internals when the port throws, logged as an error', async () => {
      const res = await post('/api/admin/jobs/throwing_job/trigger', bearer(adminToken));
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({
        error: { code: 'INTERNAL', message: 'an unexpected error occurred; the server log has the details' },
      });
      expect(text).not.toContain('secret internal detail');
      expect(
        lines.some((l) => l.level === 'error' && JSON.stringify(l.fields).includes('secret internal')),
      ).toBe(true);
    });

    it('writes an allowed audit line before acting, with who, what and from where', async () => {
      await post('/api/admin/jobs/trash_cleanup/trigger?force=true', bearer(adminToken));
      expect(auditLines()).toEqual([
        expect.objectContaining({
          target: 'audit',
          decision: 'allowed',
          user_id: admin.id,
          username: 'alice',
          method: 'POST',
          path: '/api/admin/jobs/trash_cleanup/trigger',
          job: 'trash_cleanup',
          query: { force: 'true' },
          remote_address: '10.1.2.3',
          user_agent: 'vitest-agent',
        }),
      ]);
      expect(fake.calls[0]?.auditLinesBefore).toBe(1);
    });

    it('writes a refused audit line for every refused POST, with the decision', async () => {
      const userToken = await signAdminToken({ secret: SECRET, user: plain, expiresInSeconds: 60 });
      await post('/api/admin/jobs/trash_cleanup/trigger');
      await post('/api/admin/jobs/trash_cleanup/trigger', bearer('not.a.jwt'));
      await post('/api/admin/jobs/trash_cleanup/trigger', bearer(userToken));
      await post('/api/admin/jobs/trash_cleanup/trigger?force=maybe', bearer(adminToken));
      await post('/api/admin/jobs/nope/trigger', bearer(adminToken));
      await post('/api/admin/jobs', bearer(adminToken));
      const refused = auditLines();
      expect(refused.map((l) => [l['decision'], l['status'], l['error_code'], l['username']])).toEqual([
        ['refused', 401, 'UNAUTHENTICATED', 'anonymous'],
        ['refused', 401, 'UNAUTHENTICATED', 'anonymous'],
        ['refused', 403, 'FORBIDDEN', 'bob'],
        ['refused', 400, 'VALIDATION_FAILED', 'alice'],
        ['refused', 404, 'JOB_NOT_FOUND', 'alice'],
        ['refused', 405, 'METHOD_NOT_ALLOWED', 'alice'],
      ]);
      expect(refused[2]).toMatchObject({
        user_id: plain.id,
        job: 'trash_cleanup',
        remote_address: '10.1.2.3',
      });
      expect(refused[3]).toMatchObject({ query: { force: 'maybe' } });
      expect(fake.calls).toEqual([]);
    });

    it('writes no audit line for GETs', async () => {
      await app.request('/api/admin/jobs', { headers: bearer(adminToken) });
      expect(auditLines()).toEqual([]);
    });
  });

  describe('errors are JSON', () => {
    it('404 for an unknown route', async () => {
      const res = await app.request('/nowhere');
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({
        error: { code: 'NOT_FOUND', message: 'no route for GET /nowhere' },
      });
    });

    it('404 for an unknown admin route (after auth)', async () => {
      const res = await app.request('/api/admin/jobs/x/nothing', { headers: bearer(adminToken) });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    });

    it('405 with Allow for an unsupported method', async () => {
      const res = await app.request('/api/admin/jobs', { method: 'DELETE', headers: bearer(adminToken) });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET');
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('METHOD_NOT_ALLOWED');
      const get = await app.request('/api/admin/jobs/trash_cleanup/trigger', { headers: bearer(adminToken) });
      expect(get.status).toBe(405);
      expect(get.headers.get('allow')).toBe('POST');
      const health = await app.request('/healthz', { method: 'POST' });
      expect(health.status).toBe(405);
    });
  });

  it('serves the OpenAPI document generated from the schemas, publicly', async () => {
    const res = await app.request('/api/admin/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      openapi: string;
      paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }> }>>;
      components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/admin/jobs',
      '/api/admin/jobs/{name}/cancel',
      '/api/admin/jobs/{name}/runs',
      '/api/admin/jobs/{name}/runs/{id}',
      '/api/admin/jobs/{name}/runs/{id}/findings',
      '/api/admin/jobs/{name}/trigger',
      '/healthz',
      '/livez',
    ]);
    const params = doc.paths['/api/admin/jobs/{name}/trigger']?.['post']?.parameters ?? [];
    expect(params.map((p) => `${p.in}:${p.name}`).sort()).toEqual([
      'path:name',
      'query:deep',
      'query:force',
      'query:wait',
    ]);
    expect(doc.components.securitySchemes).toHaveProperty('bearerAuth');
    expect(doc.components.schemas).toHaveProperty('OutcomeEnvelope');
    expect(doc.components.schemas).toHaveProperty('Error');
  });
});
