import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oldModelDatabaseSql } from '../../../migrations/test/fixtures/old-model-database.js';
import { type CliProcess, cleanEnv, jsonLines, runCli, startCli, waitForStatus } from './cli-process.js';
import { databaseCatalog } from './database-catalog.js';

/** How many files are under `dir` (recursively); 0 when it does not exist. */
function filesUnder(dir: string): number {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;
  } catch {
    return 0;
  }
}

/** What `oxijobs seed` wrote: OxiCloud's rows and the blob files under `<storage>/.blobs/`. */
async function written(db: TestDatabase, storageDir: string) {
  const { rows } = await db.pool.query<{ users: number; files: number; manifests: number; blobs: number }>(
    `SELECT (SELECT count(*)::int FROM auth.users) AS users, (SELECT count(*)::int FROM storage.files) AS files,
            (SELECT count(*)::int FROM storage.chunk_manifests) AS manifests, (SELECT count(*)::int FROM storage.blobs) AS blobs`,
  );
  return { ...rows[0]!, blobFiles: filesUnder(join(storageDir, '.blobs')) };
}

/** A token of the first seeded admin, named by its e-mail address (OxiCloud's auth.users). */
async function seededAdminToken(db: TestDatabase, env: Record<string, string>): Promise<string> {
  const { rows } = await db.pool.query(
    "SELECT email FROM auth.users WHERE role = 'admin' AND username <> 'admin' AND active ORDER BY email LIMIT 1",
  );
  const minted = await runCli(['token', '--user', String(rows[0]?.['email'])], env);
  expect(minted.code, minted.stderr).toBe(0);
  return minted.stdout.trim().split('\n').at(-1)!;
}

/** The batch's outcome and its runs, with their findings: consistency_batch triggered with force and deep. */
async function deepBatch(db: TestDatabase, base: string, token: string) {
  const runIds = async () =>
    (await db.pool.query<{ id: string }>('SELECT id::text AS id FROM jobs.recoverable_runs')).rows.map(
      (r) => r.id,
    );
  const before = new Set(await runIds());
  const res = await fetch(`${base}/api/admin/jobs/consistency_batch/trigger?force=true&deep=true`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });
  const body = (await res.json()) as {
    ok: boolean;
    outcome: {
      kind: string;
      extra: { completed: number; failed: number; checks: string[]; deep: boolean; force: boolean };
    };
  };
  expect(res.status, JSON.stringify(body)).toBe(200);
  const { rows } = await db.pool.query<{ id: string; job_name: string; status: string }>(
    'SELECT id::text AS id, job_name, status FROM jobs.recoverable_runs ORDER BY job_name',
  );
  const runs = rows.filter((r) => !before.has(r.id));
  const { rows: findings } = await db.pool.query<{ job_name: string; kind: string; resource_id: string }>(
    `SELECT r.job_name, f.kind, f.resource_id FROM jobs.run_findings f JOIN jobs.recoverable_runs r ON r.id = f.run_id
      WHERE r.id = ANY($1::uuid[]) ORDER BY 1, 2, 3`,
    [runs.map((r) => r.id)],
  );
  return { body, runs, findings };
}

/**
 * The jobs other than checks the oxicloud domain wires (Oxi* adapters),
 * repair on `OxiRepairStore` included. The checks are read from the listing
 * (the jobs declaring a `check`): the catalog is their one list.
 */
const TENANTS_ON_OXICLOUD = [
  'trash_cleanup',
  'dedup_gc',
  'storage_reconcile',
  'grant_cleanup',
  'run_retention',
  'storage_migration',
  'reextract_audio',
  'reextract_image',
  'consistency_batch',
  'repair',
];

