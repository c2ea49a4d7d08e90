import { randomUUID } from 'node:crypto';
import { TOKEN_AUDIENCE, TOKEN_ISSUER } from '@oxicloud/admin-api';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ComposedServer } from '../src/index.js';
import { adminToken, composeInProcess, FAULT_JWT_SECRET, scratchDir } from './fault-support.js';

/** OxiCloud's session secret (`OXICLOUD_JWT_SECRET`), beside the engine's own. */
const OXICLOUD_SESSION_SECRET = 'oxicloud-session-secret-of-at-least-32-bytes';

/**
 * Issue 8, auth: every admin route — listed from the OpenAPI document, so a
 * route added later is covered without touching this file — refuses a missing,
 * expired, tampered or foreign token with 401 (an OxiCloud session token
 * and a token signed with OxiCloud's session secret among them) and a
 * non-admin's token with 403.
 */
describe('admin auth on every route of the OpenAPI document', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof scratchDir>;
  let server: ComposedServer;
  let routes: Array<{ method: string; path: string; template: string }>;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    dir = scratchDir('fault-auth');
    // OxiCloud's session secret beside the engine's own: never used to verify.
    ({ server } = await composeInProcess({
      pool: db.pool,
      dataDir: dir.path,
      env: { OXICLOUD_JWT_SECRET: OXICLOUD_SESSION_SECRET },
    }));
    await db.pool.query(
      "INSERT INTO auth.users (username, email, role) VALUES ('bob', 'bob@example.org', 'user')",
    );
    tokens['admin'] = await adminToken(db.pool);
    tokens['nonAdmin'] = await adminToken(db.pool, { username: 'bob' });
    tokens['expired'] = await adminToken(db.pool, {
      expiresInSeconds: 60,
      now: new Date(Date.now() - 2 * 3600_000),
    });
    const [header, payload, signature] = tokens['admin'].split('.') as [string, string, string];
    // Tampered: the payload re-encoded with role "admin" for bob, signature kept; and a flipped signature byte.
    const bob = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...bob, username: 'mallory', exp: 9_999_999_999 })).toString(
      'base64url',
    );
    tokens['tamperedPayload'] = `${header}.${forged}.${signature}`;
    const flipped = signature.startsWith('A') ? `B${signature.slice(1)}` : `A${signature.slice(1)}`;
    tokens['tamperedSignature'] = `${header}.${payload}.${flipped}`;
    // The engine's claims (iss, aud) signed with another secret, and with OxiCloud's session secret.
    const engineClaims = (secret: string) =>
      new SignJWT({ role: 'admin', username: 'admin' })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(String(bob['sub']))
        .setIssuer(TOKEN_ISSUER)
        .setAudience(TOKEN_AUDIENCE)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(secret));
    tokens['foreignSecret'] = await engineClaims(`${FAULT_JWT_SECRET}-but-another-one`);
    tokens['oxicloudSecret'] = await engineClaims(OXICLOUD_SESSION_SECRET);
    // An OxiCloud session token's layout (sub, exp, iat, jti, username, email, role; no iss, no aud),
    // for the admin, signed with OxiCloud's secret, and even with the engine's own.
    const oxicloudSession = (secret: string) =>
      new SignJWT({ jti: randomUUID(), username: 'admin', email: 'admin@example.org', role: 'admin' })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(String(bob['sub']))
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(secret));
    tokens['oxicloudSession'] = await oxicloudSession(OXICLOUD_SESSION_SECRET);
    tokens['oxicloudSessionEngineSecret'] = await oxicloudSession(FAULT_JWT_SECRET);
    const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    tokens['algNone'] = `${none}.${payload}.`;

    const doc = (await (await server.app.fetch(new Request('http://x/api/admin/openapi.json'))).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    routes = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/api/admin/jobs'))
      .flatMap(([template, methods]) =>
        Object.keys(methods)
          .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
          .map((m) => ({
            method: m.toUpperCase(),
            template,
            path: template
              .replace('{name}', 'files_consistency')
              .replace('{id}', '0190a4b2-1111-7000-8000-000000000001'),
          })),
      );
  });

  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    dir?.remove();
  });

  function call(route: { method: string; path: string }, authorization?: string): Promise<Response> {
    const headers: Record<string, string> = authorization ? { authorization } : {};
    return Promise.resolve(
      server.app.fetch(new Request(`http://x${route.path}`, { method: route.method, headers })),
    );
  }

  async function expectError(res: Response, status: number, code: string, what: string): Promise<void> {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    expect({ what, status: res.status, code: body.error?.code }).toEqual({ what, status, code });
    expect(body.error?.message?.length ?? 0, what).toBeGreaterThan(0);
  }

  it('the OpenAPI document lists the Part 1 and Part 2 admin routes', () => {
    const listed = routes.map((r) => `${r.method} ${r.template}`);
    expect(listed).toEqual(
      expect.arrayContaining([
        'GET /api/admin/jobs',
        'POST /api/admin/jobs/{name}/trigger',
        'POST /api/admin/jobs/{name}/cancel',
        'GET /api/admin/jobs/{name}/runs',
        'GET /api/admin/jobs/{name}/runs/{id}',
        'GET /api/admin/jobs/{name}/runs/{id}/findings',
      ]),
    );
  });

  it('without a token, or with a token that is not a bearer JWT: 401 UNAUTHENTICATED on every route', async () => {
    for (const route of routes) {
      const what = `${route.method} ${route.template}`;
      await expectError(await call(route), 401, 'UNAUTHENTICATED', `${what} (no token)`);
      await expectError(await call(route, 'Bearer'), 401, 'UNAUTHENTICATED', `${what} (empty bearer)`);
      await expectError(
        await call(route, `Basic ${Buffer.from('admin:admin').toString('base64')}`),
        401,
        'UNAUTHENTICATED',
        `${what} (basic)`,
      );
      await expectError(await call(route, 'Bearer not.a.jwt'), 401, 'UNAUTHENTICATED', `${what} (garbage)`);
    }
  });

  it.each([
    'expired',
    'tamperedPayload',
    'tamperedSignature',
    'foreignSecret',
    'oxicloudSecret',
    'oxicloudSession',
    'oxicloudSessionEngineSecret',
    'algNone',
  ])('with an %s token: 401 UNAUTHENTICATED on every route', async (kind) => {
    for (const route of routes) {
      await expectError(
        await call(route, `Bearer ${tokens[kind]}`),
        401,
        'UNAUTHENTICATED',
        `${route.method} ${route.template} (${kind})`,
      );
    }
  });

  it('with a valid token of a non-admin user: 403 FORBIDDEN on every route', async () => {
    for (const route of routes) {
      await expectError(
        await call(route, `Bearer ${tokens['nonAdmin']}`),
        403,
        'FORBIDDEN',
        `${route.method} ${route.template}`,
      );
    }
  });

  it('an admin token is accepted by every GET route (the refusals above are about the token)', async () => {
    for (const route of routes.filter((r) => r.method === 'GET')) {
      const res = await call(route, `Bearer ${tokens['admin']}`);
      expect([401, 403], `${route.method} ${route.template}`).not.toContain(res.status);
      expect(res.status, `${route.method} ${route.template}`).toBeLessThan(500);
    }
  });

  it('an admin demoted after signing is refused with 403 at once', async () => {
    await db.pool.query("UPDATE auth.users SET role = 'user' WHERE username = 'admin'");
    try {
      await expectError(await call(routes[0]!, `Bearer ${tokens['admin']}`), 403, 'FORBIDDEN', 'demoted');
    } finally {
      await db.pool.query("UPDATE auth.users SET role = 'admin' WHERE username = 'admin'");
    }
  });
});
