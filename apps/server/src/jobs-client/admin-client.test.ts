import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { type AdminUserRecord, createAdminApp, type PeriodicJobs, signAdminToken } from '@oxicloud/admin-api';
import type { Logger } from '@oxicloud/scheduler';
import { freePort } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from './admin-client.js';
import type { CliIo } from './cli-io.js';
import { sleep } from './cli-io.js';
import { listCommand, triggerCommand } from './commands.js';
import { JobsClientError } from './jobs-client-error.js';

const NEXT_RUN_AT = new Date(Date.now() + 600_000).toISOString();
const SECRET = 'jobs-client-test-secret-at-least-32-bytes!';
const silent: Logger = { info() {}, warn() {}, error() {}, debug() {} };
const admin: AdminUserRecord = {
  id: '00000000-0000-7000-8000-000000000001',
  username: 'admin',
  role: 'admin',
};

/** The PeriodicJobs port: one ok job, one failing job. */
const periodic: PeriodicJobs = {
  list: () => [
    {
      name: 'trash_cleanup',
      interval_ms: 3_600_000,
      timeout_ms: null,
      next_run_at: NEXT_RUN_AT,
      running: false,
      running_since: null,
      last_outcome: null,
    },
    {
      name: 'failing_job',
      interval_ms: null,
      timeout_ms: null,
      next_run_at: null,
      running: false,
      last_outcome: null,
    },
  ],
  async trigger(name, args) {
    if (name === 'trash_cleanup') return { kind: 'ok', count: 4, extra: { forced: args.force } };
    if (name === 'failing_job') return { kind: 'err', message: 'the disk is full' };
    return undefined;
  },
};

function captureIo(): CliIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: {
      write: (t: string) => {
        out += t;
      },
    },
    stderr: {
      write: (t: string) => {
        err += t;
      },
    },
    now: () => Date.now(),
    sleep,
    out: () => out,
    err: () => err,
  };
}

async function rejection(promise: Promise<unknown>): Promise<JobsClientError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(JobsClientError);
    return error as JobsClientError;
  }
  throw new Error('expected a rejection');
}

