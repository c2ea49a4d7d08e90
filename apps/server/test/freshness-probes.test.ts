import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForStatus } from './cli-process.js';
import {
  adminToken,
  type CliProcess,
  freePort,
  killHard,
  scratchDir,
  serverEnv,
  sleep,
  startServer,
} from './fault-support.js';
import { type SmtpListener, startSmtpListener } from './smtp-listener.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';
import { waitUntil } from './wait-until.js';

const JOB = 'storage_reconcile';

/**
 * Issue 20: storage_reconcile ticks every 2 s and fails (its table is
 * renamed away). Within 1.5 × 2 s of its registration it is overdue in the
 * API, and a real SMTP listener receives exactly one `job_overdue` mail
 * however long it stays overdue; a successful run clears it. /readyz: 503
 * naming the database while Postgres is away, naming the migrations when
 * one is missing, 200 otherwise; /livez always answers.
 */
describe('overdue jobs and readiness, on a real server', () => {
  let db: TestDatabase;
  let smtp: SmtpListener;
  let proxy: TcpProxy;
  let dir: ReturnType<typeof scratchDir>;
  let server: CliProcess;
  let base: string;

  const overdueMails = () => smtp.subjects.filter((s) => s === `[OxiCloud] Job ${JOB} is overdue`);
  const listing = async () => {
    const res = await fetch(`${base}/api/admin/jobs`, {
      headers: { authorization: `Bearer ${await adminToken(db.pool, { username: 'ops' })}` },
    });
    expect(res.status).toBe(200);
    const jobs = (await res.json()) as Array<{ name: string; overdue: Record<string, unknown> | null }>;
    return jobs.find((j) => j.name === JOB);
  };

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    smtp = await startSmtpListener();
    await db.pool.query(
      `INSERT INTO auth.users (username, email, role) VALUES ('ops', 'ops@example.org', 'admin')`,
    );
    // A failing handler: the table storage_reconcile updates is not there.
    await db.pool.query('ALTER TABLE storage.drives RENAME TO drives_away');
    const url = new URL(db.url);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) });
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    dir = scratchDir('freshness');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = await startServer(
      serverEnv({
        databaseUrl: url.toString(),
        dataDir: dir.path,
        httpPort: port,
        extra: {
          OXICLOUD_METRICS_ADDR: '',
          OXICLOUD_STORAGE_USAGE_RECONCILE_INTERVAL_SECONDS: '2',
          OXICLOUD_FRESHNESS_CHECK_INTERVAL_SECONDS: '1',
          OXICLOUD_SMTP_HOST: '127.0.0.1',
          OXICLOUD_SMTP_PORT: String(smtp.port),
          OXICLOUD_SMTP_TLS: 'none',
          OXICLOUD_SMTP_FROM: 'OxiCloud <alerts@example.org>',
        },
      }),
    );
  }, 120_000);

  afterAll(async () => {
    if (server) await killHard(server);
    await proxy?.close();
    await smtp?.close();
    await db?.drop();
    dir?.remove();
  });

  it('a failing 2 s job turns overdue in the API, is mailed once, and a success clears it', async () => {
    const overdue = await waitUntil(
      'the job to be overdue in the API',
      async () => (await listing())?.overdue ?? undefined,
    );
    expect(overdue).toMatchObject({ deep: false, max_age_ms: 2000, last_success_at: null });
    const { rows } = await db.pool.query<{ first_registered_at: Date; last_run_at: Date | null }>(
      'SELECT first_registered_at, last_run_at FROM jobs.job_registrations WHERE job_name = $1',
      [JOB],
    );
    expect(Date.parse(String(overdue['overdue_since']))).toBe(
      (rows[0]?.first_registered_at.getTime() ?? 0) + 3000,
    );
    await waitUntil('the job_overdue mail', async () => (overdueMails().length > 0 ? true : undefined));
    // Still failing, still overdue, several checks later: no second mail.
    await sleep(5_000);
    expect((await listing())?.overdue).not.toBeNull();
    expect(overdueMails()).toHaveLength(1);
    expect(smtp.subjects.filter((s) => s === `[OxiCloud] Job ${JOB} failed`)).toHaveLength(1);

    // The table is back: the next tick succeeds and the job is fresh again.
    await db.pool.query('ALTER TABLE storage.drives_away RENAME TO drives');
    await waitUntil('the job to be fresh', async () =>
      (await listing())?.overdue === null ? true : undefined,
    );
    const { rows: after } = await db.pool.query<{
      last_success_at: Date | null;
      overdue_alerted_at: Date | null;
    }>('SELECT last_success_at, overdue_alerted_at FROM jobs.job_registrations WHERE job_name = $1', [JOB]);
    expect(after[0]?.last_success_at).not.toBeNull();
    expect(after[0]?.overdue_alerted_at).toBeNull();
    expect(overdueMails()).toHaveLength(1);
  });

  it('/readyz names the failing part: the database while it is away, a pending migration; /livez answers', async () => {
    expect(await waitForStatus(`${base}/readyz`, 200, { process: server })).toMatchObject({
      status: 'ready',
      failing: [],
      migrations: { ok: true, pending: [] },
    });

    const { rows } = await db.pool.query<{ name: string; checksum: string }>(
      `SELECT name, checksum FROM public.oxicloud_migrations WHERE name = '0010_job_registrations.sql'`,
    );
    await db.pool.query(`DELETE FROM public.oxicloud_migrations WHERE name = '0010_job_registrations.sql'`);
    const pending = (await waitForStatus(`${base}/readyz`, 503, { process: server })) as Record<
      string,
      unknown
    >;
    expect(pending).toMatchObject({
      status: 'not_ready',
      failing: ['schema', 'migrations'],
      migrations: { ok: false, pending: ['0010_job_registrations.sql'] },
    });
    await db.pool.query('INSERT INTO public.oxicloud_migrations (name, checksum) VALUES ($1, $2)', [
      rows[0]?.name,
      rows[0]?.checksum,
    ]);
    await waitForStatus(`${base}/readyz`, 200, { process: server });

    await proxy.down();
    const down = (await waitForStatus(`${base}/readyz`, 503, { process: server, timeoutMs: 10_000 })) as {
      failing: string[];
      database: { ok: boolean; error: string };
    };
    expect(down.failing).toEqual(['database', 'schema', 'migrations']);
    expect(down.database.ok).toBe(false);
    expect(down.database.error).not.toMatch(/127\.0\.0\.1|:\d{4,5}\b/);
    const live = await fetch(`${base}/livez`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok' });
    // /healthz keeps its contract.
    await waitForStatus(`${base}/healthz`, 503, { process: server });
    await proxy.up();
    expect(await waitForStatus(`${base}/readyz`, 200, { process: server, timeoutMs: 20_000 })).toMatchObject({
      status: 'ready',
      database: { ok: true },
    });
    expect(server.child.exitCode).toBeNull();
  });
});
