import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signAdminToken } from '@oxicloud/admin-api';
import {
  backdateLocalBlob,
  generateOxiCloudDataset,
  OXICLOUD_FAULT_EXPECTATIONS,
  OXICLOUD_FAULT_NAMES,
  type OxiCloudDatasetOptions,
  type OxiCloudDatasetReport,
  type OxiCloudFaultName,
} from '@oxicloud/dataset';
import type { Logger } from '@oxicloud/scheduler';
import { LocalFsBlobStorage } from '@oxicloud/storage';
import { ADMIN_URL_ENV, freePort } from '@oxicloud/test-support';
import pg from 'pg';
import {
  type ComposedServer,
  composeServer,
  type DatabaseMode,
  ensureFirstAdmin,
  loadConfig,
  tenantConfigsFromEnv,
} from '../src/index.js';
import { type CliProcess, cleanEnv, jsonLines, startCli } from './cli-process.js';

/** The HS256 secret every fault test server signs its tokens with (so tests mint their own). */
export const FAULT_JWT_SECRET = 'fault-tests-secret-0123456789abcdef0123456789';

/** A scratch folder of mode 0755 (embedded Postgres and blob roots need a readable parent). */
export function scratchDir(label: string): { path: string; remove(): void } {
  const path = join(tmpdir(), `oxijobs-${label}-${process.pid}-${Date.now().toString(36)}`);
  mkdirSync(path, { recursive: true });
  chmodSync(path, 0o755);
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * The local backend's storage root of a server whose `OXICLOUD_DATA_DIR` is
 * `dataDir` (and no `OXICLOUD_STORAGE_PATH`): what the server reads, so a
 * test writes its blobs where the server looks.
 */
export function serverStorageRoot(dataDir: string): string {
  return loadConfig({ OXICLOUD_DATA_DIR: dataDir }).backends.localRoot;
}

/** Periodic jobs off (on demand only), so nothing but the test changes the data. */
export const QUIET_PERIODIC_JOBS: Record<string, string> = {
  OXICLOUD_TRASH_CLEANUP_INTERVAL_HOURS: '0',
  OXICLOUD_STORAGE_USAGE_RECONCILE_INTERVAL_SECONDS: '0',
  OXIJOBS_GRANT_CLEANUP_INTERVAL_HOURS: '0',
};

/** The environment of a test server on `databaseUrl`, with a fixed JWT secret and quiet periodic jobs. */
export function serverEnv(options: {
  databaseUrl: string;
  dataDir: string;
  httpPort: number;
  /** The storage domain: `oxicloud`, the only one the server has. */
  domain?: 'oxicloud';
  extra?: Record<string, string>;
}): Record<string, string> {
  return cleanEnv({
    DATABASE_URL: options.databaseUrl,
    OXICLOUD_DATA_DIR: options.dataDir,
    OXICLOUD_HTTP_PORT: String(options.httpPort),
    OXICLOUD_HTTP_HOST: '127.0.0.1',
    OXIJOBS_JWT_SECRET: FAULT_JWT_SECRET,
    OXICLOUD_LOG_LEVEL: 'info',
    ...QUIET_PERIODIC_JOBS,
    ...options.extra,
  });
}

/**
 * Starts `oxijobs serve` and resolves once it logged `server.listening`
 * (written after the boot sweep, so a trigger can no longer race the sweep).
 */
export async function startServer(env: Record<string, string>, timeoutMs = 60_000): Promise<CliProcess> {
  const server = startCli(['serve'], env);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      throw new Error(`the server exited before listening: ${server.stderr()}\n${server.stdout()}`);
    }
    if (server.stdout().includes('"event":"server.listening"')) return server;
    await sleep(25);
  }
  server.child.kill('SIGKILL');
  throw new Error(`the server did not log server.listening within ${timeoutMs} ms: ${server.stderr()}`);
}