/** The client against the real admin app (`createAdminApp`) on a real port. */
describe('AdminClient over HTTP', () => {
  let server: ReturnType<typeof serve>;
  let baseUrl: string;
  let token: string;

  beforeAll(async () => {
    const app = createAdminApp({
      jobs: periodic,
      health: { database: async () => ({ ok: true, latencyMs: 1 }) },
      users: { findById: async (id) => (id === admin.id ? admin : null) },
      jwtSecret: SECRET,
      logger: silent,
    });
    const port = await freePort();
    server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    baseUrl = `http://127.0.0.1:${port}`;
    token = await signAdminToken({ secret: SECRET, user: admin, expiresInSeconds: 600 });
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('lists the jobs; --json prints exactly the API document', async () => {
    const client = new AdminClient({ baseUrl, token });
    const { status, body, raw } = await client.listJobs();
    expect(status).toBe(200);
    expect(body.map((j) => j.name)).toEqual(['trash_cleanup', 'failing_job']);
    const io = captureIo();
    expect(await listCommand({ client, io, json: true })).toBe(0);
    expect(io.out()).toBe(`${raw}\n`);
    expect(JSON.parse(io.out())).toEqual(body);
    const table = captureIo();
    expect(await listCommand({ client, io: table, json: false })).toBe(0);
    expect(table.out()).toMatch(/^NAME\s+KIND\s+SCHEDULE/);
    expect(table.out()).toMatch(/trash_cleanup\s+periodic\s+every 1h\s+idle\s+in (9|10)m\s+never/);
  });

  it('triggers a periodic job: its outcome, exit 0 for ok and 1 for err', async () => {
    const client = new AdminClient({ baseUrl, token });
    const ok = captureIo();
    expect(
      await triggerCommand({ client, io: ok, json: false }, 'trash_cleanup', {
        force: true,
        followOptions: { intervalMs: 10, tty: false },
      }),
    ).toBe(0);
    expect(ok.out()).toBe('trash_cleanup: ok, count 4 {"forced":true}\n');
    const err = captureIo();
    expect(
      await triggerCommand({ client, io: err, json: true }, 'failing_job', {
        followOptions: { intervalMs: 10, tty: false },
      }),
    ).toBe(1);
    expect(JSON.parse(err.out())).toEqual({
      ok: false,
      outcome: { kind: 'err', message: 'the disk is full' },
    });
  });

  it('turns the error envelope into one line with the code', async () => {
    const client = new AdminClient({ baseUrl, token });
    const unknown = await rejection(client.trigger('nope'));
    expect(unknown.code).toBe('API_ERROR');
    expect(unknown.status).toBe(404);
    expect(unknown.message).toMatch(/^JOB_NOT_FOUND: no job named .nope./);
    expect(unknown.message).not.toContain('\n');
    expect(unknown.exitCode).toBe(1);
    const anonymous = await rejection(new AdminClient({ baseUrl, token: 'not-a-token' }).listJobs());
    expect(anonymous.apiCode).toBe('UNAUTHENTICATED');
    expect(anonymous.message).toMatch(
      /^UNAUTHENTICATED: .*; mint a fresh token with `oxijobs token --user admin`$/,
    );
  });

  it('says the server is not reachable at the URL when the connection is refused', async () => {
    const port = await freePort();
    const error = await rejection(new AdminClient({ baseUrl: `http://127.0.0.1:${port}`, token }).listJobs());
    expect(error.code).toBe('UNREACHABLE');
    expect(error.message).toBe(
      `the server is not reachable at http://127.0.0.1:${port} (connection refused); is \`oxijobs serve\` running? set --url or OXICLOUD_ADMIN_URL`,
    );
  });
});

describe('AdminClient against misbehaving servers', () => {
  let server: Server;
  let baseUrl: string;
  /** The Authorization headers the servers here received. */
  const authorizations: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.headers.authorization) authorizations.push(req.headers.authorization);
      if (req.url?.startsWith('/slow')) return; // never answers
      if (req.url?.startsWith('/other/')) {
        // Something else at the URL (OxiCloud itself, a proxy's page): its own health answer.
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","version":"0.5"}');
        return;
      }
      if (req.url?.endsWith('/healthz')) {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"service":"oxijobs","status":"ok","database":{"ok":true,"latency_ms":1}}');
        return;
      }
      if (req.url?.startsWith('/html')) {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>');
        return;
      }
      res.writeHead(502, { 'content-type': 'text/plain' }).end('Bad Gateway');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('times out with a clear message', async () => {
    const started = Date.now();
    const error = await rejection(
      new AdminClient({ baseUrl: `${baseUrl}/slow`, token: 't', timeoutMs: 300 }).listJobs(),
    );
    expect(error.code).toBe('TIMEOUT');
    expect(error.message).toBe(
      `the server at ${baseUrl}/slow did not answer within 0.3s (raise it with --timeout)`,
    );
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('reports an answer that is not the API (not JSON, or an error without the envelope)', async () => {
    const html = await rejection(new AdminClient({ baseUrl: `${baseUrl}/html`, token: 't' }).listJobs());
    expect(html.code).toBe('BAD_RESPONSE');
    expect(html.message).toMatch(
      /^HTTP 200 from GET .* is not JSON: <html>hello<\/html>; is --url the oxijobs server\?$/,
    );
    const gateway = await rejection(new AdminClient({ baseUrl, token: 't' }).listJobs());
    expect(gateway.code).toBe('BAD_RESPONSE');
    expect(gateway.message).toMatch(/^HTTP 502 from GET .* is not JSON: Bad Gateway/);
  });

  it('never sends its token to a server that does not say it is oxijobs (GET /healthz)', async () => {
    authorizations.length = 0;
    const other = await rejection(
      new AdminClient({ baseUrl: `${baseUrl}/other`, token: 'secret-token' }).trigger('trash_cleanup'),
    );
    expect(other.code).toBe('NOT_THE_ENGINE');
    expect(other.message).toBe(
      `${baseUrl}/other is not the oxijobs server (GET /healthz answered HTTP 200 without "service": "oxijobs"), ` +
        'so the admin token was not sent; check --url or OXICLOUD_ADMIN_URL (OxiCloud itself listens on 8086)',
    );
    expect(authorizations).toEqual([]);
  });
});
