import type { AddressInfo } from 'node:net';
import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, cleanEnv, jsonLines, runCli, startCli, waitForStatus } from './cli-process.js';
import { scratchDir } from './fault-support.js';

interface Mail {
  readonly rcptTo: string[];
  readonly raw: string;
}

interface Listener {
  readonly port: number;
  readonly mails: Mail[];
  close(): Promise<void>;
}

/**
 * A real SMTP listener on 127.0.0.1. `plain`: no STARTTLS offered (a local
 * sink or a port-25 relay); `tls-required`: offers STARTTLS (smtp-server's
 * built-in certificate) and refuses MAIL FROM before it (530).
 */
async function startListener(kind: 'plain' | 'tls-required'): Promise<Listener> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    logger: false,
    ...(kind === 'plain' ? { disabledCommands: ['STARTTLS'] } : {}),
    onMailFrom(_address, session, callback) {
      if (kind === 'tls-required' && !session.secure) {
        callback(Object.assign(new Error('Must issue a STARTTLS command first'), { responseCode: 530 }));
        return;
      }
      callback();
    },
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

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function smtpEnv(port: number, secure?: string): Record<string, string> {
  return {
    OXICLOUD_SMTP_HOST: '127.0.0.1',
    OXICLOUD_SMTP_PORT: String(port),
    OXICLOUD_SMTP_FROM: 'OxiCloud <alerts@example.org>',
    ...(secure === undefined ? {} : { OXICLOUD_SMTP_TLS: secure }),
  };
}

/** S3 as a migration target that does not answer: a storage_migration to it fails. */
async function unreachableS3(): Promise<Record<string, string>> {
  return {
    OXICLOUD_S3_BUCKET: 'unreachable',
    OXICLOUD_S3_REGION: 'us-east-1',
    OXICLOUD_S3_ENDPOINT_URL: `http://127.0.0.1:${await freePort()}`,
    OXICLOUD_S3_ACCESS_KEY: 'test',
    OXICLOUD_S3_SECRET_KEY: 'test-secret',
    OXICLOUD_S3_FORCE_PATH_STYLE: 'true',
  };
}

/** The seeded admins' addresses (OxiCloud's auth.users: the dataset brings its own admins), sorted. */
async function seededAdmins(db: TestDatabase): Promise<string[]> {
  const { rows } = await db.pool.query<{ email: string }>(
    "SELECT email FROM auth.users WHERE role = 'admin' AND username IS DISTINCT FROM 'admin' ORDER BY email",
  );
  return rows.map((r) => r.email);
}

/**
 * Boots `oxijobs serve` on an empty database (it creates `admin`, no admin
 * existing yet), seeds a small OxiCloud dataset (with admins of its own;
 * `afterSeed` may change them), makes storage_migration fail, and returns
 * the server (still running).
 */
