import { randomUUID } from 'node:crypto';
import {
  FindingKindCatalog,
  type Inconsistency,
  PgFindingLedger,
  PgFindingStore,
} from '@oxicloud/consistency';
import { JobRegistry, type Logger } from '@oxicloud/scheduler';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminUserRecord, createAdminApp, signAdminToken, type TrackedFindingJson } from './index.js';

const SECRET = 'test-secret-that-is-at-least-32-bytes-long!';
const CHECK = 'files_consistency';
/** The check's declaration of the one kind these findings have. */
const DECLARED = {
  kind: 'blob_size_mismatch',
  severity: 'Drift',
  meaning: "the file's size differs from its blob row's size",
  magnitude: 'bytes',
  repair: 'set_file_size_from_blob',
} as const;

/** `/api/admin/findings` over real HTTP handling (the hono app) and real Postgres. */
describe('/api/admin/findings', () => {
  let db: TestDatabase;
  let app: ReturnType<typeof createAdminApp>;
  let bare: ReturnType<typeof createAdminApp>;
  let token: string;
  const lines: Array<Record<string, unknown>> = [];
  const runs: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    const { rows } = await db.pool.query(
      `INSERT INTO auth.users (username, email, role) VALUES ('root', 'root@example.org', 'admin') RETURNING id::text, username, role`,
    );
    const admin = rows[0] as AdminUserRecord;
    token = await signAdminToken({ secret: SECRET, user: admin, expiresInSeconds: 3600 });
    const push = (fields: object) => lines.push(fields as Record<string, unknown>);
    const logger: Logger = { info: push, warn: push, error: push, debug: () => undefined };
    const ledger = new PgFindingLedger({ pool: db.pool });
    const kinds = new FindingKindCatalog();
    kinds.add({ name: CHECK, findingKinds: [DECLARED] });
    const makeApp = (findingKinds?: FindingKindCatalog) =>
      createAdminApp({
        jobs: new JobRegistry({ logger }),
        users: {
          findById: async (id) =>
            ((
              await db.pool.query(
                'SELECT id::text, username, role, email FROM auth.users WHERE id::text = $1',
                [id],
              )
            ).rows[0] as AdminUserRecord | undefined) ?? null,
        },
        ledger,
        jwtSecret: SECRET,
        logger,
        ...(findingKinds ? { findingKinds } : {}),
      });
    app = makeApp(kinds);
    bare = makeApp();
    // Two completed runs: the first finds a, b, c; the second finds a and d (b and c fixed).
    const store = new PgFindingStore({ pool: db.pool });
    const f = (id: string, severity: Inconsistency['severity'] = 'Drift'): Inconsistency => ({
      kind: 'blob_size_mismatch',
      severity,
      resourceId: id,
      detail: { delta: 10 },
      magnitude: 10,
    });
    for (const found of [
      [f('a', 'DataLoss'), f('b'), f('c')],
      [f('a', 'DataLoss'), f('d')],
    ]) {
      const id = randomUUID();
      runs.push(id);
      await db.pool.query(
        `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at)
         VALUES ($1, $2, 'Running', now(), now())`,
        [id, CHECK],
      );
      await store.beginRun({ runId: id, checkName: CHECK, startedAt: new Date(), graceMs: 0 });
      await store.write(id, found);
      await db.pool.query(
        `UPDATE jobs.recoverable_runs SET status = 'Completed', completed_at = now() WHERE id = $1`,
        [id],
      );
      await ledger.closeRun(id);
    }
  });
  afterAll(async () => {
    await db.drop();
  });

  const call = async (method: string, path: string, body?: unknown, auth = true) => {
    const res = await app.request(path, {
      method,
      headers: {
        ...(auth ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const byResource = async (resource: string) => {
    const page = await call('GET', '/api/admin/findings?limit=100');
    return (page.body['findings'] as TrackedFindingJson[]).find((x) => x.resource_id === resource)!;
  };

  it('lists across runs, worst severity first, filtered, keyset-paged', async () => {
    const all = await call('GET', '/api/admin/findings');
    expect(all.status).toBe(200);
    const items = all.body['findings'] as TrackedFindingJson[];
    expect(items.map((x) => [x.resource_id, x.state])).toEqual([
      ['a', 'open'],
      ['d', 'open'],
      ...[
        ['c', 'fixed'],
        ['b', 'fixed'],
      ].sort((x, y) => (x[0]! < y[0]! ? 1 : -1)),
    ]);
    const open = await call('GET', '/api/admin/findings?state=open&check=files_consistency');
    expect((open.body['findings'] as TrackedFindingJson[]).map((x) => x.resource_id)).toEqual(['a', 'd']);
    const first = await call('GET', '/api/admin/findings?limit=1');
    expect(first.body['next_cursor']).toEqual(expect.any(String));
    const second = await call('GET', `/api/admin/findings?limit=1&cursor=${first.body['next_cursor']}`);
    expect((second.body['findings'] as TrackedFindingJson[])[0]?.resource_id).toBe('d');
  });

  it('answers 400 for a bad filter or cursor, 401 without a token', async () => {
    expect((await call('GET', '/api/admin/findings?state=closed')).body).toMatchObject({
      error: { code: 'VALIDATION_FAILED' },
    });
    expect((await call('GET', '/api/admin/findings?cursor=bm9wZQ')).body).toMatchObject({
      error: { code: 'INVALID_CURSOR' },
    });
    expect((await call('GET', '/api/admin/findings?limit=0')).status).toBe(400);
    expect((await call('GET', '/api/admin/findings', undefined, false)).status).toBe(401);
    expect((await call('GET', '/api/admin/findings/nope')).body).toMatchObject({
      error: { code: 'INVALID_FINDING_ID' },
    });
    expect((await call('GET', `/api/admin/findings/${randomUUID()}`)).status).toBe(404);
  });

  it('shows a finding with its history', async () => {
    const b = await byResource('b');
    const detail = await call('GET', `/api/admin/findings/${b.id}`);
    expect(detail.status).toBe(200);
    expect((detail.body['events'] as Array<{ event: string }>).map((e) => e.event)).toEqual(['new', 'fixed']);
    expect(detail.body['sightings']).toHaveLength(1);
    // The kind as its check declares it, from the catalog of finding kinds.
    const { kind: _kind, ...declaration } = DECLARED;
    expect(detail.body['kind_declaration']).toEqual(declaration);
    const undeclared = await bare.request(`/api/admin/findings/${b.id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await undeclared.json()) as Record<string, unknown>)['kind_declaration']).toBeNull();
  });

  it('accept / false-positive / reopen with a comment, audited; clear 4xx for bad input', async () => {
    const a = await byResource('a');
    const accepted = await call('POST', `/api/admin/findings/${a.id}/accept`, {
      comment: 'known, re-upload pending',
      until: '2099-01-01T00:00:00Z',
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ state: 'accepted', comment: 'known, re-upload pending' });
    expect(accepted.body['accept_until']).toBe('2099-01-01T00:00:00.000Z');
    const audit = lines.filter((l) => l['target'] === 'audit' && l['decision'] === 'allowed');
    expect(audit.at(-1)).toMatchObject({ finding_id: a.id, finding_decision: 'accept', method: 'POST' });

    expect((await call('POST', `/api/admin/findings/${a.id}/accept`, {})).body).toMatchObject({
      error: { code: 'VALIDATION_FAILED' },
    });
    expect(
      (await call('POST', `/api/admin/findings/${a.id}/accept`, { comment: 'x', extra: 1 })).status,
    ).toBe(400);
    expect(
      (
        await call('POST', `/api/admin/findings/${a.id}/accept`, {
          comment: 'x',
          until: '2001-01-01T00:00:00Z',
        })
      ).body,
    ).toMatchObject({ error: { code: 'VALIDATION_FAILED', message: expect.stringContaining('future') } });
    expect(
      (
        await call('POST', `/api/admin/findings/${a.id}/reopen`, {
          comment: 'x',
          until: '2099-01-01T00:00:00Z',
        })
      ).status,
    ).toBe(400);
    expect((await call('POST', `/api/admin/findings/${a.id}/accept`, '{nope')).body).toMatchObject({
      error: { code: 'MALFORMED_JSON' },
    });
    const b = await byResource('b');
    expect(
      (await call('POST', `/api/admin/findings/${b.id}/false-positive`, { comment: 'x' })).body,
    ).toMatchObject({
      error: { code: 'INVALID_TRANSITION' },
    });
    const refused = lines.filter((l) => l['target'] === 'audit' && l['decision'] === 'refused');
    expect(refused.at(-1)).toMatchObject({ status: 409, error_code: 'INVALID_TRANSITION' });

    const fp = await call('POST', `/api/admin/findings/${a.id}/false-positive`, {
      comment: 'race in reconcile',
    });
    expect(fp.body).toMatchObject({ state: 'false_positive', accept_until: null });
    const reopened = await call('POST', `/api/admin/findings/${a.id}/reopen`, { comment: 'it was real' });
    expect(reopened.body).toMatchObject({ state: 'open' });
    expect((await call('GET', `/api/admin/findings/${a.id}/accept`)).status).toBe(405);
  });

  it("names the admins of a finding's history by username, and a user that is gone by nothing (the page shows the id's end)", async () => {
    const a = await byResource('a');
    const detail = await call('GET', `/api/admin/findings/${a.id}`);
    const events = detail.body['events'] as Array<{
      event: string;
      actor: string;
      actor_name: string | null;
    }>;
    const root = events.find((e) => e.event === 'accept')!;
    expect(root.actor).toMatch(/^[0-9a-f-]{36}$/);
    expect(root.actor_name).toBe('root');
    expect(events.find((e) => e.event === 'new')).toMatchObject({ actor: 'system', actor_name: null });
    expect(detail.body).toMatchObject({ state_changed_by: root.actor, state_changed_by_name: 'root' });

    const { rows } = await db.pool.query(
      `INSERT INTO auth.users (username, email, role) VALUES ('leaver', 'leaver@example.org', 'admin') RETURNING id::text, username, role`,
    );
    const leaver = rows[0] as AdminUserRecord;
    const leaverToken = await signAdminToken({ secret: SECRET, user: leaver, expiresInSeconds: 3600 });
    const decided = await app.request(`/api/admin/findings/${a.id}/accept`, {
      method: 'POST',
      headers: { authorization: `Bearer ${leaverToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ comment: 'accepted by someone who then left' }),
    });
    expect(decided.status).toBe(200);
    await db.pool.query('DELETE FROM auth.users WHERE id = $1', [leaver.id]);
    const after = await call('GET', `/api/admin/findings/${a.id}`);
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ state_changed_by: leaver.id, state_changed_by_name: null });
    const last = (after.body['events'] as Array<{ actor: string; actor_name: string | null }>).at(-1);
    expect(last).toEqual(expect.objectContaining({ actor: leaver.id, actor_name: null }));
    expect(
      await call('POST', `/api/admin/findings/${a.id}/reopen`, { comment: 'back to open' }),
    ).toMatchObject({
      status: 200,
    });
  });

  it('says what a run found new and what it fixed', async () => {
    const second = await call('GET', `/api/admin/findings/runs/${runs[1]}/changes`);
    expect(second.status).toBe(200);
    expect(
      (second.body['changed'] as Array<{ resource_id: string; change: string }>).map((x) => [
        x.resource_id,
        x.change,
      ]),
    ).toEqual([['d', 'new']]);
    expect((second.body['fixed'] as TrackedFindingJson[]).map((x) => x.resource_id).sort()).toEqual([
      'b',
      'c',
    ]);
    expect(second.body['counts']).toMatchObject({ new: 1, fixed: 2 });
    expect((await call('GET', `/api/admin/findings/runs/${randomUUID()}/changes`)).body).toMatchObject({
      error: { code: 'RUN_NOT_FOUND' },
    });
  });
});