/** How many checks the catalog declares (one declaration each in `@oxicloud/tenants`); every one is wired on OxiCloud's domain. */
const CHECK_COUNT = 8;

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

  it("`oxijobs migrate --create-storage-domain` builds OxiCloud's domain and the engine's schemas on an empty DATABASE_URL, and records the domain", async () => {
    const refused = await runCli(['migrate'], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('oxijobs migrate --create-storage-domain');
    const result = await runCli(['migrate', '--create-storage-domain'], env);
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

  it('`oxijobs serve` lists the wired jobs, every one of them registered, and is ready', async () => {
    server = startCli(['serve'], env);
    await waitForStatus(`${base}/readyz`, 200, { process: server, timeoutMs: 60_000 });
    const unwired = jsonLines(server.stdout()).filter((l) => l['event'] === 'storage_domain.unwired_jobs');
    expect(unwired).toEqual([]);
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

  it('repair plans are available: the admin API and the CLI plan over the open findings', async () => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const plan = await fetch(`${base}/api/admin/repairs/plan`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ filter: { check: 'drives_consistency' } }),
    });
    const body = (await plan.json()) as { id?: string; lines?: unknown[]; error?: { message: string } };
    expect(plan.status, JSON.stringify(body)).toBeLessThan(300);
    expect(body.lines).toEqual([]);
    const client = cleanEnv({ OXICLOUD_ADMIN_URL: base, OXICLOUD_ADMIN_TOKEN: token });
    const repair = await runCli(['repair', 'plan', '--check', 'drives_consistency'], client);
    expect(repair.code, repair.stderr).toBe(0);
    expect(repair.stderr).not.toContain('not available');
  });

  it('`oxijobs seed --users 3 --files-per-user 20` writes OxiCloud-shaped data; consistency_batch (force, deep) finds nothing', async () => {
    const seeded = await runCli(['seed', '--users', '3', '--files-per-user', '20', '--seed', '30'], env);
    expect(seeded.code, seeded.stderr).toBe(0);
    expect(seeded.stdout).toMatch(/^Generated OxiCloud dataset seed 30 in .*: 3 users \(1 admins, /m);
    expect(seeded.stdout).toContain('No faults injected.');
    const after = await written(db, storageDir);
    // 3 personal drives and ceil(3 / 5) = 1 shared drive, 20 files each.
    expect(after.files).toBe(80);
    expect(after.manifests).toBeGreaterThan(0);
    expect(after.blobs).toBeGreaterThan(0);
    expect(after.blobFiles).toBe(after.blobs);
    // An admin of OxiCloud's auth.users is named by its e-mail address too.
    const emailToken = await seededAdminToken(db, env);

    const { body, runs, findings } = await deepBatch(db, base, emailToken);
    expect(body.ok).toBe(true);
    expect(body.outcome.extra).toMatchObject({ failed: 0, deep: true, force: true });
    expect(body.outcome.extra.checks.sort()).toEqual(checkNames);
    expect(body.outcome.extra.completed).toBe(body.outcome.extra.checks.length);
    expect(runs.map(({ job_name, status }) => ({ job_name, status }))).toEqual(
      body.outcome.extra.checks.sort().map((job_name) => ({ job_name, status: 'Completed' })),
    );
    expect(findings).toEqual([]);
  });

  it("`oxijobs seed` refuses the seed already in the database, the old model's flags and fault names, writing nothing", async () => {
    const before = await written(db, storageDir);
    const again = await runCli(['seed', '--users', '3', '--files-per-user', '20', '--seed', '30'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already holds an OxiCloud dataset with seed 30');

    // The old model's flags are gone with it: an unknown option.
    const blobs = await runCli(
      ['seed', '--users', '3', '--files-per-user', '20', '--blobs-on-disk', '10'],
      env,
    );
    expect(blobs.code).toBe(2);
    expect(blobs.stderr).toContain("unknown option '--blobs-on-disk'");

    const oldFault = await runCli(
      ['seed', '--users', '3', '--files-per-user', '20', '--seed', '32', '--faults', 'old_trash'],
      env,
    );
    expect(oldFault.code).toBe(2);
    expect(oldFault.stderr).toContain('unknown OxiCloud fault name "old_trash"');
    expect(oldFault.stderr).toContain('missing_manifest, missing_chunk_row');

    // Another seed on the same database fails while writing its rows: all rolled back, its bytes removed.
    const second = await runCli(['seed', '--users', '3', '--files-per-user', '20', '--seed', '33'], env);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('oxicloud dataset generation failed');
    expect(await written(db, storageDir)).toEqual(before);

    const value = await runCli(['seed', '--users', '3', '--files-per-user', 'many', '--seed', '32'], env);
    expect(value.code).toBe(2);
    expect(value.stderr).toContain('--files-per-user="many" is not allowed');
    expect(await written(db, storageDir)).toEqual(before);
  });

  it('`oxijobs seed --faults missing_manifest --list-resources` gives exactly its expected finding', async () => {
    // A fresh database: a second dataset does not fit next to the first (the generation fails and rolls back, above).
    const other = await createTestDatabase({ max: 2 });
    const otherStorage = join(dataDir, 'oxicloud-storage-faults');
    const otherPort = await freePort();
    const otherEnv = {
      ...env,
      DATABASE_URL: other.url,
      OXICLOUD_STORAGE_PATH: otherStorage,
      OXICLOUD_HTTP_PORT: String(otherPort),
    };
    let otherServer: CliProcess | undefined;
    try {
      const migrated = await runCli(['migrate'], otherEnv);
      expect(migrated.code, migrated.stderr).toBe(0);
      const seeded = await runCli(
        [
          'seed',
          '--users',
          '3',
          '--files-per-user',
          '20',
          '--seed',
          '31',
          '--faults',
          'missing_manifest',
          '--list-resources',
        ],
        otherEnv,
      );
      expect(seeded.code, seeded.stderr).toBe(0);
      expect(seeded.stdout).toContain('Faults: missing_manifest (1 → §12.11 missing_blob).');
      expect(seeded.stdout).toMatch(/^missing_manifest: 1 resource\(s\)$/m);
      const expected =
        /^ {2}missing_manifest: files_consistency reports missing_blob \(DataLoss, §12\.11\) on (\S+)$/m.exec(
          seeded.stdout,
        );
      expect(expected, seeded.stdout).not.toBeNull();
      otherServer = startCli(['serve'], otherEnv);
      const otherBase = `http://127.0.0.1:${otherPort}`;
      await waitForStatus(`${otherBase}/readyz`, 200, { process: otherServer, timeoutMs: 60_000 });
      const { findings } = await deepBatch(other, otherBase, await seededAdminToken(other, otherEnv));
      expect(findings).toEqual([
        { job_name: 'files_consistency', kind: 'missing_blob', resource_id: expected![1] },
      ]);
    } finally {
      if (otherServer !== undefined && otherServer.child.exitCode === null) {
        otherServer.child.kill('SIGTERM');
        await otherServer.exited;
      }
      await other.drop();
    }
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

  it("the old model's database and domain value are refused before any write", async () => {
    // engine, the old model's value, is no longer a storage domain: a config error, before the database is opened.
    const before = await databaseCatalog(db);
    const engine = await runCli(['migrate'], { ...env, OXICLOUD_STORAGE_DOMAIN: 'engine' });
    expect(engine.code).toBe(1);
    expect(engine.stderr).toContain(
      'OXICLOUD_STORAGE_DOMAIN="engine": must be oxicloud, the only storage domain (engine, the old storage model, is removed)',
    );
    const other = await runCli(['migrate'], { ...env, OXICLOUD_STORAGE_DOMAIN: 'nextcloud' });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('OXICLOUD_STORAGE_DOMAIN="nextcloud": must be oxicloud');
    expect(await databaseCatalog(db)).toEqual(before);

    // Made with the engine's old model by an earlier version: recognised as the old model (old-model-database.test.ts).
    const old = await createTestDatabase({ empty: true, max: 2 });
    try {
      await old.pool.query(oldModelDatabaseSql());
      const oldBefore = await databaseCatalog(old);
      const serve = await runCli(['serve'], {
        ...env,
        DATABASE_URL: old.url,
        OXICLOUD_HTTP_PORT: String(await freePort()),
      });
      expect(serve.code).toBe(1);
      expect(serve.stderr).toContain('engine database of the old storage model');
      expect(serve.stderr).toContain('nothing was written');
      expect(await databaseCatalog(old)).toEqual(oldBefore);
    } finally {
      await old.drop();
    }
  });
});