async function serveAndFailAJob(
  env: Record<string, string>,
  base: string,
  afterSeed: () => Promise<void> = async () => undefined,
): Promise<CliProcess> {
  const server = startCli(['serve'], env);
  await waitForStatus(`${base}/healthz`, 200, { process: server, timeoutMs: 60_000 });
  const seeded = await runCli(['seed', '--users', '2', '--files-per-user', '5'], env);
  expect(seeded.code, seeded.stderr).toBe(0);
  await afterSeed();
  const token = (await runCli(['token', '--user', 'admin'], env)).stdout.trim().split('\n').at(-1)!;
  const res = await fetch(`${base}/api/admin/jobs/storage_migration/trigger`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ target: 's3' }),
  });
  expect(res.status).toBe(202);
  const { run_id } = (await res.json()) as { run_id: string };
  await waitFor('the run to fail', async () => {
    const r = await fetch(`${base}/api/admin/jobs/storage_migration/runs/${run_id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return ((await r.json()) as { status: string }).status === 'Failed' ? true : undefined;
  });
  return server;
}

describe('OXICLOUD_ADMIN_EMAIL at the first boot', () => {
  let db: TestDatabase;
  let smtp: Listener;
  let server: CliProcess | undefined;
  const dir = scratchDir('admin-email');

  beforeAll(async () => {
    db = await createTestDatabase();
    smtp = await startListener('plain');
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await smtp?.close();
    await db?.drop();
    dir.remove();
  });

  let base: string;
  let env: Record<string, string>;

  it('gives the first admin its address, so a failed job mails it', async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = cleanEnv({
      DATABASE_URL: db.url,
      OXICLOUD_DATA_DIR: dir.path,
      OXICLOUD_HTTP_PORT: String(port),
      OXICLOUD_ADMIN_EMAIL: 'ops@example.org',
      ...smtpEnv(smtp.port, 'none'),
      ...(await unreachableS3()),
    });
    server = await serveAndFailAJob(env, base);
    const mail = await waitFor('the job_failed mail', () =>
      smtp.mails.find((m) => m.raw.includes('Job storage_migration failed')),
    );
    // Every admin with an address: the first admin, and the dataset's own admins seeded after the boot.
    const seeded = await seededAdmins(db);
    expect(seeded.length).toBeGreaterThan(0);
    expect(mail.rcptTo.sort()).toEqual(['ops@example.org', ...seeded].sort());
    const { rows } = await db.pool.query(`SELECT email FROM auth.users WHERE username = 'admin'`);
    expect(rows).toEqual([{ email: 'ops@example.org' }]);
    const lines = jsonLines(server.stdout());
    expect(lines.filter((l) => String(l['event']).endsWith('no_recipients'))).toEqual([]);
    // The one boot line: alerts on, the SMTP host and port, how many admins have an address.
    const boot = lines.filter((l) => l['event'] === 'alerts.on' || l['event'] === 'alerts.off');
    expect(boot).toHaveLength(1);
    // At the boot, before the seed, "admin" was the only admin.
    expect(boot[0]).toMatchObject({
      level: 'info',
      event: 'alerts.on',
      smtp_host: '127.0.0.1',
      smtp_port: smtp.port,
      admin_recipients: 1,
    });
    expect(boot[0]?.['msg']).toBe(
      `alerts on: SMTP 127.0.0.1:${smtp.port} (OXICLOUD_SMTP_TLS=none), 1 admin with an e-mail address`,
    );
  });

  it('alerts test says the server it talks to has alerts on', async () => {
    const result = await runCli(['alerts', 'test', '--url', base], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      `the server at ${base} has alerts on (SMTP 127.0.0.1:${smtp.port} (OXICLOUD_SMTP_TLS=none), `,
    );
    expect(result.stdout).toMatch(/sent to [^\n]*ops@example\.org/);
    for (const address of await seededAdmins(db)) expect(result.stdout).toContain(address);
  });
});

describe('SMTP set up but no admin has an address', () => {
  let db: TestDatabase;
  let smtp: Listener;
  let server: CliProcess | undefined;
  const dir = scratchDir('no-recipients');

  beforeAll(async () => {
    db = await createTestDatabase();
    smtp = await startListener('plain');
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await smtp?.close();
    await db?.drop();
    dir.remove();
  });

  it('warns at boot, and logs each skipped alert', async () => {
    const port = await freePort();
    const env = cleanEnv({
      DATABASE_URL: db.url,
      OXICLOUD_DATA_DIR: dir.path,
      OXICLOUD_HTTP_PORT: String(port),
      ...smtpEnv(smtp.port, 'none'),
      ...(await unreachableS3()),
    });
    // The first admin has OxiCloud's placeholder address (never mailed); the seeded admins are made users.
    server = await serveAndFailAJob(env, `http://127.0.0.1:${port}`, async () => {
      await db.pool.query("UPDATE auth.users SET role = 'user' WHERE role = 'admin' AND username <> 'admin'");
    });
    const skipped = await waitFor('the skipped-alert line', () =>
      jsonLines(server!.stdout()).find((l) => l['event'] === 'alert.no_recipients'),
    );
    expect(skipped).toMatchObject({ level: 'warn', job: 'storage_migration', kind: 'job_failed' });
    const boot = jsonLines(server.stdout()).find((l) => l['event'] === 'alerts.on');
    expect(boot).toMatchObject({ level: 'warn', smtp_port: smtp.port, admin_recipients: 0 });
    expect(String(boot?.['msg'])).toContain('no admin has an e-mail address, so none is sent');
    expect(String(boot?.['msg'])).toContain('oxijobs users set-email admin');
    expect(smtp.mails).toEqual([]);
  });
});

