import { createSecretKey, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateOxiCloudDataset } from '@oxicloud/dataset';
import {
  createOxiCloudDatabase,
  dumpDatabase,
  freePort,
  readOnlyOxiCloudRole,
  type TestDatabase,
} from '@oxicloud/test-support';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBlobStorage } from '../src/compose.js';
import { type CliProcess, cleanEnv, jsonLines, runCli, startCli, waitForStatus } from './cli-process.js';
import { scratchDir } from './fault-support.js';

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
    const port = await freePort();
    const roBase = `http://127.0.0.1:${port}`;
    const roEnv = {
      ...env,
      OXICLOUD_DB_CONNECTION_STRING: url,
      OXIJOBS_SCHEMA: 'oxijobs_ro',
      OXICLOUD_HTTP_PORT: String(port),

      OXICLOUD_DATA_DIR: join(dir.path, 'engine-data-ro'),
    };
    const ro = startCli(['serve'], roEnv);
    try {
      await waitForStatus(`${roBase}/readyz`, 200, { process: ro, timeoutMs: 90_000 });
      const role_line = jsonLines(ro.stdout()).find((l) => l['event'] === 'database.role');
      expect(String(role_line?.['msg'])).toMatch(
        /is read-only for OxiCloud .*repairs and write jobs are refused/,
      );
      const minted = await runCli(['token', '--user', adminEmail], roEnv);
      expect(minted.code, minted.stderr).toBe(0);
      const headers = {
        authorization: `Bearer ${minted.stdout.trim().split('\n').at(-1)!}`,
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
      ro.child.kill('SIGKILL');
      await drop();
    }
    expect(await dumpDatabase(db.pool, { excludeSchemas: ['oxijobs', 'oxijobs_ro'] })).toBe(before);
  });
});
