import { chmodSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import { decodeJwt, jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DUPLICATE_SIGNAL_WINDOW_MS } from '../src/commands/shutdown-signals.js';
import { type CliProcess, cleanEnv, jsonLines, runCli, startCli, waitForStatus } from './cli-process.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

/** The engine's token secret and OxiCloud's session secret, both in the server's environment. */
const ENGINE_SECRET = 'the-engine-own-secret-of-at-least-32-bytes';
const OXICLOUD_SESSION_SECRET = 'oxicloud-session-secret-of-at-least-32-bytes';

/** `oxijobs serve` as a real process on a DATABASE_URL (a fresh test database behind a TCP proxy). */
describe('oxijobs serve (DATABASE_URL)', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let dataDir: string;
  let env: Record<string, string>;
  let server: CliProcess;
  let base: string;

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    const url = new URL(db.url);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) });
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    dataDir = join(tmpdir(), `oxijobs-serve-${process.pid}-${proxy.port}`);
    mkdirSync(dataDir, { recursive: true });
    const httpPort = await freePort();
    base = `http://127.0.0.1:${httpPort}`;
    env = cleanEnv({
      DATABASE_URL: url.toString(),
      OXICLOUD_DATA_DIR: dataDir,
      OXICLOUD_HTTP_PORT: String(httpPort),
      OXICLOUD_LOG_LEVEL: 'info',
      // Beside OxiCloud: its session secret is in the same environment file; the engine has its own.
      OXIJOBS_JWT_SECRET: ENGINE_SECRET,
      OXICLOUD_JWT_SECRET: OXICLOUD_SESSION_SECRET,
    });
    server = startCli(['serve'], env);
    await waitForStatus(`${base}/healthz`, 200, { process: server, timeoutMs: 60_000 });
  });

  afterAll(async () => {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await proxy?.close();
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers /healthz without a token, reporting the database', async () => {
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; database: { ok: boolean; latency_ms: number } };
    expect(body).toMatchObject({ status: 'ok', database: { ok: true } });
    expect(typeof body.database.latency_ms).toBe('number');
  });

  it('logs JSON lines with a target, and created the first admin with a hint', () => {
    const lines = jsonLines(server.stdout());
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => typeof l['target'] === 'string' && typeof l['level'] === 'string')).toBe(true);
    const created = lines.find((l) => l['event'] === 'admin.created');
    expect(created).toMatchObject({ username: 'admin' });
    expect(String(created?.['msg'])).toContain('pnpm oxijobs token --user admin');
    expect(lines.some((l) => l['event'] === 'scheduler.started')).toBe(true);
  });

  it("signs with OXIJOBS_JWT_SECRET beside OXICLOUD_JWT_SECRET, refuses OxiCloud's session tokens, and says so at boot", async () => {
    const notice = jsonLines(server.stdout()).find(
      (l) => l['event'] === 'config.notice' && l['variable'] === 'OXICLOUD_JWT_SECRET',
    );
    expect(notice).toMatchObject({ level: 'warn' });
    expect(String(notice?.['msg'])).toContain(
      "OXICLOUD_JWT_SECRET is OxiCloud's session secret: the engine never signs or verifies a token with it",
    );
    expect(server.stdout()).not.toContain(OXICLOUD_SESSION_SECRET);
    const minted = await runCli(['token', '--user', 'admin'], env);
    expect(minted.code, minted.stderr).toBe(0);
    const token = minted.stdout.trim();
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ iss: 'oxijobs', aud: 'oxijobs-admin', role: 'admin' });
    await expect(jwtVerify(token, new TextEncoder().encode(ENGINE_SECRET))).resolves.toBeDefined();
    await expect(jwtVerify(token, new TextEncoder().encode(OXICLOUD_SESSION_SECRET))).rejects.toThrow();
    const status = async (bearer: string) =>
      (await fetch(`${base}/api/admin/jobs`, { headers: { authorization: `Bearer ${bearer}` } })).status;
    expect(await status(token)).toBe(200);
    const sign = (payload: Record<string, unknown>, secret: string) =>
      new SignJWT(payload)
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(String(claims.sub))
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(secret));
    // The engine's claims signed with OxiCloud's session secret; OxiCloud's session layout (no iss, no aud).
    const engineClaims = { role: 'admin', username: 'admin', iss: 'oxijobs', aud: 'oxijobs-admin' };
    const session = {
      jti: '0190a4b2-4444-7000-8000-000000000004',
      username: 'admin',
      email: 'admin@example.org',
      role: 'admin',
    };
    expect(await status(await sign(engineClaims, OXICLOUD_SESSION_SECRET))).toBe(401);
    expect(await status(await sign(session, OXICLOUD_SESSION_SECRET))).toBe(401);
    expect(await status(await sign(session, ENGINE_SECRET))).toBe(401);
  });

  it('mints an admin token as the last stdout line, accepted by the admin API', async () => {
    const result = await runCli(['token', '--user', 'admin', '--expires-in', '1h'], env);
    expect(result.code).toBe(0);
    const token = result.stdout.trim().split('\n').at(-1)!;
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const list = await fetch(`${base}/api/admin/jobs`, { headers: { authorization: `Bearer ${token}` } });
    expect(list.status).toBe(200);
    const names = ((await list.json()) as Array<{ name: string }>).map((j) => j.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'trash_cleanup',
        'storage_reconcile',
        'dedup_gc',
        'grant_cleanup',
        'drives_consistency',
        'folders_consistency',
        'files_consistency',
        'consistency_batch',
        'reextract_audio',
        'reextract_image',
      ]),
    );
    const trigger = await fetch(`${base}/api/admin/jobs/trash_cleanup/trigger?force=false`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'user-agent': 'process-test' },
    });
    expect(trigger.status).toBe(200);
    expect(await trigger.json()).toMatchObject({ ok: true, outcome: { kind: 'ok' } });
    const audit = jsonLines(server.stdout()).find((l) => l['target'] === 'audit');
    expect(audit).toMatchObject({ decision: 'allowed', username: 'admin', user_agent: 'process-test' });
    expect(audit?.['remote_address']).toMatch(/127\.0\.0\.1/);
    const anonymous = await fetch(`${base}/api/admin/jobs`);
    expect(anonymous.status).toBe(401);
  });

  it('refuses a token for a non-admin or unknown user with a clear message', async () => {
    await db.pool.query(
      "INSERT INTO auth.users (username, email, role) VALUES ('bob', 'bob@example.org', 'user')",
    );
    const bob = await runCli(['token', '--user', 'bob'], env);
    expect(bob.code).toBe(1);
    expect(bob.stdout).toBe('');
    expect(bob.stderr).toContain(
      'oxijobs: user "bob" has role "user"; tokens are only minted for users with role "admin"',
    );
    const nobody = await runCli(['token', '--user', 'nobody'], env);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain('oxijobs: no active user named or with the e-mail address "nobody"');
  });

  it('refuses bad command-line values with one line and exit 2', async () => {
    const result = await runCli(['token', '--user', 'admin', '--expires-in', 'forever'], env);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain("'--expires-in <duration>' argument 'forever' is invalid");
    const seed = await runCli(['seed', '--users', 'many', '--files-per-user', '2'], env);
    expect(seed.code).toBe(2);
    expect(seed.stderr).toBe('oxijobs: --users="many" is not allowed: expected a whole number\n');
    const unknownFault = await runCli(
      ['seed', '--users', '1', '--files-per-user', '1', '--faults', 'gremlins'],
      env,
    );
    expect(unknownFault.code).toBe(2);
    expect(unknownFault.stderr).toMatch(/^oxijobs: .*gremlins/);
  });

  it('seeds a small dataset through @oxicloud/dataset into the same database and blob folder', async () => {
    const before = await db.pool.query('SELECT count(*)::int AS n FROM storage.files');
    const result = await runCli(['seed', '--users', '2', '--files-per-user', '5', '--seed', '7'], env);
    expect(result.stderr).not.toContain('oxijobs:');
    expect(result.code).toBe(0);
    expect(result.stdout.trim().length).toBeGreaterThan(0);
    const after = await db.pool.query('SELECT count(*)::int AS n FROM storage.files');
    // Two personal drives and one shared drive (one per five users), five files each.
    expect(after.rows[0].n - before.rows[0].n).toBe(15);
    expect(existsSync(join(dataDir, 'storage', '.blobs'))).toBe(true); // OxiCloud's layout under the default root
  });

  it('reports degraded while Postgres is away, stays up, and recovers', async () => {
    await proxy.down();
    const degraded = (await waitForStatus(`${base}/healthz`, 503, {
      process: server,
      timeoutMs: 20_000,
    })) as {
      status: string;
      database: { ok: boolean; error: string };
    };
    expect(degraded.status).toBe('degraded');
    expect(degraded.database.ok).toBe(false);
    expect(degraded.database.error.length).toBeGreaterThan(0);
    await proxy.up();
    await waitForStatus(`${base}/healthz`, 200, { process: server, timeoutMs: 20_000 });
    expect(server.child.exitCode).toBeNull();
  });

  it('answers a 10 MB body with a 413 a client that sends it all before reading can read', async () => {
    const token = (await runCli(['token', '--user', 'admin'], env)).stdout.trim().split('\n').at(-1)!;
    const body = Buffer.alloc(10 * 1024 * 1024, 0x20);
    // As Python's urllib or a plain socket client does: the whole request first, then the answer.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(base).port), '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('latin1');
      });
      socket.on('error', reject);
      socket.on('end', () => resolve(text));
      socket.write(
        `POST /api/admin/jobs/files_consistency/trigger HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      );
      socket.end(body);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('PAYLOAD_TOO_LARGE');
    // And with fetch, which reads as it sends.
    const res = await fetch(`${base}/api/admin/jobs/files_consistency/trigger`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE' } });
  });

  it('shuts down cleanly on SIGTERM with exit code 0, also when the signal comes twice at once', async () => {
    // A process manager signalling every process of the service: the same request, twice within ms.
    server.child.kill('SIGTERM');
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    const events = jsonLines(server.stdout()).map((l) => l['event']);
    expect(events).toContain('server.stopping');
    expect(events).not.toContain('server.forced_exit');
    expect(events.at(-1)).toBe('server.stopped');
  });

  it(`a second Ctrl-C (SIGINT) more than ${DUPLICATE_SIGNAL_WINDOW_MS} ms after the first exits at once, 1`, async () => {
    server = startCli(['serve'], env);
    await waitForStatus(`${base}/healthz`, 200, { process: server, timeoutMs: 60_000 });
    // A request whose headers never finish holds the HTTP close (up to its 5 s grace).
    const holder = connect(Number(new URL(base).port), '127.0.0.1');
    holder.on('error', () => undefined);
    await new Promise((resolve) => holder.once('connect', resolve));
    holder.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    try {
      server.child.kill('SIGINT');
      while (!server.stdout().includes('"server.stopping"')) await new Promise((r) => setTimeout(r, 20));
      // The one clock wait: a person's second Ctrl-C, after the window for copies of the first.
      await new Promise((r) => setTimeout(r, DUPLICATE_SIGNAL_WINDOW_MS + 300));
      expect(server.child.exitCode).toBeNull();
      server.child.kill('SIGINT');
      expect(await server.exited).toBe(1);
    } finally {
      holder.destroy();
    }
    const forced = jsonLines(server.stdout()).find((l) => l['event'] === 'server.forced_exit');
    expect(String(forced?.['msg'])).toContain('SIGINT again during shutdown: exiting now');
    expect(jsonLines(server.stdout()).some((l) => l['event'] === 'server.stopped')).toBe(false);
  });
});

describe('oxijobs configuration errors', () => {
  it.each([
    [{ OXICLOUD_HTTP_PORT: 'eighty' }, 'OXICLOUD_HTTP_PORT="eighty": must be an integer from 1 to 65535'],
    [{ OXICLOUD_ENV: 'production' }, 'OXIJOBS_JWT_SECRET (unset): required when OXICLOUD_ENV=production'],
    [
      { OXICLOUD_ENV: 'production', OXICLOUD_JWT_SECRET: 'o'.repeat(40) },
      "OXICLOUD_JWT_SECRET is set, but it is OxiCloud's session secret, which the engine never signs or verifies with",
    ],
    [
      { OXICLOUD_SERVER_PORT: '18086', OXICLOUD_HTTP_PORT: '18086' },
      'OXICLOUD_HTTP_PORT="18086" is OxiCloud\'s own HTTP port (OXICLOUD_SERVER_PORT="18086")',
    ],
    [{ OXICLOUD_STORAGE_BACKEND: 'tape' }, 'OXICLOUD_STORAGE_BACKEND="tape": must be one of local, s3'],
    [{ OXICLOUD_STORAGE_BACKEND: 's3' }, 'OXICLOUD_S3_BUCKET is required'],
    [{ OXICLOUD_TRASH_RETENTION_DAYS: '-3' }, 'OXICLOUD_TRASH_RETENTION_DAYS'],
  ])('serve with %o exits non-zero naming the variable, without a stack trace', async (vars, expected) => {
    const parent = join(tmpdir(), `oxijobs-config-${process.pid}`);
    mkdirSync(parent, { recursive: true });
    chmodSync(parent, 0o755);
    const result = await runCli(
      ['serve'],
      cleanEnv({
        ...vars,
        OXICLOUD_DATA_DIR: join(parent, 'data'),
        DATABASE_URL: 'postgres://127.0.0.1:1/none',
      }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('oxijobs: invalid configuration');
    expect(result.stderr).toContain(expected);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stdout).toBe('');
  });

  it('lists the environment variables in serve --help and --help', async () => {
    for (const args of [['--help'], ['serve', '--help']]) {
      const result = await runCli(args, cleanEnv({}));
      expect(result.code).toBe(0);
      for (const name of ['DATABASE_URL', 'OXICLOUD_DATA_DIR', 'OXICLOUD_HTTP_PORT', 'OXIJOBS_JWT_SECRET']) {
        expect(result.stdout).toContain(name);
      }
    }
  });
});
