import { createSecretKey, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expectedFaultFindings, generateOxiCloudDataset, OXICLOUD_FAULT_NAMES } from '@oxicloud/dataset';
import { S3BlobStorage } from '@oxicloud/storage';
import {
  createOxiCloudDatabase,
  dumpDatabase,
  freePort,
  readOnlyOxiCloudRole,
  type S3rverProcess,
  startS3rver,
  type TestDatabase,
} from '@oxicloud/test-support';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBlobStorage } from '../src/compose.js';
import { type CliProcess, cleanEnv, jsonLines, runCli, startCli, waitForStatus } from './cli-process.js';
import { scratchDir } from './fault-support.js';
import { smtpEnv, startSmtpListener } from './smtp-listener.js';

/** `KEY=value` lines, as OxiCloud's `.env` holds them (no quotes, no expansion). */
function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (match) out[match[1]!] = match[2]!;
  }
  return out;
}

/**
 * Starts `oxijobs serve` with `env` (its port in `OXICLOUD_HTTP_PORT`), mints a
 * token for `adminEmail`, runs `consistency_batch` with force and deep, and
 * asserts every check completed; the process is returned for the caller to stop.
 */
async function deepBatchBeside(
  env: Record<string, string>,
  adminEmail: string,
): Promise<{ process: CliProcess; checks: string[] }> {
  const base = `http://127.0.0.1:${env['OXICLOUD_HTTP_PORT']}`;
  const process = startCli(['serve'], env);
  await waitForStatus(`${base}/readyz`, 200, { process, timeoutMs: 90_000 });
  const minted = await runCli(['token', '--user', adminEmail], env);
  expect(minted.code, minted.stderr).toBe(0);
  const res = await fetch(`${base}/api/admin/jobs/consistency_batch/trigger?force=true&deep=true`, {
    method: 'POST',
    headers: { authorization: `Bearer ${minted.stdout.trim().split('\n').at(-1)!}` },
  });
  const body = (await res.json()) as {
    ok: boolean;
    outcome: { extra: { completed: number; failed: number; checks: string[] } };
  };
  expect(res.status, JSON.stringify(body)).toBe(200);
  expect(body.outcome.extra.failed, JSON.stringify(body)).toBe(0);
  expect(body.outcome.extra.completed).toBe(body.outcome.extra.checks.length);
  return { process, checks: body.outcome.extra.checks };
}

/**
 * The composed server beside a real OxiCloud: a database as OxiCloud leaves
 * it (its schema and `_sqlx_migrations`, no engine), a store OxiCloud wrote
 * (`.blobs/<aa>/<hash>.blob`, AES-256-GCM at rest), the engine started with
 * OxiCloud's own environment file plus the engine's own secret and port.
 */