/** kill -9, and wait until the process is gone. */
export async function killHard(server: CliProcess): Promise<void> {
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  await server.exited;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Mints an admin bearer token for `username` (the first boot creates `admin`), signed with {@link FAULT_JWT_SECRET}. */
export async function adminToken(
  pool: pg.Pool,
  options: { username?: string; expiresInSeconds?: number; now?: Date } = {},
): Promise<string> {
  // Without a username: `admin`, else (an OxiCloud dataset brings its own admins, so none was created) the first admin.
  const { rows } = await pool.query<{ id: string; username: string; role: 'admin' | 'user' }>(
    options.username === undefined
      ? `SELECT id::text AS id, username, role::text AS role FROM auth.users
          WHERE role::text = 'admin' ORDER BY username <> 'admin', username LIMIT 1`
      : 'SELECT id::text AS id, username, role::text AS role FROM auth.users WHERE username = $1',
    options.username === undefined ? [] : [options.username],
  );
  const user = rows[0];
  if (!user) throw new Error(`no user ${options.username ?? 'with role admin'} in auth.users`);
  return signAdminToken({
    secret: FAULT_JWT_SECRET,
    user,
    expiresInSeconds: options.expiresInSeconds ?? 3600,
    ...(options.now ? { now: options.now } : {}),
  });
}

/** A run as `GET …/runs/{id}` answers it (the fields the tests read). */
export interface RunJson {
  run_id: string;
  job_name: string;
  status: 'Running' | 'CancelRequested' | 'Paused' | 'Completed' | 'Failed';
  started_at: string;
  cursor_hex: string | null;
  stats: Record<string, unknown>;
  params: Record<string, unknown>;
  error_message: string | null;
  pause_reason: string | null;
  pauses: Array<{ at: string; reason: string }>;
  active_ms: number;
  wall_ms: number;
  owner_node: string | null;
  attempt: number;
  lease_until: string | null;
}

/** A finding as `GET …/findings` answers it. */
export interface FindingJson {
  kind: string;
  severity: string;
  resource_id: string;
}

/** A tiny admin API client over `fetch` (a real socket per request unless told otherwise). */
export function adminClient(base: string, token: string) {
  const headers = { authorization: `Bearer ${token}` };
  async function json<T>(res: Response, expected: number, what: string): Promise<T> {
    const text = await res.text();
    if (res.status !== expected) throw new Error(`${what}: expected ${expected}, got ${res.status} ${text}`);
    return JSON.parse(text) as T;
  }
  const client = {
    async trigger(
      job: string,
      body?: Record<string, unknown>,
    ): Promise<{ run_id: string; status: string; resumed: boolean; already_running: boolean }> {
      const res = await fetch(`${base}/api/admin/jobs/${job}/trigger`, {
        method: 'POST',
        headers: body ? { ...headers, 'content-type': 'application/json' } : headers,
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return json(res, 202, `trigger ${job}`);
    },
    async run(job: string, runId: string): Promise<RunJson> {
      return json(
        await fetch(`${base}/api/admin/jobs/${job}/runs/${runId}`, { headers }),
        200,
        `run ${runId}`,
      );
    },
    async runs(job: string): Promise<RunJson[]> {
      return json(
        await fetch(`${base}/api/admin/jobs/${job}/runs?limit=500`, { headers }),
        200,
        `runs ${job}`,
      );
    },
    /** Every finding of a run (all pages). */
    async findings(job: string, runId: string): Promise<{ total: number; findings: FindingJson[] }> {
      const all: FindingJson[] = [];
      let total = 0;
      for (let offset = 0; ; offset += 500) {
        const page = await json<{ total: number; findings: FindingJson[] }>(
          await fetch(`${base}/api/admin/jobs/${job}/runs/${runId}/findings?limit=500&offset=${offset}`, {
            headers,
          }),
          200,
          `findings ${runId}`,
        );
        total = page.total;
        all.push(...page.findings);
        if (page.findings.length < 500) break;
      }
      return { total, findings: all };
    },
    /** Polls the run until its status is one of `statuses`. */
    async waitFor(
      job: string,
      runId: string,
      statuses: readonly RunJson['status'][],
      timeoutMs = 60_000,
    ): Promise<RunJson> {
      const deadline = Date.now() + timeoutMs;
      let last: RunJson | undefined;
      while (Date.now() < deadline) {
        last = await client.run(job, runId);
        if (statuses.includes(last.status)) return last;
        await sleep(50);
      }
      throw new Error(`run ${runId} of ${job} did not reach ${statuses.join('/')}: ${JSON.stringify(last)}`);
    },
  };
  return client;
}

/** `kind severity resource_id` lines, sorted: what "the same findings" compares. */
export function findingSet(
  findings: readonly { kind: string; severity: string; resource_id?: string; resourceId?: string }[],
): string[] {
  return findings.map((f) => `${f.kind} ${f.severity} ${f.resource_id ?? f.resourceId}`).sort();
}

function adminUrl(): string {
  const url = process.env[ADMIN_URL_ENV] ?? process.env['TEST_DATABASE_URL'];
  if (!url) throw new Error(`${ADMIN_URL_ENV} is not set: the test-support global setup must run`);
  return url;
}

function databaseUrl(name: string): string {
  const u = new URL(adminUrl());
  u.pathname = `/${name}`;
  return u.toString();
}

/** A copy of a test database (`CREATE DATABASE … TEMPLATE`), with a pool of its own. */
export interface DatabaseCopy {
  readonly name: string;
  readonly url: string;
  readonly pool: pg.Pool;
  drop(): Promise<void>;
}

/**
 * Copies database `source` to a new database: the source's other sessions are
 * ended first (CREATE DATABASE … TEMPLATE needs it alone; pools reconnect).
 */
export async function copyDatabase(source: string, label = 'copy'): Promise<DatabaseCopy> {
  const name = `${source}_${label}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    for (let attempt = 0; ; attempt++) {
      await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [source],
      );
      try {
        await admin.query(`CREATE DATABASE ${name} TEMPLATE ${source}`);
        break;
      } catch (error) {
        if (attempt >= 50 || !/being accessed by other users/.test((error as Error).message)) throw error;
        await sleep(100);
      }
    }
  } finally {
    await admin.end();
  }
  const url = databaseUrl(name);
  const pool = new pg.Pool({ connectionString: url, max: 5 });
  pool.on('error', () => undefined);
  return {
    name,
    url,
    pool,
    async drop() {
      await pool.end().catch(() => undefined);
      const c = new pg.Client({ connectionString: adminUrl() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      await c.end();
    },
  };
}

/** A logger that keeps every line (fields + msg + level) in memory: the in-process tests' audit log. */
export function capturingLogger(): Logger & { lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const at =
    (level: string) =>
    (fields: object, msg?: string): void => {
      lines.push({ level, ...(fields as Record<string, unknown>), msg });
    };
  return { lines, info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
}

/**
 * The composed server in this process (no HTTP listener: `app.request()`),
 * on `pool`, with the first admin created and a capturing logger.
 */
export async function composeInProcess(options: {
  pool: pg.Pool;
  dataDir: string;
  /** As {@link serverEnv}'s. */
  domain?: 'oxicloud';
  env?: Record<string, string>;
  /** `applyMigrations`' mode; beside OxiCloud no first admin is made. @defaultValue the engine's own database */
  database?: DatabaseMode;
  logger?: ReturnType<typeof capturingLogger>;
}): Promise<{ server: ComposedServer; logger: ReturnType<typeof capturingLogger> }> {
  const env = cleanEnv({
    DATABASE_URL: 'postgres://unused.invalid/unused',
    OXICLOUD_DATA_DIR: options.dataDir,
    OXIJOBS_JWT_SECRET: FAULT_JWT_SECRET,
    ...QUIET_PERIODIC_JOBS,
    ...options.env,
  });
  const logger = options.logger ?? capturingLogger();
  const config = loadConfig(env);
  if (options.database?.kind !== 'sidecar') {
    await ensureFirstAdmin(options.pool, logger, undefined, config.storageDomain);
  }
  const server = composeServer({
    ...(options.database === undefined ? {} : { database: options.database }),
    config,
    tenants: tenantConfigsFromEnv(env),
    logger,
    pool: options.pool,
    jwtSecret: FAULT_JWT_SECRET,
    env,
    shutdownTimeoutMs: 2_000,
  });
  await server.start();
  return { server, logger };
}

/** Sizes of the fault tests' multi-chunk contents: 1 MiB + 1 byte to 1 MiB + 128 KiB. */
const SMALL_MULTI_CHUNK = { min: 1024 * 1024 + 1, max: 1024 * 1024 + 128 * 1024 };

/**
 * An OxiCloud-shaped dataset (`generateOxiCloudDataset`) in the database of
 * `pool` and the local store of a server whose `OXICLOUD_DATA_DIR` is
 * `dataDir` ({@link serverStorageRoot}: `.blobs/`, `.thumbnails/`), objects
 * a fault leaves without a row backdated past the grace.
 */
export async function seedOxiCloud(
  pool: pg.Pool,
  dataDir: string,
  options: OxiCloudDatasetOptions,
): Promise<OxiCloudDatasetReport> {
  const storageRoot = serverStorageRoot(dataDir);
  const blobs = new LocalFsBlobStorage({ root: storageRoot });
  return generateOxiCloudDataset({
    pool,
    blobs,
    storageRoot,
    backdateBlob: backdateLocalBlob((hash) => blobs.pathOf(hash)),
    // Multi-chunk contents just over the 1 MiB chunk bound (two chunks): the shape, not the bytes, is what the tests need.
    options: { multiChunkSize: SMALL_MULTI_CHUNK, ...options },
  });
}

/** The OxiCloud faults that the consistency checks report (their expectation names a check). */
export const OXICLOUD_CHECKED_FAULTS: OxiCloudFaultName[] = OXICLOUD_FAULT_NAMES.filter(
  (fault) => OXICLOUD_FAULT_EXPECTATIONS[fault].check !== null,
);

/**
 * The consistency fault tests' dataset on OxiCloud's domain: 36 users, or
 * 20 per `faultsPerKind` when more (faults take drives out of each other's
 * reach), seed 4242, every fault of {@link OXICLOUD_CHECKED_FAULTS} × `faultsPerKind`.
 */
export async function seedOxiCloudConsistencyFaults(
  pool: pg.Pool,
  dataDir: string,
  faultsPerKind: number,
): Promise<OxiCloudDatasetReport> {
  return seedOxiCloud(pool, dataDir, {
    users: Math.max(36, 20 * faultsPerKind),
    filesPerDrive: 25,
    foldersPerDrive: { min: 4, max: 10 },
    multiChunkFileShare: 0.1,
    trashedFolderShare: 0.2,
    trashedFileShare: 0.1,
    seed: 4242,
    faults: OXICLOUD_CHECKED_FAULTS,
    faultsPerKind,
  });
}

/** A job's latest run as a fault test compares it: stats and findings. */
export interface FinishedRun {
  readonly runId: string;
  readonly status: string;
  readonly stats: Record<string, unknown>;
  /** `kind severity resource_id` of each finding, sorted ({@link findingSet}). */
  readonly findings: string[];
  readonly findingRows: number;
}

/** The latest run of `job` in the database and its findings. */
export async function latestRun(pool: pg.Pool, job: string): Promise<FinishedRun> {
  const { rows } = await pool.query(
    `SELECT id::text, status, stats FROM jobs.recoverable_runs WHERE job_name = $1 ORDER BY started_at DESC LIMIT 1`,
    [job],
  );
  const run = rows[0] as { id: string; status: string; stats: Record<string, unknown> };
  const found = await pool.query(
    'SELECT kind, severity, resource_id FROM jobs.run_findings WHERE run_id = $1',
    [run.id],
  );
  return {
    runId: run.id,
    status: run.status,
    stats: run.stats,
    findings: findingSet(found.rows),
    findingRows: found.rowCount ?? 0,
  };
}

/**
 * The uninterrupted reference: a copy of database `source` taken before
 * anything ran, each job run once in-process (in order, no interruption).
 * Returns the copy (drop it in `afterAll`) and each job's finished run.
 */
export async function referenceRuns(
  source: string,
  dataDir: string,
  jobs: ReadonlyArray<{ readonly name: string; readonly params: Readonly<Record<string, unknown>> }>,
  /** The storage domain `source` was made with (the only one). */
  domain: 'oxicloud' = 'oxicloud',
): Promise<{ readonly reference: DatabaseCopy; readonly runs: Map<string, FinishedRun> }> {
  const reference = await copyDatabase(source, 'ref');
  const runs = new Map<string, FinishedRun>();
  const { server } = await composeInProcess({ domain, pool: reference.pool, dataDir });
  try {
    for (const job of jobs) {
      const outcome = await server.engine.runOrResume(job.name, { params: job.params });
      if (outcome.kind !== 'ok') throw new Error(`reference run of ${job.name}: ${JSON.stringify(outcome)}`);
      runs.set(job.name, await latestRun(reference.pool, job.name));
    }
  } finally {
    await server.stop();
  }
  return { reference, runs };
}

export { type CliProcess, freePort, jsonLines };
