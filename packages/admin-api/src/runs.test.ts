import { FindingKindCatalog, PgFindingStore } from '@oxicloud/consistency';
import {
  asJobHandler,
  completed,
  paused,
  RecoverableEngine,
  type RecoverableJobHandler,
  type RunSummary,
} from '@oxicloud/recoverable';
import { JobRegistry, type JobRunArgs, type Logger, NO_CAPABILITIES, ok } from '@oxicloud/scheduler';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type AdminUserLookup,
  type AdminUserRecord,
  createAdminApp,
  type JobSummaryJson,
  type RunService,
  signAdminToken,
} from './index.js';

const SECRET = 'test-secret-that-is-at-least-32-bytes-long!';
const TOTAL = 60;

interface LogLine {
  level: string;
  fields: Record<string, unknown>;
}

function capturingLogger(lines: LogLine[]): Logger {
  const at =
    (level: string) =>
    (fields: object): void => {
      lines.push({ level, fields: fields as Record<string, unknown> });
    };
  return { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
}

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

async function insertUser(db: TestDatabase, username: string, role: 'admin' | 'user') {
  const { rows } = await db.pool.query(
    "INSERT INTO auth.users (username, email, role) VALUES ($1, $1::text || '@example.org', $2) RETURNING id::text, username, role",
    [username, role],
  );
  return rows[0] as AdminUserRecord;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function encode(n: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, n);
  return bytes;
}

function decode(bytes: Uint8Array | null): number {
  return bytes ? new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0) : 0;
}

/**
 * A slow walk over TOTAL items: one item per batch every 15 ms, checkpointing
 * each batch and pausing when a cancel is requested. Params: `step`
 * (integer 1–10, default 1), `label` (string).
 */
function slowWalk(seen: Array<Record<string, unknown>>): RecoverableJobHandler {
  return {
    name: 'slow_walk',
    capabilities: { deep: true },
    validateParams(raw) {
      const params = raw as Record<string, unknown>;
      const allowed = new Set(['step', 'label']);
      const extra = Object.keys(params).filter((key) => !allowed.has(key));
      if (extra.length > 0)
        return { ok: false, message: `unknown params ${extra.join(', ')}; allowed: step, label` };
      const step = params['step'] ?? 1;
      if (typeof step !== 'number' || !Number.isInteger(step) || step < 1 || step > 10) {
        return { ok: false, message: 'step must be an integer from 1 to 10' };
      }
      return { ok: true, params: { ...params, step } };
    },
    estimateTotal: async () => TOTAL,
    async runResumable(store, signal) {
      seen.push({ ...store.params });
      const step = store.params['step'] as number;
      let next = decode(await store.loadCursor());
      while (next < TOTAL) {
        if (signal.aborted || (await store.status()) === 'CancelRequested') return paused(encode(next));
        await sleep(15);
        next = Math.min(TOTAL, next + step);
        await store.checkpoint(encode(next), step, { scanned: step });
      }
      return completed();
    },
  };
}

/** Completes at once; on the registry too (as the server bridges recoverable jobs). */
const quickCheck: RecoverableJobHandler = {
  name: 'quick_check',
  capabilities: { check: { order: 5, countMeaning: 'items checked' }, alerts: ['consistency_findings'] },
  async runResumable(store) {
    await store.checkpoint(encode(1), 1, { scanned: 1 });
    return completed();
  },
};