describe('oxijobs serve beside OxiCloud (sidecar mode)', () => {
  let db: TestDatabase;
  let dir: { path: string; remove(): void };
  let env: Record<string, string>;
  let server: CliProcess | undefined;
  let base: string;
  let before: string;
  let adminEmail: string;
  const OXICLOUD_JWT_SECRET = randomBytes(32).toString('base64');

  beforeAll(async () => {
    db = await createOxiCloudDatabase({ max: 4 });
    dir = scratchDir('sidecar');
    const storageRoot = join(dir.path, 'oxicloud-storage');
    const key = randomBytes(32);
    const blobs = createBlobStorage({ backend: 'local', root: storageRoot }, { key: createSecretKey(key) });
    // What OxiCloud's uploads left: users, drives, folders, files, chunks, thumbnails.
    await generateOxiCloudDataset({
      pool: db.pool,
      blobs,
      storageRoot,
      options: { seed: 52, users: 4, filesPerDrive: 12 },
    });
    const { rows } = await db.pool.query(
      "SELECT email FROM auth.users WHERE role = 'admin' AND active ORDER BY email LIMIT 1",
    );
    adminEmail = String(rows[0]?.['email']);
    // OxiCloud's environment file, as its operator keeps it.
    const envFile = join(dir.path, 'oxicloud.env');
    writeFileSync(
      envFile,
      [
        `OXICLOUD_DB_CONNECTION_STRING=${db.url}`,
        `OXICLOUD_STORAGE_PATH=${storageRoot}`,
        'OXICLOUD_STORAGE_ENCRYPTION_ENABLED=true',
        `OXICLOUD_STORAGE_ENCRYPTION_KEY=${key.toString('base64')}`,
        `OXICLOUD_JWT_SECRET=${OXICLOUD_JWT_SECRET}`,
        'OXICLOUD_SERVER_PORT=8086',
        'OXICLOUD_ENABLE_TRASH=true',
        'OXICLOUD_GRANT_CLEANUP_ENABLED=true',
        '',
      ].join('\n'),
    );
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = cleanEnv({
      ...parseEnvFile(await import('node:fs').then((fs) => fs.readFileSync(envFile, 'utf8'))),
      OXIJOBS_JWT_SECRET: randomBytes(32).toString('base64'),
      OXICLOUD_HTTP_PORT: String(port),
      OXICLOUD_DATA_DIR: join(dir.path, 'engine-data'),
      OXICLOUD_LOG_FORMAT: 'json',
      OXICLOUD_METRICS_ADDR: '',
    });
    before = await dumpDatabase(db.pool);
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await db?.drop();
    dir?.remove();
  });

  /**
   * A second engine on the same OxiCloud database, in a schema of its own
   * (`schema`), with `extra` over the main server's environment: started,
   * ready, and a token of an OxiCloud admin minted for it.
   */
  async function secondServer(
    schema: string,
    extra: Record<string, string>,
  ): Promise<{ base: string; env: Record<string, string>; process: CliProcess; token: string }> {
    const port = await freePort();
    const secondEnv = {
      ...env,
      ...extra,
      OXIJOBS_SCHEMA: schema,
      OXICLOUD_HTTP_PORT: String(port),
      OXICLOUD_DATA_DIR: join(dir.path, `engine-data-${schema}`),
    };
    const started = startCli(['serve'], secondEnv);
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitForStatus(`${base}/readyz`, 200, { process: started, timeoutMs: 90_000 });
      const minted = await runCli(['token', '--user', adminEmail], secondEnv);
      expect(minted.code, minted.stderr).toBe(0);
      return { base, env: secondEnv, process: started, token: minted.stdout.trim().split('\n').at(-1)! };
    } catch (error) {
      started.child.kill('SIGKILL');
      throw error;
    }
  }

  it("boots in sidecar mode: only the engine's schema oxijobs is created, write jobs off, checks on", async () => {
    server = startCli(['serve'], env);
    await waitForStatus(`${base}/readyz`, 200, { process: server, timeoutMs: 90_000 });
    const lines = jsonLines(server.stdout());
    expect(lines.find((l) => l['event'] === 'database.sidecar')).toMatchObject({ engine_schema: 'oxijobs' });
    expect(lines.find((l) => l['event'] === 'sidecar.write_jobs_off')?.['jobs']).toEqual(
      expect.arrayContaining(['trash_cleanup', 'dedup_gc', 'storage_reconcile', 'grant_cleanup']),
    );
    expect(lines.find((l) => l['event'] === 'admin.created')).toBeUndefined();
    expect(await dumpDatabase(db.pool, { excludeSchemas: ['oxijobs'] })).toBe(before);
  });

  it("a token for one of OxiCloud's admins (named by its e-mail address) works; a trigger of a write job says how to switch it on", async () => {
    const minted = await runCli(['token', '--user', adminEmail], env);
    expect(minted.code, minted.stderr).toBe(0);
    const token = minted.stdout.trim().split('\n').at(-1)!;
    const headers = { authorization: `Bearer ${token}` };
    const list = await fetch(`${base}/api/admin/jobs`, { headers });
    expect(list.status).toBe(200);
    const names = ((await list.json()) as Array<{ name: string }>).map((j) => j.name);
    expect(names).toContain('consistency_batch');
    expect(names).not.toContain('trash_cleanup');
    const trash = await fetch(`${base}/api/admin/jobs/trash_cleanup/trigger`, { method: 'POST', headers });
    expect(trash.status).toBe(404);
    expect(await trash.text()).toContain('OXIJOBS_WRITE_JOBS=trash_cleanup');
  });

  it('an OxiCloud session token (signed with OXICLOUD_JWT_SECRET) is refused', async () => {
    const { rows } = await db.pool.query('SELECT id::text AS id FROM auth.users WHERE email = $1', [
      adminEmail,
    ]);
    const session = await new SignJWT({ email: adminEmail, role: 'admin' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(String(rows[0]?.['id']))
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(OXICLOUD_JWT_SECRET));
    const res = await fetch(`${base}/api/admin/jobs`, { headers: { authorization: `Bearer ${session}` } });
    expect(res.status).toBe(401);
  });

  it('a full consistency_batch with deep=true finds nothing on clean data, and changes nothing of OxiCloud', async () => {
    const minted = await runCli(['token', '--user', adminEmail], env);
    const token = minted.stdout.trim().split('\n').at(-1)!;
    const res = await fetch(`${base}/api/admin/jobs/consistency_batch/trigger?force=true&deep=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    const body = (await res.json()) as {
      ok: boolean;
      outcome: { extra: { completed: number; failed: number; checks: string[] } };
    };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.ok, JSON.stringify(body)).toBe(true);
    expect(body.outcome.extra.failed).toBe(0);
    expect(body.outcome.extra.checks.length).toBeGreaterThanOrEqual(6);
    expect(body.outcome.extra.completed).toBe(body.outcome.extra.checks.length);
    const { rows } = await db.pool.query<{ job_name: string; kind: string }>(
      'SELECT r.job_name, f.kind FROM oxijobs.run_findings f JOIN oxijobs.recoverable_runs r ON r.id = f.run_id',
    );
    expect(rows).toEqual([]);
    const { rows: runs } = await db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM oxijobs.recoverable_runs WHERE status = 'Completed'",
    );
    expect(runs[0]!.n).toBe(body.outcome.extra.checks.length);
    expect(await dumpDatabase(db.pool, { excludeSchemas: ['oxijobs'] })).toBe(before);
  });

  it("with a read-only role (the README's grants without the write part) the checks run and a repair plan is refused", async () => {
    const { url, drop } = await readOnlyOxiCloudRole(db, 'oxijobs_ro');
    let ro: Awaited<ReturnType<typeof secondServer>> | undefined;
    try {
      ro = await secondServer('oxijobs_ro', { OXICLOUD_DB_CONNECTION_STRING: url });
      const roBase = ro.base;
      const role_line = jsonLines(ro.process.stdout()).find((l) => l['event'] === 'database.role');
      expect(String(role_line?.['msg'])).toMatch(
        /is read-only for OxiCloud .*repairs and write jobs are refused/,
      );
      const headers = {
        authorization: `Bearer ${ro.token}`,
        'content-type': 'application/json',
      };
      const batch = await fetch(`${roBase}/api/admin/jobs/consistency_batch/trigger?force=true`, {
        method: 'POST',
        headers,
      });
      const outcome = (await batch.json()) as {
        ok: boolean;
        outcome: { extra: { failed: number; completed: number } };
      };
      expect(batch.status, JSON.stringify(outcome)).toBe(200);
      expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
      expect(outcome.outcome.extra.completed).toBeGreaterThanOrEqual(6);
      const plan = await fetch(`${roBase}/api/admin/repairs/plan`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ filter: { check: 'drives_consistency' } }),
      });
      expect(plan.status).toBe(404);
      expect(await plan.text()).toMatch(
        /repair is off: the database role ro_\w+ may not write OxiCloud's tables \(lacks auth\.users: UPDATE/,
      );
    } finally {
      ro?.process.child.kill('SIGKILL');
      await drop();
    }
    expect(await dumpDatabase(db.pool, { excludeSchemas: ['oxijobs', 'oxijobs_ro'] })).toBe(before);
  });

  it("a wrong storage root: storage_consistency is refused with the canary's message, records nothing, and no mail goes out", async () => {
    const smtp = await startSmtpListener();
    const wrongRoot = join(dir.path, 'not-the-storage-root');
    mkdirSync(wrongRoot, { recursive: true });
    let wrong: Awaited<ReturnType<typeof secondServer>> | undefined;
    try {
      wrong = await secondServer('oxijobs_wrong_root', {
        ...smtpEnv(smtp),
        OXICLOUD_STORAGE_PATH: wrongRoot,
      });
      const wrongBase = wrong.base;
      const res = await fetch(`${wrongBase}/api/admin/jobs/storage_consistency/trigger?force=true`, {
        method: 'POST',
        headers: { authorization: `Bearer ${wrong.token}` },
      });
      const { run_id: runId } = (await res.json()) as { run_id: string };
      // The trigger answers at once; the run ends on its own.
      let run: { status: string; error_message: string | null; findings: number } | undefined;
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(100)) {
        const { rows } = await db.pool.query(
          `SELECT r.status, r.error_message,
                  (SELECT count(*)::int FROM oxijobs_wrong_root.run_findings f WHERE f.run_id = r.id) AS findings
             FROM oxijobs_wrong_root.recoverable_runs r WHERE r.id = $1`,
          [runId],
        );
        run = rows[0];
        if (run?.status === 'Failed' || run?.status === 'Completed') break;
      }
      expect(run).toMatchObject({ status: 'Failed', findings: 0 });
      expect(run?.error_message).toMatch(
        /^storage_consistency: refused: wrong storage root \/ key: none of \d+ objects that storage\.blobs lists reads back as itself from the local store: \d+ absent \(wrong storage root or bucket\?\)/,
      );
      // A mail sent after the refusal arrives alone: the refusal mailed nothing (no DataLoss, no failure).
      const marker = await runCli(['alerts', 'test'], wrong.env);
      expect(marker.code, marker.stderr).toBe(0);
      expect(smtp.subjects).toEqual(['[OxiCloud] Test alert']);
    } finally {
      wrong?.process.child.kill('SIGKILL');
      await smtp.close();
    }
    expect(
      await dumpDatabase(db.pool, { excludeSchemas: ['oxijobs', 'oxijobs_ro', 'oxijobs_wrong_root'] }),
    ).toBe(before);
  });

  it('the CLI never sends its token to a server that is not the engine (OxiCloud on its port answers /healthz too)', async () => {
    const seen: Array<{ url: string; authorization: string | undefined }> = [];
    const impostor = createServer((req, res) => {
      seen.push({ url: String(req.url), authorization: req.headers.authorization });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    });
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(impostor.address() as AddressInfo).port}`;
      const result = await runCli(['jobs', 'list', '--url', url, '--token', 'secret-admin-token'], env);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('is not the oxijobs server');
      expect(seen.map((s) => s.url)).toEqual(['/healthz']);
      expect(seen.every((s) => s.authorization === undefined)).toBe(true);
    } finally {
      await new Promise<void>((resolve) => impostor.close(() => resolve()));
    }
  });
});

