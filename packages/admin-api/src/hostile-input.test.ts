import { randomUUID } from 'node:crypto';
import { completed, RecoverableEngine, type RecoverableJobHandler } from '@oxicloud/recoverable';
import { JobRegistry, type JobRunArgs, type Logger, ok } from '@oxicloud/scheduler';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type AdminUserRecord,
  createAdminApp,
  type HealthProbe,
  MAX_JSON_DEPTH,
  signAdminToken,
} from './index.js';

const SECRET = 'test-secret-that-is-at-least-32-bytes-long!';
const MiB = 1024 * 1024;
const silent: Logger = { info() {}, warn() {}, error() {}, debug() {} };

/**
 * A job with two rules, like the consistency checks: a new run takes only
 * `step` (an integer); a stored run is read leniently (any keys).
 */
function twoRuleJob(seen: Array<Record<string, unknown>>): RecoverableJobHandler {
  return {
    name: 'two_rules',
    validateParams: (raw) => ({ ok: true, params: raw as Record<string, unknown> }),
    validateTriggerParams(raw) {
      const params = raw as Record<string, unknown>;
      const unknown = Object.keys(params).filter((key) => key !== 'step');
      if (unknown.length > 0)
        return { ok: false, message: `unknown keys ${unknown.join(', ')}; allowed: step` };
      if (params['step'] !== undefined && !Number.isInteger(params['step'])) {
        return { ok: false, message: 'step must be an integer' };
      }
      return { ok: true, params };
    },
    async runResumable(store) {
      // What the run got: its own params and its typed options.
      seen.push({ ...store.params, ...store.options });
      return completed();
    },
  };
}

/**
 * Hostile input through `app.request` on a real engine and a real Postgres
 * (issue 12): every case is a 4xx JSON error saying what is allowed, nothing
 * reaches the database or the job, and listings stay small whatever the
 * stored rows hold.
 */