describe('Part 2 admin routes on a real RecoverableEngine', () => {
  let db: TestDatabase;
  let admin: AdminUserRecord;
  let adminToken: string;
  let userToken: string;
  let engine: RecoverableEngine;
  let registry: JobRegistry;
  let findings: PgFindingStore;
  let lines: LogLine[];
  let app: ReturnType<typeof createAdminApp>;
  const seenParams: Array<Record<string, unknown>> = [];
  const periodicCalls: Array<{ name: string; args: JobRunArgs; auditLinesBefore: number }> = [];

  const auditLines = () => lines.filter((l) => l.fields['target'] === 'audit').map((l) => l.fields);
  const bearer = (token = adminToken) => ({ authorization: `Bearer ${token}` });
  const get = (path: string, token = adminToken) => app.request(path, { headers: bearer(token) });
  const post = (path: string, body?: unknown, headers: Record<string, string> = {}) =>
    app.request(path, {
      method: 'POST',
      headers: {
        ...bearer(),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
  const json = async <T>(res: Response) => (await res.json()) as T;
  const errorOf = async (res: Response) =>
    (await json<{ error: { code: string; message: string } }>(res)).error;

  async function waitForStatus(name: string, runId: string, status: string): Promise<RunSummary> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const run = await engine.getRun(name, runId);
      if (run.status === status) return run;
      if (Date.now() > deadline) throw new Error(`run ${runId} is ${run.status}, not ${status}`);
      await sleep(10);
    }
  }

  function makeApp(overrides: Partial<Parameters<typeof createAdminApp>[0]> = {}) {
    return createAdminApp({
      jobs: registry,
      runs: engine,
      findings,
      users: pgLookup(db),
      jwtSecret: SECRET,
      logger: capturingLogger(lines),
      ...overrides,
    });
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    admin = await insertUser(db, 'alice', 'admin');
    const plain = await insertUser(db, 'bob', 'user');
    adminToken = await signAdminToken({ secret: SECRET, user: admin, expiresInSeconds: 3600 });
    userToken = await signAdminToken({ secret: SECRET, user: plain, expiresInSeconds: 3600 });
    engine = new RecoverableEngine({ pool: db.pool });
    engine.register(slowWalk(seenParams));
    engine.register(quickCheck);
    registry = new JobRegistry({ logger: capturingLogger([]) });
    registry.register(
      {
        name: 'trash_cleanup',
        async run(args) {
          periodicCalls.push({
            name: 'trash_cleanup',
            args,
            auditLinesBefore: lines.filter((l) => l.fields['target'] === 'audit').length,
          });
          await sleep(50);
          return ok(3, { forced: args.force });
        },
      },
      3_600_000,
      null,
    );
    registry.register(asJobHandler(engine, 'quick_check'), null, null);
    findings = new PgFindingStore({ pool: db.pool });
  });
  afterAll(async () => {
    await engine.shutdown({ timeoutMs: 5000 });
    await registry.stop();
    await db.drop();
  });
  beforeEach(() => {
    lines = [];
    periodicCalls.length = 0;
    app = makeApp();
  });

  describe('GET /api/admin/jobs', () => {
    it('lists periodic and recoverable jobs, the engine-only ones after the registry ones', async () => {
      const res = await get('/api/admin/jobs');
      expect(res.status).toBe(200);
      const body = await json<Array<Record<string, unknown>>>(res);
      expect(body.map((j) => [j['name'], j['kind'], j['supports_deep'], j['check']])).toEqual([
        ['trash_cleanup', 'periodic', false, null],
        ['quick_check', 'recoverable', false, { order: 5, count_meaning: 'items checked' }],
        ['slow_walk', 'recoverable', true, null],
      ]);
      expect(body[0]).toMatchObject({ interval_ms: 3_600_000, latest_run: null, running: false });
      expect(body[2]).toMatchObject({ interval_ms: null, next_run_at: null, last_outcome: null });
    });

    it("shows a recoverable job's latest finished run as its last outcome (the bridged JobOutcome)", async () => {
      await engine.runOrResume('quick_check');
      const body = await json<Array<{ name: string; last_outcome: Record<string, unknown> | null }>>(
        await get('/api/admin/jobs'),
      );
      const quick = body.find((j) => j.name === 'quick_check');
      const latest = await engine.latestRun('quick_check');
      expect(quick?.last_outcome).toMatchObject({
        at: latest?.completed_at,
        outcome: { kind: 'ok', extra: { completed: true, run_id: latest?.run_id } },
      });
      expect(typeof quick?.last_outcome?.['elapsed_ms']).toBe('number');
    });

    it("lists each job's declared finding kinds (finding_kinds), [] for a job that declares none", async () => {
      const kinds = new FindingKindCatalog();
      kinds.add({
        name: 'quick_check',
        findingKinds: [
          { kind: 'item_missing', severity: 'DataLoss', meaning: 'an item is gone', magnitude: 'count' },
          { kind: 'item_stale', severity: 'Drift', meaning: 'an item is old', repair: 'refresh_item' },
        ],
      });
      const body = await json<JobSummaryJson[]>(
        await makeApp({ findingKinds: kinds }).request('/api/admin/jobs', { headers: bearer() }),
      );
      expect(Object.fromEntries(body.map((j) => [j.name, j.finding_kinds]))).toEqual({
        trash_cleanup: [],
        quick_check: [
          {
            kind: 'item_missing',
            severity: 'DataLoss',
            meaning: 'an item is gone',
            magnitude: 'count',
            repair: null,
          },
          {
            kind: 'item_stale',
            severity: 'Drift',
            meaning: 'an item is old',
            magnitude: null,
            repair: 'refresh_item',
          },
        ],
        slow_walk: [],
      });
      // Without the catalog of kinds, every job lists none.
      const plain = await json<JobSummaryJson[]>(await get('/api/admin/jobs'));
      expect(plain.every((j) => j.finding_kinds.length === 0)).toBe(true);
    });

    it("reads a periodic job's declared capabilities from the catalog, a recoverable job's from the engine", async () => {
      const custom = makeApp({
        jobs: {
          list: () =>
            registry.list().map((j) => ({
              ...j,
              // The registry's entry for a recoverable job is overruled by the engine's declaration.
              capabilities: { check: null, deep: true, alerts: [] },
            })),
          trigger: (name, args) => registry.trigger(name, args),
        },
      });
      const body = await json<Array<Record<string, unknown>>>(
        await custom.request('/api/admin/jobs', { headers: bearer() }),
      );
      expect(body.map((j) => j['supports_deep'])).toEqual([true, false, true]);
    });
  });

  describe('a recoverable run: trigger, idempotency, cancel, resume, runs', () => {
    let runId: string;

    it('trigger answers 202 with the run at once and audits before acting', async () => {
      const res = await post('/api/admin/jobs/slow_walk/trigger?force=true', { step: 2, label: 'first' });
      expect(res.status).toBe(202);
      const body = await json<Record<string, unknown>>(res);
      expect(body).toMatchObject({ ok: true, status: 'Running', resumed: false, already_running: false });
      runId = body['run_id'] as string;
      expect(runId).toMatch(/^[0-9a-f-]{36}$/);
      expect(auditLines()).toEqual([
        expect.objectContaining({
          decision: 'allowed',
          job: 'slow_walk',
          kind: 'recoverable',
          args: { force: true, params: { step: 2, label: 'first' } },
        }),
      ]);
    });

    it('a second trigger returns the same run, already running', async () => {
      const res = await post('/api/admin/jobs/slow_walk/trigger');
      expect(res.status).toBe(202);
      expect(await json(res)).toEqual({
        ok: true,
        run_id: runId,
        status: 'Running',
        resumed: false,
        already_running: true,
        // No flag given: the stored force=true is not reported as overridden by a default.
        params: { step: 2, label: 'first', force: true, deep: false },
        params_not_applied: {},
      });
    });

    it('the listing shows the run as latest_run and the job as running', async () => {
      const body = await json<Array<Record<string, unknown>>>(await get('/api/admin/jobs'));
      const walk = body.find((j) => j['name'] === 'slow_walk');
      expect(walk).toMatchObject({
        running: true,
        latest_run: { run_id: runId, status: 'Running', job_name: 'slow_walk' },
      });
      expect(walk?.['running_since']).toBe((walk?.['latest_run'] as RunSummary).started_at);
    });

    it('cancel answers CancelRequested and the run lands Paused; cancel again returns it as it is', async () => {
      const res = await post('/api/admin/jobs/slow_walk/cancel');
      expect(res.status).toBe(200);
      expect(await json(res)).toEqual({ run_id: runId, status: 'CancelRequested' });
      const run = await waitForStatus('slow_walk', runId, 'Paused');
      expect(run.cursor_hex).not.toBeNull();
      const again = await post('/api/admin/jobs/slow_walk/cancel');
      expect(again.status).toBe(200);
      expect(await json(again)).toEqual({ run_id: runId, status: 'Paused' });
      expect(auditLines().map((l) => l['decision'])).toEqual(['allowed', 'allowed']);
    });

    it('trigger resumes the Paused run with its stored params (new ones validated, then ignored)', async () => {
      const before = await engine.getRun('slow_walk', runId);
      const res = await post('/api/admin/jobs/slow_walk/trigger', { step: 5, label: 'second' });
      expect(res.status).toBe(202);
      // The answer says which params the resumed run uses and which asked for were not applied.
      expect(await json(res)).toMatchObject({
        run_id: runId,
        resumed: true,
        already_running: false,
        params: { step: 2, label: 'first', force: true, deep: false },
        params_not_applied: { step: 5, label: 'second' },
      });
      const done = await waitForStatus('slow_walk', runId, 'Completed');
      expect(done.params).toEqual({ step: 2, label: 'first', force: true, deep: false });
      expect(seenParams.at(-1)).toMatchObject({ step: 2, label: 'first' });
      expect(done.stats['count']).toBe(TOTAL);
      expect(Number(before.stats['count'])).toBeLessThan(TOTAL);
    });

    it('GET runs lists the runs newest first, paged', async () => {
      const second = await json<{ run_id: string }>(
        await post('/api/admin/jobs/slow_walk/trigger', { step: 10 }),
      );
      await waitForStatus('slow_walk', second.run_id, 'Completed');
      const res = await get('/api/admin/jobs/slow_walk/runs');
      expect(res.status).toBe(200);
      const runs = await json<RunSummary[]>(res);
      expect(runs.map((r) => r.run_id)).toEqual([second.run_id, runId]);
      expect(runs[1]).toMatchObject({
        job_name: 'slow_walk',
        status: 'Completed',
        error_message: null,
        progress: { processed: TOTAL, total: TOTAL, fraction: 1, eta_seconds: 0 },
      });
      expect(runs[1]?.completed_at).toEqual(expect.any(String));
      const page = await json<RunSummary[]>(await get('/api/admin/jobs/slow_walk/runs?limit=1&offset=1'));
      expect(page.map((r) => r.run_id)).toEqual([runId]);
    });

    it('GET runs/{id} answers one run', async () => {
      const res = await get(`/api/admin/jobs/slow_walk/runs/${runId}`);
      expect(res.status).toBe(200);
      expect(await json(res)).toMatchObject({ run_id: runId, status: 'Completed', params: { step: 2 } });
      const upper = await get(`/api/admin/jobs/slow_walk/runs/${runId.toUpperCase()}`);
      expect(upper.status).toBe(200);
    });

    it('while a run is active the last outcome is the run before it; a cancelled run is a paused outcome, not done', async () => {
      const listed = async () =>
        (await json<JobSummaryJson[]>(await get('/api/admin/jobs'))).find((j) => j.name === 'slow_walk')!;
      const before = (await engine.listRuns('slow_walk', { limit: 1 }))[0]!;
      expect(before.status).toBe('Completed');
      const third = await json<{ run_id: string }>(
        await post('/api/admin/jobs/slow_walk/trigger', { step: 1 }),
      );
      await waitForStatus('slow_walk', third.run_id, 'Running');
      const running = await listed();
      expect(running.latest_run).toMatchObject({ run_id: third.run_id, status: 'Running' });
      expect(running.last_outcome).toMatchObject({
        at: before.completed_at,
        outcome: { kind: 'ok', extra: { completed: true, run_id: before.run_id } },
      });

      expect((await post('/api/admin/jobs/slow_walk/cancel')).status).toBe(200);
      await waitForStatus('slow_walk', third.run_id, 'Paused');
      // The bridge says ok (the run did not fail) with paused: true; the page and the CLI show it as paused.
      expect((await listed()).last_outcome?.outcome).toMatchObject({
        kind: 'ok',
        extra: { paused: true, run_id: third.run_id },
      });
      await post('/api/admin/jobs/slow_walk/trigger');
      await waitForStatus('slow_walk', third.run_id, 'Completed');
    });

    it('cancel with nothing active is 409 NO_ACTIVE_RUN, audited allowed then refused', async () => {
      const res = await post('/api/admin/jobs/slow_walk/cancel');
      expect(res.status).toBe(409);
      expect(await errorOf(res)).toMatchObject({ code: 'NO_ACTIVE_RUN' });
      expect(auditLines().map((l) => [l['decision'], l['status'] ?? null, l['error_code'] ?? null])).toEqual([
        ['allowed', null, null],
        ['refused', 409, 'NO_ACTIVE_RUN'],
      ]);
    });
  });

  describe('trigger errors', () => {
    it('400 INVALID_PARAMS with the job message; nothing started', async () => {
      const res = await post('/api/admin/jobs/slow_walk/trigger', { step: 99 });
      expect(res.status).toBe(400);
      const error = await errorOf(res);
      expect(error.code).toBe('INVALID_PARAMS');
      expect(error.message).toContain('step must be an integer from 1 to 10');
      const unknown = await post('/api/admin/jobs/slow_walk/trigger', { nope: 1 });
      expect((await errorOf(unknown)).message).toContain('allowed: step, label');
      const latest = await engine.latestRun('slow_walk');
      expect(latest?.status).toBe('Completed');
      expect(auditLines().at(-1)).toMatchObject({
        decision: 'refused',
        status: 400,
        error_code: 'INVALID_PARAMS',
      });
    });

    it('400 MALFORMED_JSON for a body that is not a JSON object, with what is allowed', async () => {
      for (const body of ['[1,2]', '"text"', '42', 'null']) {
        const res = await post('/api/admin/jobs/slow_walk/trigger', body);
        expect(res.status).toBe(400);
        const error = await errorOf(res);
        expect(error.code).toBe('MALFORMED_JSON');
        expect(error.message).toMatch(/must be a JSON object/);
      }
      const broken = await post('/api/admin/jobs/slow_walk/trigger', '{"step": ');
      expect(await errorOf(broken)).toMatchObject({ code: 'MALFORMED_JSON' });
      const text = await post('/api/admin/jobs/trash_cleanup/trigger', 'step=1', {
        'content-type': 'text/plain',
      });
      expect(await errorOf(text)).toMatchObject({ code: 'MALFORMED_JSON' });
      expect(periodicCalls).toEqual([]);
    });

    it('an empty body with a JSON content type is no params', async () => {
      const res = await post('/api/admin/jobs/trash_cleanup/trigger', '');
      expect(res.status).toBe(200);
      expect(periodicCalls[0]?.args).toEqual({ force: false, deep: false });
    });

    it('400 VALIDATION_FAILED for force/deep/wait other than true/false, naming the allowed values', async () => {
      for (const query of ['force=maybe', 'deep=1', 'wait=no']) {
        const res = await post(`/api/admin/jobs/slow_walk/trigger?${query}`);
        expect(res.status).toBe(400);
        const error = await errorOf(res);
        expect(error.code).toBe('VALIDATION_FAILED');
        expect(error.message).toContain(`query.${query.split('=')[0]}: must be "true" or "false"`);
      }
    });

    it('404 JOB_NOT_FOUND listing the known jobs, recoverable ones included', async () => {
      const res = await post('/api/admin/jobs/nope/trigger');
      expect(res.status).toBe(404);
      const error = await errorOf(res);
      expect(error.code).toBe('JOB_NOT_FOUND');
      expect(error.message).toBe("no job named 'nope'; known jobs: trash_cleanup, quick_check, slow_walk");
    });

    it('503 SHUTTING_DOWN once the engine stops', async () => {
      const closing = new RecoverableEngine({ pool: db.pool });
      closing.register({ ...quickCheck, name: 'closing_job' });
      await closing.shutdown({ timeoutMs: 10 });
      const res = await makeApp({ runs: closing }).request('/api/admin/jobs/closing_job/trigger', {
        method: 'POST',
        headers: bearer(),
      });
      expect(res.status).toBe(503);
      expect(await errorOf(res)).toMatchObject({ code: 'SHUTTING_DOWN' });
    });
  });

  describe('periodic jobs', () => {
    it('trigger waits for the outcome and passes the body as args.params, after the audit line', async () => {
      // trash_cleanup has no deep mode: deep=true is refused before anything runs.
      const refused = await post('/api/admin/jobs/trash_cleanup/trigger?force=true&deep=true', { limit: 5 });
      expect(refused.status).toBe(400);
      expect((await errorOf(refused)).message).toContain('trash_cleanup has no deep mode');
      expect(periodicCalls).toEqual([]);
      const res = await post('/api/admin/jobs/trash_cleanup/trigger?force=true', { limit: 5 });
      expect(res.status).toBe(200);
      expect(await json(res)).toEqual({
        ok: true,
        outcome: { kind: 'ok', count: 3, extra: { forced: true } },
      });
      expect(periodicCalls).toEqual([
        {
          name: 'trash_cleanup',
          args: { force: true, deep: false, params: { limit: 5 } },
          auditLinesBefore: 2,
        },
      ]);
    });

    it('wait=false answers 202 at once; the outcome lands in last_outcome', async () => {
      const res = await post('/api/admin/jobs/trash_cleanup/trigger?wait=false');
      expect(res.status).toBe(202);
      expect(await json(res)).toEqual({ ok: true, accepted: true });
      const deadline = Date.now() + 5000;
      for (;;) {
        const job = registry.list().find((j) => j.name === 'trash_cleanup');
        if (!job?.running && periodicCalls.length === 1) {
          expect(job?.last_outcome?.outcome).toEqual({ kind: 'ok', count: 3, extra: { forced: false } });
          break;
        }
        if (Date.now() > deadline) throw new Error('background trigger never finished');
        await sleep(10);
      }
    });

    it('wait=false contains a throwing port: logged, never an unhandled rejection', async () => {
      const throwing = makeApp({
        jobs: {
          list: () => registry.list(),
          trigger: async () => {
            throw new Error('port exploded');
          },
        },
      });
      const res = await throwing.request('/api/admin/jobs/trash_cleanup/trigger?wait=false', {
        method: 'POST',
        headers: bearer(),
      });
      expect(res.status).toBe(202);
      await sleep(10);
      expect(lines.some((l) => l.level === 'error' && l.fields['event'] === 'trigger.failed')).toBe(true);
    });

    it('cancel, runs, run and findings are 409 NOT_RECOVERABLE', async () => {
      const id = '018f2c1e-0000-7000-8000-000000000000';
      const responses = [
        await post('/api/admin/jobs/trash_cleanup/cancel'),
        await get('/api/admin/jobs/trash_cleanup/runs'),
        await get(`/api/admin/jobs/trash_cleanup/runs/${id}`),
        await get(`/api/admin/jobs/trash_cleanup/runs/${id}/findings`),
      ];
      for (const res of responses) {
        expect(res.status).toBe(409);
        expect(await errorOf(res)).toMatchObject({ code: 'NOT_RECOVERABLE' });
      }
      expect(auditLines()).toEqual([
        expect.objectContaining({ decision: 'refused', status: 409, error_code: 'NOT_RECOVERABLE' }),
      ]);
    });
  });

  describe('runs errors', () => {
    it('404 JOB_NOT_FOUND for an unknown job on every run route', async () => {
      const id = '018f2c1e-0000-7000-8000-000000000000';
      for (const res of [
        await post('/api/admin/jobs/nope/cancel'),
        await get('/api/admin/jobs/nope/runs'),
        await get(`/api/admin/jobs/nope/runs/${id}`),
        await get(`/api/admin/jobs/nope/runs/${id}/findings`),
      ]) {
        expect(res.status).toBe(404);
        expect(await errorOf(res)).toMatchObject({ code: 'JOB_NOT_FOUND' });
      }
    });

    it('400 VALIDATION_FAILED for limit/offset out of range or not integers', async () => {
      for (const query of ['limit=0', 'limit=501', 'limit=abc', 'limit=1.5', 'offset=-1']) {
        const res = await get(`/api/admin/jobs/slow_walk/runs?${query}`);
        expect(res.status, query).toBe(400);
        const error = await errorOf(res);
        expect(error.code).toBe('VALIDATION_FAILED');
        expect(error.message).toMatch(/must be a plain decimal integer from/);
      }
    });

    it('400 INVALID_RUN_ID for a malformed id, 404 RUN_NOT_FOUND for an unknown one or another job’s', async () => {
      const bad = await get('/api/admin/jobs/slow_walk/runs/not-a-uuid');
      expect(bad.status).toBe(400);
      expect(await errorOf(bad)).toMatchObject({ code: 'INVALID_RUN_ID' });
      const missing = await get('/api/admin/jobs/slow_walk/runs/018f2c1e-0000-7000-8000-000000000000');
      expect(missing.status).toBe(404);
      expect(await errorOf(missing)).toMatchObject({ code: 'RUN_NOT_FOUND' });
      const { run_id } = await engine.trigger('quick_check');
      await engine.whenIdle();
      const other = await get(`/api/admin/jobs/slow_walk/runs/${run_id}`);
      expect(other.status).toBe(404);
      expect(await errorOf(other)).toMatchObject({ code: 'RUN_NOT_FOUND' });
    });
  });

  describe('GET …/runs/{id}/findings', () => {
    let runId: string;
    const finding = (
      kind: string,
      severity: string,
      resourceId: string,
      detail: Record<string, unknown> = {},
    ) => findings.write(runId, [{ kind, severity: severity as 'DataLoss', resourceId, detail }]);

    beforeAll(async () => {
      const { run_id } = await engine.trigger('quick_check');
      await engine.whenIdle();
      runId = run_id;
      // Inserted out of triage order on purpose.
      await finding('used_bytes_drift', 'Drift', 'drive-1', { delta: 10 });
      await finding('orphan_blob', 'Reclaimable', 'hash-orphan-1');
      await finding('missing_blob', 'DataLoss', 'hash-small', { ref_count: 1, total_bytes: 10 });
      await finding('missing_thumbnail', 'Regenerable', 'file-9');
      await finding('missing_blob', 'DataLoss', 'hash-big', { ref_count: 9, total_bytes: 5 });
      await finding('missing_blob', 'DataLoss', 'hash-heavy', { ref_count: 1, total_bytes: 5000 });
      await finding('parent_folder_trashed', 'DataLoss', 'file-1');
      await finding('orphan_blob', 'Reclaimable', 'hash-orphan-2');
    });

    it('answers every finding in triage order with the counts', async () => {
      const res = await get(`/api/admin/jobs/quick_check/runs/${runId}/findings`);
      expect(res.status).toBe(200);
      const body = await json<{
        run_id: string;
        total: number;
        counts: Array<{ kind: string; severity: string; count: number }>;
        findings: Array<Record<string, unknown>>;
      }>(res);
      expect(body.run_id).toBe(runId);
      expect(body.total).toBe(8);
      expect(body.findings.map((f) => f['resource_id'])).toEqual([
        'hash-big',
        'hash-heavy',
        'hash-small',
        'file-1',
        'hash-orphan-1',
        'hash-orphan-2',
        'file-9',
        'drive-1',
      ]);
      expect(body.findings[0]).toEqual({
        id: expect.any(String),
        kind: 'missing_blob',
        severity: 'DataLoss',
        resource_id: 'hash-big',
        detail: { ref_count: 9, total_bytes: 5 },
        found_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      expect(body.counts).toEqual([
        { kind: 'missing_blob', severity: 'DataLoss', count: 3 },
        { kind: 'parent_folder_trashed', severity: 'DataLoss', count: 1 },
        { kind: 'orphan_blob', severity: 'Reclaimable', count: 2 },
        { kind: 'missing_thumbnail', severity: 'Regenerable', count: 1 },
        { kind: 'used_bytes_drift', severity: 'Drift', count: 1 },
      ]);
    });

    it('filters by severity and kind; total counts the filtered findings, counts the whole run', async () => {
      const bySeverity = await json<{ total: number; counts: unknown[]; findings: Array<{ kind: string }> }>(
        await get(`/api/admin/jobs/quick_check/runs/${runId}/findings?severity=DataLoss`),
      );
      expect(bySeverity.total).toBe(4);
      expect(bySeverity.counts).toHaveLength(5);
      expect(bySeverity.findings.map((f) => f.kind)).toEqual([
        'missing_blob',
        'missing_blob',
        'missing_blob',
        'parent_folder_trashed',
      ]);
      const byKind = await json<{ total: number; findings: Array<{ resource_id: string }> }>(
        await get(`/api/admin/jobs/quick_check/runs/${runId}/findings?kind=orphan_blob&severity=Reclaimable`),
      );
      expect(byKind.total).toBe(2);
      expect(byKind.findings.map((f) => f.resource_id)).toEqual(['hash-orphan-1', 'hash-orphan-2']);
      const none = await json<{ total: number; findings: unknown[] }>(
        await get(`/api/admin/jobs/quick_check/runs/${runId}/findings?kind=orphan_blob&severity=Drift`),
      );
      expect(none).toMatchObject({ total: 0, findings: [] });
    });

    it('pages with limit and offset', async () => {
      const page = await json<{ total: number; findings: Array<{ resource_id: string }> }>(
        await get(`/api/admin/jobs/quick_check/runs/${runId}/findings?limit=3&offset=2`),
      );
      expect(page.total).toBe(8);
      expect(page.findings.map((f) => f.resource_id)).toEqual(['hash-small', 'file-1', 'hash-orphan-1']);
      const over = await get(`/api/admin/jobs/quick_check/runs/${runId}/findings?limit=1001`);
      expect(over.status).toBe(400);
      expect(await errorOf(over)).toMatchObject({ code: 'VALIDATION_FAILED' });
    });

    it('400 VALIDATION_FAILED for a bad severity, naming the four allowed', async () => {
      const res = await get(`/api/admin/jobs/quick_check/runs/${runId}/findings?severity=Bad`);
      expect(res.status).toBe(400);
      const error = await errorOf(res);
      expect(error.code).toBe('VALIDATION_FAILED');
      expect(error.message).toContain('must be one of DataLoss, Reclaimable, Regenerable, Drift, got "Bad"');
    });

    it('404 RUN_NOT_FOUND for a run of another job, 400 INVALID_RUN_ID for a malformed id', async () => {
      const other = await get(`/api/admin/jobs/slow_walk/runs/${runId}/findings`);
      expect(other.status).toBe(404);
      expect(await errorOf(other)).toMatchObject({ code: 'RUN_NOT_FOUND' });
      const bad = await get('/api/admin/jobs/quick_check/runs/xyz/findings');
      expect(bad.status).toBe(400);
      expect(await errorOf(bad)).toMatchObject({ code: 'INVALID_RUN_ID' });
    });

    it('a run without findings answers an empty page', async () => {
      const { run_id } = await engine.trigger('quick_check');
      await engine.whenIdle();
      expect(await json(await get(`/api/admin/jobs/quick_check/runs/${run_id}/findings`))).toEqual({
        run_id,
        total: 0,
        counts: [],
        findings: [],
      });
    });
  });

  describe('failures of the dependencies', () => {
    it('503 UNAVAILABLE when the database does not answer, never a 500', async () => {
      const deadPool = new pg.Pool({
        connectionString: 'postgres://nobody@127.0.0.1:1/none',
        connectionTimeoutMillis: 2000,
      });
      const deadEngine = new RecoverableEngine({ pool: deadPool });
      deadEngine.register(quickCheck);
      const deadApp = makeApp({ runs: deadEngine, findings: new PgFindingStore({ pool: deadPool }) });
      try {
        for (const [method, path] of [
          ['GET', '/api/admin/jobs'],
          ['GET', '/api/admin/jobs/quick_check/runs'],
          ['GET', '/api/admin/jobs/quick_check/runs/018f2c1e-0000-7000-8000-000000000000'],
          ['POST', '/api/admin/jobs/quick_check/trigger'],
          ['POST', '/api/admin/jobs/quick_check/cancel'],
        ] as const) {
          const res = await deadApp.request(path, { method, headers: bearer() });
          expect(res.status, `${method} ${path}`).toBe(503);
          expect((await errorOf(res)).code).toBe('UNAVAILABLE');
        }
      } finally {
        await deadPool.end();
      }
    });

    it('500 INTERNAL JSON for a genuine bug in a port, details only in the log', async () => {
      const buggy: RunService = {
        names: () => ['buggy'],
        has: (name) => name === 'buggy',
        capabilities: () => NO_CAPABILITIES,
        trigger: async () => {
          throw new TypeError('cannot read properties of undefined (secret)');
        },
        cancel: async () => {
          throw new TypeError('nope');
        },
        listRuns: async () => [],
        getRun: async () => {
          throw new TypeError('nope');
        },
        latestRun: async () => null,
      };
      const res = await makeApp({ runs: buggy }).request('/api/admin/jobs/buggy/trigger', {
        method: 'POST',
        headers: bearer(),
      });
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({ error: { code: 'INTERNAL' } });
      expect(text).not.toContain('secret');
    });
  });

  describe('auth and documentation of the new routes', () => {
    const id = '018f2c1e-0000-7000-8000-000000000000';
    const routes = [
      ['POST', '/api/admin/jobs/slow_walk/cancel'],
      ['GET', '/api/admin/jobs/slow_walk/runs'],
      ['GET', `/api/admin/jobs/slow_walk/runs/${id}`],
      ['GET', `/api/admin/jobs/slow_walk/runs/${id}/findings`],
      ['POST', '/api/admin/jobs/slow_walk/trigger'],
    ] as const;

    it('401 without a token and 403 for a non-admin on every new route; POSTs audited refused', async () => {
      for (const [method, path] of routes) {
        const anonymous = await app.request(path, { method });
        expect(anonymous.status, `${method} ${path}`).toBe(401);
        expect((await errorOf(anonymous)).code).toBe('UNAUTHENTICATED');
        const user = await app.request(path, { method, headers: bearer(userToken) });
        expect(user.status, `${method} ${path}`).toBe(403);
        expect((await errorOf(user)).code).toBe('FORBIDDEN');
      }
      expect(auditLines().map((l) => [l['decision'], l['status'], l['username']])).toEqual([
        ['refused', 401, 'anonymous'],
        ['refused', 403, 'bob'],
        ['refused', 401, 'anonymous'],
        ['refused', 403, 'bob'],
      ]);
      expect(await engine.latestRun('slow_walk')).toMatchObject({ status: 'Completed' });
    });

    it('405 with Allow on the new paths', async () => {
      const res = await app.request('/api/admin/jobs/slow_walk/cancel', { headers: bearer() });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      const runs = await app.request('/api/admin/jobs/slow_walk/runs', { method: 'POST', headers: bearer() });
      expect(runs.status).toBe(405);
      expect(runs.headers.get('allow')).toBe('GET');
    });

    it('the OpenAPI document lists the routes with their parameters and schemas', async () => {
      const doc = await json<{
        paths: Record<
          string,
          Record<
            string,
            {
              parameters?: Array<{ name: string; in: string }>;
              security?: unknown[];
              requestBody?: unknown;
              responses: Record<string, unknown>;
            }
          >
        >;
        components: { schemas: Record<string, unknown> };
      }>(await app.request('/api/admin/openapi.json'));
      const op = (path: string, method: string) => doc.paths[path]?.[method];
      const params = (path: string, method: string) =>
        (op(path, method)?.parameters ?? []).map((p) => `${p.in}:${p.name}`).sort();
      expect(params('/api/admin/jobs/{name}/cancel', 'post')).toEqual(['path:name']);
      expect(params('/api/admin/jobs/{name}/runs', 'get')).toEqual([
        'path:name',
        'query:limit',
        'query:offset',
      ]);
      expect(params('/api/admin/jobs/{name}/runs/{id}', 'get')).toEqual(['path:id', 'path:name']);
      expect(params('/api/admin/jobs/{name}/runs/{id}/findings', 'get')).toEqual([
        'path:id',
        'path:name',
        'query:kind',
        'query:limit',
        'query:offset',
        'query:severity',
      ]);
      expect(op('/api/admin/jobs/{name}/trigger', 'post')?.requestBody).toBeDefined();
      expect(Object.keys(op('/api/admin/jobs/{name}/trigger', 'post')?.responses ?? {})).toContain('202');
      expect(Object.keys(op('/api/admin/jobs/{name}/cancel', 'post')?.responses ?? {})).toContain('409');
      for (const [path, methods] of Object.entries(doc.paths)) {
        if (!path.startsWith('/api/admin/jobs')) continue;
        for (const operation of Object.values(methods))
          expect(operation.security).toEqual([{ bearerAuth: [] }]);
      }
      expect(Object.keys(doc.components.schemas)).toEqual(
        expect.arrayContaining([
          'RunSummary',
          'RunTriggered',
          'CancelResult',
          'FindingsPage',
          'Finding',
          'JobSummary',
        ]),
      );
    });
  });
});