/**
 * The same beside an OxiCloud whose store is S3 (`<aa>/<hash>.blob` at the
 * bucket root, a real S3-protocol server): started with OxiCloud's S3
 * settings, a deep `consistency_batch` finds nothing and changes nothing.
 */
describe("oxijobs serve beside OxiCloud's S3 store (sidecar mode)", () => {
  let db: TestDatabase;
  let dir: { path: string; remove(): void };
  let s3rver: S3rverProcess;
  let server: CliProcess | undefined;

  beforeAll(async () => {
    db = await createOxiCloudDatabase({ max: 4 });
    dir = scratchDir('sidecar-s3');
    s3rver = await startS3rver('oxicloud-sidecar');
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await s3rver?.stop();
    await db?.drop();
    dir?.remove();
  });

  it('a full consistency_batch with deep=true finds nothing on clean data, and changes nothing of OxiCloud', async () => {
    const s3 = {
      bucket: s3rver.bucket,
      region: 'us-east-1',
      endpoint: s3rver.endpoint,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
    };
    const storageRoot = join(dir.path, 'oxicloud-storage');
    const blobs = new S3BlobStorage(s3);
    try {
      await generateOxiCloudDataset({
        pool: db.pool,
        blobs,
        storageRoot,
        options: { seed: 53, users: 3, filesPerDrive: 10 },
      });
    } finally {
      blobs.close();
    }
    const { rows: admins } = await db.pool.query(
      "SELECT email FROM auth.users WHERE role = 'admin' AND active ORDER BY email LIMIT 1",
    );
    const before = await dumpDatabase(db.pool);
    const port = await freePort();
    const env = cleanEnv({
      OXICLOUD_DB_CONNECTION_STRING: db.url,
      OXICLOUD_STORAGE_PATH: storageRoot,
      OXICLOUD_STORAGE_BACKEND: 's3',
      OXICLOUD_S3_BUCKET: s3.bucket,
      OXICLOUD_S3_ENDPOINT_URL: s3.endpoint,
      OXICLOUD_S3_REGION: s3.region,
      OXICLOUD_S3_ACCESS_KEY: s3.accessKeyId,
      OXICLOUD_S3_SECRET_KEY: s3.secretAccessKey,
      OXICLOUD_S3_FORCE_PATH_STYLE: 'true',
      OXIJOBS_JWT_SECRET: randomBytes(32).toString('base64'),
      OXICLOUD_HTTP_PORT: String(port),
      OXICLOUD_DATA_DIR: join(dir.path, 'engine-data'),
      OXICLOUD_LOG_FORMAT: 'json',
      OXICLOUD_METRICS_ADDR: '',
    });
    const run = await deepBatchBeside(env, String(admins[0]?.['email']));
    server = run.process;
    expect(run.checks).toContain('storage_consistency');
    const { rows } = await db.pool.query('SELECT kind FROM oxijobs.run_findings');
    expect(rows).toEqual([]);
    expect(await dumpDatabase(db.pool, { excludeSchemas: ['oxijobs'] })).toBe(before);
  });
});