describe('addresses and the test alert from the command line, beside a server without SMTP', () => {
  let db: TestDatabase;
  let plain: Listener;
  let tlsRequired: Listener;
  const dir = scratchDir('alerts-cli');
  let base: Record<string, string>;
  let server: CliProcess | undefined;
  let serverUrl: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    plain = await startListener('plain');
    tlsRequired = await startListener('tls-required');
    const port = await freePort();
    serverUrl = `http://127.0.0.1:${port}`;
    base = { DATABASE_URL: db.url, OXICLOUD_DATA_DIR: dir.path, OXICLOUD_ADMIN_URL: serverUrl };
    // What plain `pnpm start` runs: no OXICLOUD_SMTP_* in the server's environment.
    server = startCli(['serve'], cleanEnv({ ...base, OXICLOUD_HTTP_PORT: String(port) }));
    await waitForStatus(`${serverUrl}/healthz`, 200, { process: server, timeoutMs: 60_000 });
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await plain?.close();
    await tlsRequired?.close();
    await db?.drop();
    dir.remove();
  });

  it('the server without SMTP says at boot, in one line, that alerts are off and which variable is missing', () => {
    const boot = jsonLines(server!.stdout()).filter(
      (l) => l['event'] === 'alerts.on' || l['event'] === 'alerts.off',
    );
    expect(boot).toHaveLength(1);
    expect(boot[0]).toMatchObject({ level: 'info', event: 'alerts.off', missing: 'OXICLOUD_SMTP_HOST' });
    expect(String(boot[0]?.['msg'])).toMatch(
      /^alerts off: OXICLOUD_SMTP_HOST is not set, so failed runs and findings are mailed to nobody/,
    );
  });

  it('alerts test says nobody would be mailed while no admin has an address', async () => {
    const result = await runCli(['alerts', 'test'], cleanEnv({ ...base, ...smtpEnv(plain.port, 'none') }));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no admin has an e-mail address');
    expect(result.stderr).toContain('oxijobs users set-email admin');
  });

  it('OXICLOUD_ADMIN_EMAIL at a later boot fills in an empty address and keeps an existing one', async () => {
    // The admin exists (the previous command created it) without an address.
    // `token` logs warnings only unless a level is set: ask for its info lines.
    const first = await runCli(
      ['token', '--user', 'admin'],
      cleanEnv({
        ...base,
        OXICLOUD_ADMIN_EMAIL: 'first@example.org',
        OXICLOUD_LOG_LEVEL: 'info',
      }),
    );
    expect(first.code, first.stderr).toBe(0);
    expect(jsonLines(first.stderr).find((l) => l['event'] === 'admin.email_set')).toMatchObject({
      email: 'first@example.org',
    });
    const second = await runCli(
      ['token', '--user', 'admin'],
      cleanEnv({
        ...base,
        OXICLOUD_ADMIN_EMAIL: 'other@example.org',
        OXICLOUD_LOG_LEVEL: 'info',
      }),
    );
    expect(jsonLines(second.stderr).find((l) => l['event'] === 'admin.email_kept')).toMatchObject({
      email: 'first@example.org',
      ignored: 'other@example.org',
    });
    const { rows } = await db.pool.query(`SELECT email FROM auth.users WHERE username = 'admin'`);
    expect(rows).toEqual([{ email: 'first@example.org' }]);
  });

  it('users set-email changes an address, and refuses an unknown user or an invalid address', async () => {
    const env = cleanEnv({ ...base });
    const ok = await runCli(['users', 'set-email', 'admin', 'ops@example.org'], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('admin: e-mail set to ops@example.org (was first@example.org)');
    const { rows } = await db.pool.query(`SELECT email FROM auth.users WHERE username = 'admin'`);
    expect(rows).toEqual([{ email: 'ops@example.org' }]);

    const unknown = await runCli(['users', 'set-email', 'nobody', 'x@example.org'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no user named "nobody"');
    const invalid = await runCli(['users', 'set-email', 'admin', 'not-an-address'], env);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('"not-an-address" is not an e-mail address');
  });

  it('alerts test prints what the SMTP server answered, and the mail arrives', async () => {
    const result = await runCli(['alerts', 'test'], cleanEnv({ ...base, ...smtpEnv(plain.port, 'none') }));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/sent to ops@example\.org .*the server answered: 250 /);
    // SMTP set for this command only: the mail goes, and it says the running server has alerts off.
    expect(result.stdout).toContain(
      `the server at ${serverUrl} has alerts off (OXICLOUD_SMTP_HOST is not set in its environment): it mails nothing`,
    );
    expect(plain.mails.at(-1)?.rcptTo).toEqual(['ops@example.org']);
    expect(plain.mails.at(-1)?.raw).toContain('[OxiCloud] Test alert');
  });

  it('alerts test against a plain relay with the default STARTTLS says to set OXICLOUD_SMTP_TLS=none', async () => {
    const sent = plain.mails.length;
    const result = await runCli(['alerts', 'test'], cleanEnv({ ...base, ...smtpEnv(plain.port) }));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('does not offer STARTTLS');
    expect(result.stderr).toContain('set OXICLOUD_SMTP_TLS=none');
    expect(plain.mails).toHaveLength(sent);
  });

  it('alerts test against a server that requires STARTTLS, with OXICLOUD_SMTP_TLS=none, says TLS is required', async () => {
    const result = await runCli(
      ['alerts', 'test'],
      cleanEnv({ ...base, ...smtpEnv(tlsRequired.port, 'none') }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('requires TLS');
    expect(result.stderr).toContain('OXICLOUD_SMTP_TLS=starttls');
    expect(result.stderr).toContain('530');
    expect(tlsRequired.mails).toEqual([]);
  });

  it('alerts test against a port nobody listens on says the connection was refused', async () => {
    const closed = await freePort();
    const result = await runCli(
      ['alerts', 'test'],
      cleanEnv({
        ...base,
        ...smtpEnv(closed, 'none'),
        OXICLOUD_ADMIN_URL: `http://127.0.0.1:${closed}`,
      }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`connection refused by 127.0.0.1:${closed}`);
    expect(result.stdout).toContain(`no server answered at http://127.0.0.1:${closed} (connection refused)`);
  });
});