describe('the admin API refuses hostile input with a 4xx saying what is allowed', () => {
  let db: TestDatabase;
  let engine: RecoverableEngine;
  let registry: JobRegistry;
  let token: string;
  let app: ReturnType<typeof createAdminApp>;
  const seen: Array<Record<string, unknown>> = [];
  const periodicCalls: JobRunArgs[] = [];

  const makeApp = (overrides: Partial<Parameters<typeof createAdminApp>[0]> = {}) =>
    createAdminApp({
      jobs: registry,
      runs: engine,
      users: { findById: async (id) => (id === admin.id ? admin : null) },
      jwtSecret: SECRET,
      logger: silent,
      ...overrides,
    });
  const admin: AdminUserRecord = { id: randomUUID(), username: 'alice', role: 'admin' };
  const auth = () => ({ authorization: `Bearer ${token}` });
  const get = (path: string) => app.request(path, { headers: auth() });
  const post = (path: string, body: string | Uint8Array, headers: Record<string, string> = {}) =>
    app.request(path, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json', ...headers },
      body,
    });
  const errorOf = async (res: Response) =>
    ((await res.json()) as { error: { code: string; message: string } }).error;
  const runCount = async () =>
    Number((await db.pool.query('SELECT count(*) AS n FROM jobs.recoverable_runs')).rows[0].n);

  beforeAll(async () => {
    db = await createTestDatabase();
    token = await signAdminToken({ secret: SECRET, user: admin, expiresInSeconds: 3600 });
    engine = new RecoverableEngine({ pool: db.pool });
    engine.register(twoRuleJob(seen));
    registry = new JobRegistry({ logger: silent });
    registry.register(
      {
        name: 'echo',
        async run(args) {
          periodicCalls.push(args);
          return ok(0, {});
        },
      },
      null,
      null,
    );
  });
  afterAll(async () => {
    await engine.shutdown({ timeoutMs: 5000 });
    await registry.stop();
    await db.drop();
  });
  beforeEach(async () => {
    app = makeApp();
    periodicCalls.length = 0;
    await engine.whenIdle();
    await db.pool.query('DELETE FROM jobs.recoverable_runs');
  });

  describe('request bodies', () => {
    it('413 PAYLOAD_TOO_LARGE over 64 KiB, by Content-Length or while streaming; nothing stored', async () => {
      const big = JSON.stringify({ step: 1, pad: 'x'.repeat(64 * 1024) });
      for (const path of ['/api/admin/jobs/two_rules/trigger', '/api/admin/jobs/echo/trigger']) {
        const res = await post(path, big, { 'content-length': String(Buffer.byteLength(big)) });
        expect(res.status, path).toBe(413);
        const error = await errorOf(res);
        expect(error.code).toBe('PAYLOAD_TOO_LARGE');
        expect(error.message).toContain('larger than 64 KiB');
      }
      const streamed = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 100; i++) controller.enqueue(new Uint8Array(1024).fill(0x20));
          controller.close();
        },
      });
      const res = await app.request('/api/admin/jobs/two_rules/trigger', {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: streamed,
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(413);
      expect(await runCount()).toBe(0);
      expect(periodicCalls).toEqual([]);
      // Just under the limit is read (and then refused by the job's rule: an unknown key).
      const fits = JSON.stringify({ pad: 'x'.repeat(60 * 1024) });
      expect(await errorOf(await post('/api/admin/jobs/two_rules/trigger', fits))).toMatchObject({
        code: 'INVALID_PARAMS',
      });
    });

    it('the limit is configurable, and a bad limit is refused when the app is created', async () => {
      app = makeApp({ maxBodyBytes: 2048 });
      const res = await post(
        '/api/admin/jobs/two_rules/trigger',
        JSON.stringify({ step: 1, p: 'x'.repeat(3000) }),
      );
      expect(res.status).toBe(413);
      expect((await errorOf(res)).message).toContain('larger than 2 KiB');
      for (const bad of [0, 100, 1.5, Number.NaN, 64 * MiB]) {
        expect(() => makeApp({ maxBodyBytes: bad }), String(bad)).toThrow(
          /maxBodyBytes must be an integer from 1024 to/,
        );
      }
    });

    it(`400 INVALID_PARAMS for nesting deeper than ${MAX_JSON_DEPTH}, even 100,000 deep (no stack overflow)`, async () => {
      app = makeApp({ maxBodyBytes: 16 * MiB });
      const deepArray = `{"step":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
      const deepObject = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
      const justOver = `${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1${'}'.repeat(MAX_JSON_DEPTH + 1)}`;
      for (const body of [deepArray, deepObject, justOver]) {
        for (const path of ['/api/admin/jobs/two_rules/trigger', '/api/admin/jobs/echo/trigger']) {
          const res = await post(path, body);
          expect(res.status, `${path} ${body.length}`).toBe(400);
          const error = await errorOf(res);
          expect(error.code).toBe('INVALID_PARAMS');
          expect(error.message).toContain(`more than ${MAX_JSON_DEPTH} levels deep`);
        }
      }
      // Brackets inside strings do not count.
      const inString = JSON.stringify({ step: 1, note: '[[[[[[[[[[[[{{{{{{{{{{{' });
      expect((await errorOf(await post('/api/admin/jobs/two_rules/trigger', inString))).message).toContain(
        'unknown keys note',
      );
      expect(await runCount()).toBe(0);
      expect(periodicCalls).toEqual([]);
    });

    it('400 INVALID_PARAMS for a string or key with NUL or a lone surrogate, recoverable or periodic', async () => {
      const bodies = [
        '{"x":"a\\u0000b"}',
        '{"x":"\\ud800"}',
        '{"x":"\\udc00x"}',
        '{"x":"ok\\ud83d"}',
        '{"\\u0000":1}',
        '{"\\ud800":1}',
        '{"x":["fine",{"y":"\\u0000"}]}',
      ];
      for (const body of bodies) {
        for (const path of ['/api/admin/jobs/two_rules/trigger', '/api/admin/jobs/echo/trigger']) {
          const res = await post(path, body);
          expect(res.status, `${path} ${body}`).toBe(400);
          const error = await errorOf(res);
          expect(error.code, body).toBe('INVALID_PARAMS');
          expect(error.message).toMatch(/NUL character|lone surrogate/);
          expect(error.message).toContain('must be well-formed Unicode without NUL characters');
        }
      }
      // A well-formed pair (an emoji) is fine as far as strings go.
      const emoji = await post('/api/admin/jobs/echo/trigger', '{"x":"\\ud83d\\ude00"}');
      expect(emoji.status).toBe(200);
      expect(periodicCalls.map((args) => args.params)).toEqual([{ x: '😀' }]);
      expect(await runCount()).toBe(0);
    });

    it('400 MALFORMED_JSON for a body that is not UTF-8', async () => {
      const res = await post(
        '/api/admin/jobs/two_rules/trigger',
        new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      );
      expect(res.status).toBe(400);
      expect(await errorOf(res)).toMatchObject({
        code: 'MALFORMED_JSON',
        message: expect.stringContaining('UTF-8'),
      });
    });

    it('400 INVALID_PARAMS for force / deep in the body that are not JSON booleans', async () => {
      for (const body of [{ force: 'maybe' }, { force: 'true' }, { deep: 1 }, { deep: null }]) {
        for (const path of ['/api/admin/jobs/two_rules/trigger', '/api/admin/jobs/echo/trigger']) {
          const res = await post(path, JSON.stringify(body));
          expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(400);
          const error = await errorOf(res);
          expect(error.code).toBe('INVALID_PARAMS');
          expect(error.message).toMatch(/(force|deep) must be true or false \(a JSON boolean\)/);
        }
      }
      const res = await post('/api/admin/jobs/two_rules/trigger', JSON.stringify({ force: true, step: 2 }));
      expect(res.status).toBe(202);
      await engine.whenIdle();
      expect(seen.at(-1)).toEqual({ step: 2, force: true, deep: false });
    });

    it("a new run's unknown keys are refused; a stored run with such keys still resumes as it is", async () => {
      const res = await post('/api/admin/jobs/two_rules/trigger', JSON.stringify({ step: 1, x: 'a' }));
      expect(res.status).toBe(400);
      expect(await errorOf(res)).toEqual({
        code: 'INVALID_PARAMS',
        message: 'invalid params for two_rules: unknown keys x; allowed: step',
      });
      expect(await runCount()).toBe(0);

      const id = randomUUID();
      await db.pool.query(
        `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at, params)
         VALUES ($1, 'two_rules', 'Paused', now(), now(), '{"x": "legacy", "force": false, "deep": false}')`,
        [id],
      );
      const resumed = await post('/api/admin/jobs/two_rules/trigger', JSON.stringify({ y: 'ignored' }));
      expect(resumed.status).toBe(202);
      expect(await resumed.json()).toMatchObject({ run_id: id, resumed: true });
      await engine.whenIdle();
      expect(seen.at(-1)).toEqual({ x: 'legacy', force: false, deep: false });
      expect((await engine.getRun('two_rules', id)).status).toBe('Completed');
    });
  });

  describe('query values', () => {
    it('limit / offset are plain decimal integers: 0x10, 0b11, %205, empty and friends are 400', async () => {
      for (const value of [
        '0x10',
        '0b11',
        '0o7',
        '%205',
        '',
        '%20',
        '+5',
        '-0',
        '5e1',
        '1.0',
        '1_0',
        '５',
        '9'.repeat(17),
      ]) {
        for (const name of ['limit', 'offset']) {
          const res = await get(`/api/admin/jobs/two_rules/runs?${name}=${value}`);
          expect(res.status, `${name}=${value}`).toBe(400);
          const error = await errorOf(res);
          expect(error.code).toBe('VALIDATION_FAILED');
          expect(error.message).toContain(`query.${name}: must be a plain decimal integer from`);
        }
      }
      expect((await get('/api/admin/jobs/two_rules/runs?limit=007&offset=0')).status).toBe(200);
      expect((await get('/api/admin/jobs/two_rules/runs?limit=500')).status).toBe(200);
    });

    it('booleans are exactly true or false in the query', async () => {
      for (const value of ['', 'TRUE', '1', 'yes', 'maybe', 'true%00']) {
        const res = await app.request(`/api/admin/jobs/echo/trigger?force=${value}`, {
          method: 'POST',
          headers: auth(),
        });
        expect(res.status, `force=${value}`).toBe(400);
        expect((await errorOf(res)).message).toContain('must be "true" or "false"');
      }
      expect(periodicCalls).toEqual([]);
    });

    it('kind=%00 and other control characters are 400 on the findings route, never reaching Postgres', async () => {
      const { run_id } = await engine.trigger('two_rules');
      await engine.whenIdle();
      for (const kind of ['%00', 'a%00b', '%01', '%7F', 'x%0Ay']) {
        const res = await get(`/api/admin/jobs/two_rules/runs/${run_id}/findings?kind=${kind}`);
        expect(res.status, kind).toBe(400);
        expect(await errorOf(res)).toMatchObject({
          code: 'VALIDATION_FAILED',
          message: expect.stringContaining('query.kind: must be printable text'),
        });
      }
      // An undecodable escape stays as typed (no lone surrogate can arrive): answered, empty.
      expect((await get(`/api/admin/jobs/two_rules/runs/${run_id}/findings?kind=%ED%A0%80`)).status).toBe(
        200,
      );
      expect((await get(`/api/admin/jobs/two_rules/runs/${run_id}/findings?kind=missing_blob`)).status).toBe(
        200,
      );
    });
  });

  describe('listings', () => {
    it('a page of 500 runs stays under 1 MiB however large the stored rows; the detail has everything', async () => {
      // 500 stored runs, each far over the listing budgets: escapes, emoji, long keys, 60 keys, deep nesting.
      await db.pool.query(
        `INSERT INTO jobs.recoverable_runs
           (id, job_name, status, started_at, last_progress_at, completed_at, cursor, stats, params, error_message)
         SELECT gen_random_uuid(), 'two_rules', 'Failed', now() - make_interval(secs => i), now(), now(),
                decode(repeat('ab', 4000), 'hex'),
                jsonb_build_object('count', 1, 'note', repeat(chr(1) || chr(128512) || '"', 400))
                  || (SELECT jsonb_object_agg('stat_' || k, repeat(chr(2), 40)) FROM generate_series(1, 60) k),
                jsonb_build_object('huge', repeat(chr(1) || chr(128512) || '\\', 400),
                                   'nested', '{"a":{"b":{"c":{"d":[1,2,3]}}}}'::jsonb)
                  || (SELECT jsonb_object_agg(repeat('k', 200) || k, repeat(chr(3), 60)) FROM generate_series(1, 60) k),
                repeat(chr(1) || chr(128512), 1000)
           FROM generate_series(1, 500) i`,
      );
      const res = await get('/api/admin/jobs/two_rules/runs?limit=500');
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MiB);
      const runs = JSON.parse(text) as Array<Record<string, unknown>>;
      expect(runs).toHaveLength(500);
      for (const run of runs) {
        expect(run).not.toHaveProperty('params');
        expect(run).toMatchObject({ truncated: true, job_name: 'two_rules', status: 'Failed' });
        expect(typeof run['params_summary']).toBe('object');
        expect((run['stats'] as Record<string, unknown>)['count']).toBe(1);
        expect((run['error_message'] as string).length).toBeLessThanOrEqual(201);
        expect((run['cursor_hex'] as string).length).toBeLessThanOrEqual(161);
      }
      const jobs = await get('/api/admin/jobs');
      const jobsText = await jobs.text();
      expect(Buffer.byteLength(jobsText)).toBeLessThan(64 * 1024);
      const listed = (JSON.parse(jobsText) as Array<Record<string, unknown>>).find(
        (j) => j['name'] === 'two_rules',
      );
      expect(listed?.['latest_run']).toMatchObject({ truncated: true });
      expect(listed?.['latest_run']).not.toHaveProperty('params');

      const first = runs[0] as { run_id: string };
      const detail = (await (await get(`/api/admin/jobs/two_rules/runs/${first.run_id}`)).json()) as {
        params: Record<string, unknown>;
        error_message: string;
      };
      expect(detail.params['huge']).toBe(`\u0001😀\\`.repeat(400));
      expect(Object.keys(detail.params)).toHaveLength(62);
      expect(detail.error_message).toHaveLength(3_000);
    });

    it('small params and stats are listed whole, with truncated false', async () => {
      await post('/api/admin/jobs/two_rules/trigger', JSON.stringify({ step: 3 }));
      await engine.whenIdle();
      const [run] = (await (await get('/api/admin/jobs/two_rules/runs')).json()) as Array<
        Record<string, unknown>
      >;
      expect(run).toMatchObject({ params_summary: { step: 3, force: false, deep: false }, truncated: false });
    });
  });

  describe('GET /healthz (public)', () => {
    it('reports the database as away (503) without its address or a stack', async () => {
      const probe: HealthProbe = {
        database: async () => ({
          ok: false,
          error:
            'connect ECONNREFUSED 127.0.0.1:54329\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)',
        }),
      };
      for (const error of [
        'connect ECONNREFUSED 127.0.0.1:54329\n    at TCPConnectWrap.afterConnect (node:net:1555:16)',
        'connect ECONNREFUSED ::1:5432',
        'getaddrinfo ENOTFOUND db.internal.example',
        'password authentication failed for user "oxicloud" at 10.0.0.7:5432',
      ]) {
        app = makeApp({ health: { database: async () => ({ ok: false, error }) } });
        const res = await app.request('/healthz');
        expect(res.status).toBe(503);
        const body = (await res.json()) as { status: string; database: { ok: boolean; error: string } };
        expect(body).toMatchObject({ status: 'degraded', database: { ok: false } });
        expect(body.database.error).not.toMatch(
          /127\.0\.0\.1|::1|10\.0\.0\.7|54329|5432|internal\.example|oxicloud|\bat\b/,
        );
        expect(body.database.error.length).toBeGreaterThan(0);
      }
      app = makeApp({ health: probe });
      expect((await app.request('/healthz')).status).toBe(503);
      app = makeApp({ health: { database: async () => ({ ok: true, latencyMs: 1.5 }) } });
      expect(await (await app.request('/healthz')).json()).toEqual({
        service: 'oxijobs',
        status: 'ok',
        database: { ok: true, latency_ms: 1.5 },
      });
    });
  });
});