/**
 * Issue 32, "Done when" 3: every generator fault, made in a database
 * OxiCloud's migrations created (its `_sqlx_migrations`, no engine schema),
 * beside an encrypted local store, is found by the server in sidecar mode
 * exactly as the in-process batch finds it (`expectedFaultFindings`, no
 * missing and no extra), and nothing outside the engine's schema changes.
 */
describe('every fault made in an OxiCloud database, found in sidecar mode', () => {
  let db: TestDatabase;
  let dir: { path: string; remove(): void };
  let server: CliProcess | undefined;

  beforeAll(async () => {
    db = await createOxiCloudDatabase({ max: 4 });
    dir = scratchDir('sidecar-faults');
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await db?.drop();
    dir?.remove();
  });

  it('consistency_batch --force --deep reports exactly the union of the faults’ findings, and changes nothing of OxiCloud', async () => {
    const storageRoot = join(dir.path, 'oxicloud-storage');
    const key = randomBytes(32);
    const blobs = createBlobStorage({ backend: 'local', root: storageRoot }, { key: createSecretKey(key) });
    const report = await generateOxiCloudDataset({
      pool: db.pool,
      blobs,
      storageRoot,
      options: {
        seed: 11,
        users: 12,
        sharedDrives: 6,
        filesPerDrive: 20,
        multiChunkFileShare: 0.06,
        multiChunkSize: { min: 1024 * 1024 + 1, max: 1024 * 1024 + 300_000 },
        sharedChunkShare: 0.4,
        trashedFolderShare: 0.2,
        faults: [...OXICLOUD_FAULT_NAMES],
      },
    });
    expect(report.faults.map((f) => f.fault)).toEqual([...OXICLOUD_FAULT_NAMES]);
    const expected = report.faults
      .flatMap(expectedFaultFindings)
      .map((f) => `${f.check} ${f.kind} ${f.severity} ${f.resourceId}`)
      .sort();
    const { rows: admins } = await db.pool.query(
      "SELECT email FROM auth.users WHERE role = 'admin' AND active ORDER BY email LIMIT 1",
    );
    const before = await dumpDatabase(db.pool);
    const port = await freePort();
    const env = cleanEnv({
      OXICLOUD_DB_CONNECTION_STRING: db.url,
      OXICLOUD_STORAGE_PATH: storageRoot,
      OXICLOUD_STORAGE_ENCRYPTION_ENABLED: 'true',
      OXICLOUD_STORAGE_ENCRYPTION_KEY: key.toString('base64'),
      OXIJOBS_JWT_SECRET: randomBytes(32).toString('base64'),
      OXICLOUD_HTTP_PORT: String(port),
      OXICLOUD_DATA_DIR: join(dir.path, 'engine-data'),
      OXICLOUD_LOG_FORMAT: 'json',
      OXICLOUD_METRICS_ADDR: '',
    });
    const run = await deepBatchBeside(env, String(admins[0]?.['email']));
    server = run.process;
    expect(jsonLines(server.stdout()).find((l) => l['event'] === 'database.sidecar')).toBeDefined();
    const { rows } = await db.pool.query<{ line: string }>(
      `SELECT r.job_name || ' ' || f.kind || ' ' || f.severity || ' ' || f.resource_id AS line
         FROM oxijobs.run_findings f JOIN oxijobs.recoverable_runs r ON r.id = f.run_id`,
    );
    const found = rows.map((r) => r.line).sort();
    const missing = expected.filter((l) => !found.includes(l));
    const extra = found.filter((l) => !expected.includes(l));
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
    expect(found).toEqual(expected);
    expect(await dumpDatabase(db.pool, { excludeSchemas: ['oxijobs'] })).toBe(before);
  }, 240_000);
});
