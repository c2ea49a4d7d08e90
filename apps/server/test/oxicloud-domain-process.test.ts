import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateOxiCloudDataset } from '@oxicloud/dataset';
import { LocalFsBlobStorage } from '@oxicloud/storage';
import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, cleanEnv, jsonLines, runCli, startCli, waitForStatus } from './cli-process.js';

/** Every schema, relation and function of the database, for a before/after comparison. */
async function catalog(db: TestDatabase): Promise<string[]> {
  const { rows } = await db.pool.query<{ item: string }>(`
    SELECT 'schema ' || nspname AS item FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'
    UNION ALL
    SELECT c.relkind::text || ' ' || n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
    UNION ALL
    SELECT 'function ' || n.nspname || '.' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
    ORDER BY 1`);
  return rows.map((r) => r.item);
}

/**
 * The jobs other than checks the oxicloud domain wires (Oxi* adapters);
 * dedup_gc and repair have none yet. The checks are read from the listing
 * (the jobs declaring a `check`): the catalog is their one list.
 */
const TENANTS_ON_OXICLOUD = [
  'trash_cleanup',
  'storage_reconcile',
  'grant_cleanup',
  'run_retention',
  'storage_migration',
  'reextract_audio',
  'reextract_image',
  'consistency_batch',
];

/** How many checks the catalog declares (one declaration each in `@oxicloud/tenants`); every one is wired on OxiCloud's domain. */
const CHECK_COUNT = 6;

