import { mkdirSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, cleanEnv, jsonLines, runCli, startCli, waitForStatus } from './cli-process.js';

interface Mail {
  readonly rcptTo: string[];
  readonly raw: string;
}

/** A real SMTP listener (no TLS, AUTH optional) that keeps what it receives. */
async function startSmtp(): Promise<{ port: number; mails: Mail[]; close(): Promise<void> }> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          rcptTo: session.envelope.rcptTo.map((a) => a.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.server.address() as AddressInfo).port,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The quoted-printable body of a mail, decoded enough to search. */
function text(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
}

async function waitFor<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Issue 6's "done when", end to end: the composed server pointed at a real
 * SMTP server mails each admin (and nobody else) when a job fails, and when a
 * consistency run records findings. The admins are the OxiCloud dataset's
 * own (`auth.users` with role admin; the seed brings them, so the server
 * creates no `admin`), the other seeded users are not mailed.
 */
describe('alert mails from the composed server', () => {
  let db: TestDatabase;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let dataDir: string;
  let env: Record<string, string>;
  let server: CliProcess;
  let base: string;
  let token: string;
  /** The addresses of the seeded admins: every recipient. */
  let admins: string[];

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    smtp = await startSmtp();
    dataDir = join(tmpdir(), `oxijobs-alerts-${process.pid}-${smtp.port}`);
    mkdirSync(dataDir, { recursive: true });
    const httpPort = await freePort();
    const closedPort = await freePort();
    base = `http://127.0.0.1:${httpPort}`;
    env = cleanEnv({
      DATABASE_URL: db.url,
      OXICLOUD_DATA_DIR: dataDir,
      OXICLOUD_HTTP_PORT: String(httpPort),
      OXICLOUD_PUBLIC_BASE_URL: 'https://cloud.example.org',
      OXICLOUD_SMTP_HOST: '127.0.0.1',
      OXICLOUD_SMTP_PORT: String(smtp.port),
      OXICLOUD_SMTP_TLS: 'none',
      OXICLOUD_SMTP_FROM: 'OxiCloud <alerts@example.org>',
      // S3 as a migration target that does not answer: a storage_migration to it fails.
      OXICLOUD_S3_BUCKET: 'unreachable',
      OXICLOUD_S3_REGION: 'us-east-1',
      OXICLOUD_S3_ENDPOINT_URL: `http://127.0.0.1:${closedPort}`,
      OXICLOUD_S3_ACCESS_KEY: 'test',
      OXICLOUD_S3_SECRET_KEY: 'test-secret',
      OXICLOUD_S3_FORCE_PATH_STYLE: 'true',
    });
    const seeded = await runCli(
      ['seed', '--users', '4', '--files-per-user', '20', '--faults', 'missing_blob_row'],
      env,
    );
    expect(seeded.code, seeded.stderr).toBe(0);
    server = startCli(['serve'], env);
    await waitForStatus(`${base}/healthz`, 200, { process: server, timeoutMs: 60_000 });
    admins = (
      await db.pool.query<{ email: string }>(
        "SELECT email FROM auth.users WHERE role = 'admin' AND active AND NOT is_external ORDER BY email",
      )
    ).rows.map((r) => r.email);
    expect(admins.length).toBeGreaterThan(0);
    // Users who are not admins are in the data too, and are not mailed.
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM auth.users WHERE role = 'user'");
    expect(rows[0]?.['n']).toBeGreaterThan(0);
    const minted = await runCli(['token', '--user', admins[0]!], env);
    token = minted.stdout.trim().split('\n').at(-1)!;
  });

  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await smtp?.close();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a failed run mails every admin once, with what the plan lists, and nobody else', async () => {
    const trigger = await api('POST', '/api/admin/jobs/storage_migration/trigger', { target: 's3' });
    expect(trigger.status).toBe(202);
    const runId = String(trigger.body['run_id']);
    const run = await waitFor('the run to fail', async () => {
      const r = await api('GET', `/api/admin/jobs/storage_migration/runs/${runId}`);
      return r.body['status'] === 'Failed' ? r.body : undefined;
    });
    const mail = await waitFor('the job_failed mail', () =>
      smtp.mails.find((m) => m.raw.includes('Job storage_migration failed')),
    );
    expect(mail.rcptTo.sort()).toEqual(admins);
    const body = text(mail.raw);
    expect(body).toMatch(/Subject: \[OxiCloud\] Job storage_migration failed/);
    expect(body).toContain(runId);
    expect(body).toContain('handler');
    expect(body).toContain(String(run['error_message']).slice(0, 40));
    expect(body).toContain('https://cloud.example.org/admin/jobs?highlight=storage_migration');

    // A second failure within 6 h sends no second mail.
    await api('POST', '/api/admin/jobs/storage_migration/trigger', { target: 's3' });
    await waitFor('the second run to fail', async () => {
      const r = await api('GET', '/api/admin/jobs/storage_migration/runs');
      const runs = r.body as unknown as Array<{ status: string }>;
      return runs.length === 2 && runs.every((x) => x.status === 'Failed') ? true : undefined;
    });
    await new Promise((r) => setTimeout(r, 1000));
    expect(smtp.mails.filter((m) => m.raw.includes('Job storage_migration failed'))).toHaveLength(1);
  });

  it('a consistency run with findings mails the grouped counts and a link to the run', async () => {
    const trigger = await api('POST', '/api/admin/jobs/files_consistency/trigger?force=true');
    expect(trigger.status).toBe(202);
    const runId = String(trigger.body['run_id']);
    const mail = await waitFor('the consistency_findings mail', () =>
      smtp.mails.find((m) => m.raw.includes(runId) && /files_consistency/.test(m.raw)),
    );
    const body = text(mail.raw);
    expect(mail.rcptTo.sort()).toEqual(admins);
    expect(body).toContain('missing_blob');
    expect(body).toContain('DataLoss');
    expect(body).toContain(`https://cloud.example.org/admin/jobs/files_consistency/runs/${runId}`);
  });

  it('logs no warning about mail while SMTP works', () => {
    const warnings = jsonLines(server.stdout()).filter(
      (l) => l['target'] === 'oxicloud::alerts' && l['level'] !== 'info',
    );
    expect(warnings).toEqual([]);
  });
});