/** `oxijobs` as a real process with OXICLOUD_STORAGE_DOMAIN=oxicloud, from an empty database. */
describe("oxijobs on OxiCloud's storage domain (OXICLOUD_STORAGE_DOMAIN=oxicloud)", () => {
  let db: TestDatabase;
  let dataDir: string;
  let storageDir: string;
  let env: Record<string, string>;
  let server: CliProcess | undefined;
  let base: string;
  let token: string;
  /** The jobs declaring a `check`, as the listing of the oxicloud-domain server gives them. */
  let checkNames: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase({ empty: true, max: 4 });
    const port = await freePort();
    dataDir = join(tmpdir(), `oxijobs-oxidomain-${process.pid}-${port}`);
    storageDir = join(dataDir, 'oxicloud-storage');
    mkdirSync(storageDir, { recursive: true });
    base = `http://127.0.0.1:${port}`;
    env = cleanEnv({
      DATABASE_URL: db.url,
      OXICLOUD_DATA_DIR: dataDir,
      OXICLOUD_HTTP_PORT: String(port),
      OXICLOUD_STORAGE_DOMAIN: 'oxicloud',
      OXICLOUD_STORAGE_PATH: storageDir,
      OXICLOUD_LOG_LEVEL: 'info',
      OXICLOUD_LOG_FORMAT: 'json',
    });
  });

  afterAll(async () => {
    if (server !== undefined && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("`oxijobs migrate` builds OxiCloud's domain and the engine's schemas, and records the domain", async () => {
    const result = await runCli(['migrate'], env);
    expect(result.code, result.stderr).toBe(0);
    const migrated = jsonLines(result.stdout + result.stderr).find((l) => l['event'] === 'database.migrated');
    expect(migrated).toMatchObject({ storage_domain: 'oxicloud' });
    const { rows } = await db.pool.query(
      `SELECT (SELECT domain FROM public.oxicloud_storage_domain) AS domain,
              to_regclass('storage.chunk_manifests') IS NOT NULL AS manifests,
              to_regclass('jobs.recoverable_runs') IS NOT NULL AS runs,
              to_regclass('jobs.job_registrations') IS NOT NULL AS registrations,
              to_regprocedure('public.oxicloud_uuid_v7()') IS NULL AS no_old_model`,
    );
    expect(rows[0]).toEqual({
      domain: 'oxicloud',
      manifests: true,
      runs: true,
      registrations: true,
      no_old_model: true,
    });
  });

  it('`oxijobs serve` lists the wired jobs, says in one line what it did not register, and is ready', async () => {
    server = startCli(['serve'], env);
    await waitForStatus(`${base}/readyz`, 200, { process: server, timeoutMs: 60_000 });
    const unwired = jsonLines(server.stdout()).filter((l) => l['event'] === 'storage_domain.unwired_jobs');
    expect(unwired).toHaveLength(1);
    expect(unwired[0]).toMatchObject({ storage_domain: 'oxicloud', jobs: ['dedup_gc', 'repair'] });
    const minted = await runCli(['token', '--user', 'admin', '--expires-in', '1h'], env);
    expect(minted.code, minted.stderr).toBe(0);
    token = minted.stdout.trim().split('\n').at(-1)!;
    const list = await fetch(`${base}/api/admin/jobs`, { headers: { authorization: `Bearer ${token}` } });
    expect(list.status).toBe(200);
    const listing = (await list.json()) as Array<{ name: string; check: unknown }>;
    checkNames = listing
      .filter((j) => j.check !== null)
      .map((j) => j.name)
      .sort();
    expect(checkNames).toHaveLength(CHECK_COUNT);
    const others = listing.filter((j) => j.check === null).map((j) => j.name);
    expect([...others].sort()).toEqual([...TENANTS_ON_OXICLOUD].sort());
  });

  it('asked to run dedup_gc or repair, the admin API and the CLI answer 404 saying why', async () => {
    const headers = { authorization: `Bearer ${token}` };
    for (const job of ['dedup_gc', 'repair']) {
      const res = await fetch(`${base}/api/admin/jobs/${job}/trigger`, { method: 'POST', headers });
      expect(res.status, job).toBe(404);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('JOB_NOT_FOUND');
      expect(body.error.message).toContain(
        `${job} is not registered on this server: no adapter on OxiCloud's storage domain yet`,
      );
    }
    const plan = await fetch(`${base}/api/admin/repairs/plan`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(plan.status).toBe(404);
    expect(((await plan.json()) as { error: { message: string } }).error.message).toContain(
      'repair plans are not available on this server',
    );
    const client = cleanEnv({ OXICLOUD_ADMIN_URL: base, OXICLOUD_ADMIN_TOKEN: token });
    const repair = await runCli(['repair', 'plan', '--check', 'drives_consistency'], client);
    expect(repair.code).not.toBe(0);
    expect(repair.stderr).toContain('repair plans are not available on this server');
    const cli = await runCli(['jobs', 'trigger', 'dedup_gc'], client);
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain(
      "dedup_gc is not registered on this server: no adapter on OxiCloud's storage domain yet",
    );
  });

  it('on generated OxiCloud data, consistency_batch (force, deep) completes every check with 0 findings', async () => {
    const report = await generateOxiCloudDataset({
      pool: db.pool,
      blobs: new LocalFsBlobStorage({ root: storageDir }),
      storageRoot: storageDir,
      options: { users: 3, filesPerDrive: 6, sharedDrives: 1, groups: 1, seed: 30 },
    });
    expect(report).toBeDefined();
    const { rows: counts } = await db.pool.query(
      'SELECT (SELECT count(*)::int FROM storage.files) AS files, (SELECT count(*)::int FROM storage.blobs) AS blobs',
    );
    expect(counts[0]?.['files']).toBeGreaterThan(0);
    expect(counts[0]?.['blobs']).toBeGreaterThan(0);
    // An admin of OxiCloud's auth.users is named by its e-mail address too.
    const { rows: admins } = await db.pool.query(
      "SELECT email FROM auth.users WHERE role = 'admin' AND username <> 'admin' AND active ORDER BY email LIMIT 1",
    );
    const email = String(admins[0]?.['email']);
    const byEmail = await runCli(['token', '--user', email], env);
    expect(byEmail.code, byEmail.stderr).toBe(0);
    const emailToken = byEmail.stdout.trim().split('\n').at(-1)!;

    const res = await fetch(`${base}/api/admin/jobs/consistency_batch/trigger?force=true&deep=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${emailToken}` },
    });
    const body = (await res.json()) as {
      ok: boolean;
      outcome: {
        kind: string;
        extra: { completed: number; failed: number; checks: string[]; deep: boolean; force: boolean };
      };
    };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.ok).toBe(true);
    expect(body.outcome.extra).toMatchObject({ failed: 0, deep: true, force: true });
    expect(body.outcome.extra.checks.sort()).toEqual(checkNames);
    expect(body.outcome.extra.completed).toBe(body.outcome.extra.checks.length);
    const { rows: runs } = await db.pool.query(
      'SELECT job_name, status, (SELECT count(*)::int FROM jobs.run_findings f WHERE f.run_id = r.id) AS findings FROM jobs.recoverable_runs r ORDER BY job_name',
    );
    expect(runs).toEqual(
      body.outcome.extra.checks.sort().map((job_name) => ({ job_name, status: 'Completed', findings: 0 })),
    );
  });

  it("the checks see OxiCloud's tables: a drive's used_bytes off by 4 KiB is found by drives_consistency", async () => {
    const { rows: drives } = await db.pool.query(
      'UPDATE storage.drives SET used_bytes = used_bytes + 4096 WHERE id = (SELECT id FROM storage.drives ORDER BY id LIMIT 1) RETURNING id::text AS id',
    );
    const driveId = String(drives[0]?.['id']);
    const res = await fetch(`${base}/api/admin/jobs/drives_consistency/trigger?force=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(202);
    const { run_id: runId } = (await res.json()) as { run_id: string };
    const deadline = Date.now() + 30_000;
    let status = 'Running';
    while (Date.now() < deadline) {
      const { rows } = await db.pool.query('SELECT status FROM jobs.recoverable_runs WHERE id = $1', [runId]);
      status = String(rows[0]?.['status']);
      if (status !== 'Running') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe('Completed');
    const { rows: findings } = await db.pool.query(
      'SELECT kind, resource_id FROM jobs.run_findings WHERE run_id = $1 ORDER BY kind',
      [runId],
    );
    expect(findings).toContainEqual({ kind: 'drive_used_bytes_drift', resource_id: driveId });
  });

  it('the other domain value is refused in both directions before any write', async () => {
    // Made with oxicloud (this file's database), asked for engine: stopped before anything is written.
    const before = await catalog(db);
    const engine = await runCli(['migrate'], { ...env, OXICLOUD_STORAGE_DOMAIN: 'engine' });
    expect(engine.code).toBe(1);
    expect(engine.stderr).toContain('OXICLOUD_STORAGE_DOMAIN=engine does not match this database');
    expect(engine.stderr).toContain('storage domain "oxicloud"');
    expect(engine.stderr).toContain('Nothing was written');
    expect(await catalog(db)).toEqual(before);

    // Made with the engine's own model, asked for oxicloud.
    const other = await createTestDatabase({ max: 2 });
    try {
      const otherBefore = await catalog(other);
      const serve = await runCli(['serve'], {
        ...env,
        DATABASE_URL: other.url,
        OXICLOUD_HTTP_PORT: String(await freePort()),
      });
      expect(serve.code).toBe(1);
      expect(serve.stderr).toContain('OXICLOUD_STORAGE_DOMAIN=oxicloud does not match this database');
      expect(serve.stderr).toContain('storage domain "engine"');
      expect(await catalog(other)).toEqual(otherBefore);
    } finally {
      await other.drop();
    }
  });

  it('refuses a value that is not a domain, naming the allowed ones', async () => {
    const result = await runCli(['migrate'], { ...env, OXICLOUD_STORAGE_DOMAIN: 'nextcloud' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('OXICLOUD_STORAGE_DOMAIN="nextcloud": must be one of engine, oxicloud');
  });

  it('`oxijobs seed` refuses on the oxicloud domain, writing nothing', async () => {
    const result = await runCli(['seed', '--users', '1', '--files-per-user', '1'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'does not run with OXICLOUD_STORAGE_DOMAIN=oxicloud yet; nothing was written',
    );
  });
});
