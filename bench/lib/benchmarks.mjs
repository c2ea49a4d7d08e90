// The seven benchmarks. Each returns plain data; run.mjs renders it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { completed, DEFAULT_HEARTBEAT_MS, PgJobStoreFactory, RecoverableEngine } from '@oxicloud/recoverable';
import { LocalFsBlobStorage, PgBlobWalkRepository, PgFileBlobScan, postgresScans } from '@oxicloud/storage';
import { createStorageMigrationJob } from '@oxicloud/tenants';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { memorySampler, startLoad } from './server.mjs';
import { median, sleep } from './stats.mjs';

/** The one-statement yardsticks: the same question each check asks, over the whole table, raw. */
export const YARDSTICKS = {
  files_consistency: `
    SELECT count(*) AS n,
           count(*) FILTER (WHERE b.hash IS NULL OR b.size <> f.size OR (NOT f.is_trashed AND d.is_trashed)
             OR d.drive_id <> f.drive_id
             OR NULLIF(NULLIF(lower(btrim(split_part(f.mime_type, ';', 1))), ''), 'application/octet-stream')
                <> NULLIF(NULLIF(lower(btrim(split_part(COALESCE(b.content_type, ''), ';', 1))), ''), 'application/octet-stream')) AS bad
      FROM storage.files f
      LEFT JOIN storage.blobs b ON b.hash = f.blob_hash
      LEFT JOIN storage.folders d ON d.id = f.folder_id`,
  // The chain to a root (orphan_root) as one recursive statement over every folder.
  folders_consistency_chain: `
    WITH RECURSIVE up (start_id, drive_id, cur) AS (
      SELECT c.id, c.drive_id, c.parent_id FROM storage.folders c
      UNION ALL
      SELECT u.start_id, u.drive_id, f.parent_id FROM up u JOIN storage.folders f ON f.id = u.cur AND f.drive_id = u.drive_id
    ) CYCLE cur SET is_cycle USING visited
    SELECT count(DISTINCT start_id) AS n,
           (SELECT count(*) FROM (SELECT start_id FROM up GROUP BY start_id HAVING NOT bool_or(cur IS NULL)) o) AS bad
      FROM up`,
  blobs_consistency: `
    WITH c AS (SELECT blob_hash, count(*) AS n FROM storage.files GROUP BY blob_hash)
    SELECT count(*) AS n,
           count(*) FILTER (WHERE b.ref_count <> COALESCE(c.n, 0) OR (b.ref_count > 0) = (b.orphaned_at IS NOT NULL)) AS bad
      FROM storage.blobs b LEFT JOIN c ON c.blob_hash = b.hash`,
  grants_consistency: `
    SELECT count(*) AS n,
           count(*) FILTER (WHERE g.expires_at <= now() - interval '8 days'
             OR ((g.expires_at IS NULL OR g.expires_at > now()) AND CASE g.resource_type
                   WHEN 'drive' THEN NOT EXISTS (SELECT 1 FROM storage.drives x WHERE x.id = g.resource_id)
                   WHEN 'folder' THEN NOT EXISTS (SELECT 1 FROM storage.folders x WHERE x.id = g.resource_id)
                   ELSE NOT EXISTS (SELECT 1 FROM storage.files x WHERE x.id = g.resource_id) END)) AS bad
      FROM storage.role_grants g`,
  folders_consistency: `
    SELECT count(*) AS n,
           count(*) FILTER (WHERE (NOT c.is_trashed AND COALESCE(p.is_trashed, false))
             OR c.path IS DISTINCT FROM CASE WHEN c.parent_id IS NULL THEN '/' || c.name ELSE p.path || '/' || c.name END
             OR c.lpath IS DISTINCT FROM CASE WHEN c.parent_id IS NULL THEN storage.folder_label(c.id)
                                              ELSE p.lpath || storage.folder_label(c.id) END
             OR p.drive_id <> c.drive_id) AS bad
      FROM storage.folders c
      LEFT JOIN storage.folders p ON p.id = c.parent_id`,
  drives_consistency: `
    WITH fs AS (SELECT drive_id, sum(size) AS actual FROM storage.files GROUP BY drive_id),
         us AS (SELECT owner_id, sum(used_bytes) AS actual FROM storage.drives GROUP BY owner_id)
    SELECT (SELECT count(*) FROM storage.drives) + (SELECT count(*) FROM auth.users) AS n,
           (SELECT count(*) FROM storage.drives d LEFT JOIN fs ON fs.drive_id = d.id
             WHERE d.used_bytes <> COALESCE(fs.actual, 0))
         + (SELECT count(*) FROM auth.users u LEFT JOIN us ON us.owner_id = u.id
             WHERE u.storage_used_bytes <> COALESCE(us.actual, 0)) AS bad`,
};

/**
 * The checks the scan benchmarks measure, from the server's catalog (`GET
 * /api/admin/jobs`): every check in its declared order but those with a deep
 * mode (the blob backend's walk, which the deep benchmark measures). A check
 * without a yardstick above is measured without a ratio.
 */
export async function scanChecks(server) {
  const listing = await server.api('GET', '/api/admin/jobs');
  return listing
    .filter((job) => job.check !== null && !job.supports_deep)
    .sort((a, b) => a.check.order - b.check.order || a.name.localeCompare(b.name))
    .map((job) => job.name);
}
/**
 * Yardsticks a check is measured against, summed: folders_consistency's one
 * statement is the parent join plus the recursive chain walk (orphan_root).
 */
export const YARDSTICK_PARTS = {
  folders_consistency: ['folders_consistency', 'folders_consistency_chain'],
};

/** Runs a yardstick `reps` times (the first also warms the cache) and keeps the median; `null` for a check without one. */
export async function yardstick(pool, name, reps = 3) {
  const parts = YARDSTICK_PARTS[name] ?? [name];
  if (!parts.every((part) => part in YARDSTICKS)) return null;
  const times = [];
  let rows = 0;
  let bad = 0;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    rows = 0;
    bad = 0;
    for (const part of parts) {
      const {
        rows: [row],
      } = await pool.query(YARDSTICKS[part]);
      // The chain part counts the same folders again: keep the first part's row count.
      if (part === parts[0]) rows = Number(row.n);
      bad += Number(row.bad);
    }
    times.push(performance.now() - t0);
  }
  return { ms: median(times), allMs: times, rows, bad };
}

/** A check through the server (trigger → poll), with the server's RSS sampled throughout. */
export async function serverScan(server, name, params = {}, options = {}) {
  const mem = memorySampler(server.pid);
  await server.eventLoopDelay(); // reset the in-server histogram
  const { run, serverMs, wallMs } = await server.runJob(name, { params, ...options });
  const eld = await server.eventLoopDelay();
  const memory = mem.stop();
  return {
    name,
    params,
    ms: serverMs,
    wallMs,
    scanned: Number(run.stats.scanned_count ?? 0),
    findings: Number(run.stats.count ?? 0),
    stats: run.stats,
    memory,
    eventLoop: eld,
  };
}

/** A CheckStore in memory: no checkpoint writes, no findings table (the "no checkpoint" bound). */
function memoryCheckStore() {
  let checkpoints = 0;
  let scanned = 0;
  return {
    runId: '00000000-0000-4000-8000-000000000000',
    startedAt: new Date(),
    params: {},
    // The run kit's typed facts (a fresh run): runBatches starts at facts.cursor.
    facts: { attempt: 1, attemptStartedAt: new Date(), cursor: null, counters: {} },
    status: async () => 'Running',
    loadCursor: async () => null,
    checkpoint: async (_cursor, _delta, progress) => {
      checkpoints++;
      scanned += progress?.scanned ?? 0;
    },
    recordFinding: async () => true,
    dropFinding: async () => false,
    get checkpoints() {
      return checkpoints;
    },
    get scanned() {
      return scanned;
    },
  };
}

/**
 * The check's own code in this process with an in-memory store: batch size free (beyond the params max).
 * `stream: false` makes files_consistency page with one query per batch instead of its cursor stream.
 */
export async function directScan(databaseUrl, name, batchSize, { stream = true } = {}) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
  try {
    // The server's Postgres scans; files_consistency's without its row stream when `stream` is false.
    const adapters = [...(stream ? [] : [new PgFileBlobScan(db, { segmentRows: 0 })]), ...postgresScans(db)];
    const check = adapters.flatMap((a) => a.consistencyChecks()).find((c) => c.name === name);
    if (check === undefined) throw new Error(`${name}: no Postgres scan lists this check`);
    const store = memoryCheckStore();
    const t0 = performance.now();
    const outcome = await check.runResumable(
      store,
      { force: false, deep: false, batchSize },
      new AbortController().signal,
    );
    const ms = performance.now() - t0;
    if (outcome.kind !== 'completed') throw new Error(`${name} direct: ${JSON.stringify(outcome)}`);
    return { name, batchSize, stream, ms, scanned: store.scanned, batches: store.checkpoints };
  } finally {
    await db.destroy();
  }
}

/** Benchmark 4: latency of GET /api/admin/jobs from a second process, idle and during scans. */
export async function trafficBench(server, { rate, idleS, throttleMs }) {
  const url = `${server.base}/api/admin/jobs`;
  const idle = await startLoad({ url, token: server.token, rate, durationS: idleS, max: rate * idleS }).done;
  const during = async (params) => {
    const load = startLoad({ url, token: server.token, rate, durationS: 600, max: rate * 600 });
    await sleep(200);
    const scan = await serverScan(server, 'files_consistency', params);
    const latency = await load.stop();
    return { scan, latency };
  };
  const full = await during({});
  const throttled = await during({ throttle_ms: throttleMs });
  return { rate, idle, full, throttled, throttleMs };
}

function timeCommand(cmd, args, options = {}) {
  const t0 = performance.now();
  const res = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 30, ...options });
  const ms = performance.now() - t0;
  if (res.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${res.status}): ${res.stderr}`);
  return ms;
}

/** b3sum over every blob file under `root`, one process, files listed by find. */
export function b3sumBench(root, threads) {
  const script = `find . -type f -print0 | xargs -0 b3sum ${threads ? `--num-threads ${threads}` : ''} > /dev/null`;
  return timeCommand('bash', ['-c', script], { cwd: root });
}

/** Benchmark 5: storage_consistency deep=true through the server, /healthz latency from a second process. */
export async function deepBench(server, { rate }) {
  const load = startLoad({ url: `${server.base}/healthz`, rate, durationS: 600, max: rate * 600 });
  await sleep(200);
  const scan = await serverScan(server, 'storage_consistency', {}, { deep: true });
  const latency = await load.stop();
  return { scan, latency };
}

/** Benchmark 6: storage_migration local → a second LocalFs root, in this process, beside cp -r (and cp -r; sync). */
export async function migrationBench({ databaseUrl, blobRoot, workDir, concurrencies }) {
  const target = join(workDir, 'migration-target');
  const copy = join(workDir, 'cp-target');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 8 });
  const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
  const fresh = (dir) => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
  };
  try {
    const source = new LocalFsBlobStorage({ root: blobRoot });
    const destination = new LocalFsBlobStorage({ root: target });
    const engine = new RecoverableEngine({ pool });
    engine.register(
      createStorageMigrationJob({
        blobs: new PgBlobWalkRepository(db),
        sourceBackend: 'local',
        // fs → fs: the job's second backend name resolves to another local root here.
        resolveBackend: (name) => (name === 'local' ? source : name === 's3' ? destination : null),
      }),
    );
    const runs = [];
    for (const concurrency of concurrencies) {
      fresh(target);
      timeCommand('sync', []);
      const t0 = performance.now();
      const params = { target: 's3', ...(concurrency ? { concurrency } : {}) };
      const outcome = await engine.runOrResume('storage_migration', { params });
      const ms = performance.now() - t0;
      if (outcome.kind !== 'ok') throw new Error(`storage_migration: ${JSON.stringify(outcome)}`);
      const [run] = await engine.listRuns('storage_migration', { limit: 1 });
      runs.push({ concurrency: concurrency ?? 'default (4)', ms, stats: run?.stats ?? {} });
    }
    rmSync(target, { recursive: true, force: true });
    rmSync(copy, { recursive: true, force: true });
    timeCommand('sync', []);
    const cpMs = timeCommand('cp', ['-r', blobRoot, copy]);
    rmSync(copy, { recursive: true, force: true });
    timeCommand('sync', []);
    const cpSyncMs = timeCommand('bash', [
      '-c',
      `cp -r ${JSON.stringify(blobRoot)} ${JSON.stringify(copy)} && sync`,
    ]);
    return { runs, cpMs, cpSyncMs };
  } finally {
    await db.destroy();
    rmSync(target, { recursive: true, force: true });
    rmSync(copy, { recursive: true, force: true });
  }
}

/** Benchmark 7: one recoverable run (create, one checkpoint, terminal write) against pg-boss's send/fetch/complete. */
/**
 * One recoverable run's lifecycle against one pg-boss job's, `runs` times each after `warmup`.
 * `onPhase(name, 'start' | 'end')`, when given, is awaited around each timed phase
 * (`recoverable`, `lease`, `pg-boss`): the statement profile resets and reads its counters there.
 */
export async function overheadBench({ databaseUrl, runs, warmup, onPhase = async () => undefined }) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  const engine = new RecoverableEngine({ pool });
  engine.register({
    name: 'bench_noop',
    async runResumable(store) {
      await store.checkpoint(new Uint8Array([1, 2, 3, 4]), 0, { scanned: 1 });
      return completed();
    },
  });
  const timeRuns = async (n) => {
    const times = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const outcome = await engine.runOrResume('bench_noop', { logRunLine: false });
      times.push(performance.now() - t0);
      if (outcome.kind !== 'ok') throw new Error(`bench_noop: ${JSON.stringify(outcome)}`);
    }
    return times;
  };
  await timeRuns(warmup);
  await onPhase('recoverable', 'start');
  const recoverable = await timeRuns(runs);
  await onPhase('recoverable', 'end');
  // The lease: a Running run's owner renews it every heartbeat (one UPDATE for all its runs), so a
  // run pays one renewal per heartbeat interval it lasts. Measured on a held run, like the heartbeat does.
  const factory = new PgJobStoreFactory(new Kysely({ dialect: new PostgresDialect({ pool }) }));
  await pool.query(`DELETE FROM jobs.recoverable_runs WHERE job_name = 'bench_lease'`);
  const held = await factory.insertRunning('bench_lease', {});
  const timeRenewals = async (n) => {
    const times = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const renewed = await factory.renewLeases([held]);
      times.push(performance.now() - t0);
      if (renewed.length !== 1) throw new Error(`bench_lease: the renewal matched ${renewed.length} rows`);
    }
    return times;
  };
  await timeRenewals(warmup);
  await onPhase('lease', 'start');
  const leaseRenewal = await timeRenewals(runs);
  await onPhase('lease', 'end');
  await factory.finishRun(held, completed());
  await pool.end();

  const { default: PgBoss } = await import('pg-boss');
  const boss = new PgBoss({
    connectionString: databaseUrl,
    schema: 'pgboss_bench',
    supervise: false,
    schedule: false,
    max: 4,
  });
  boss.on('error', () => undefined);
  await boss.start();
  await boss.createQueue('bench_noop');
  const timeJobs = async (n) => {
    const times = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const id = await boss.send('bench_noop', { i });
      const [job] = await boss.fetch('bench_noop');
      if (!job || job.id !== id) throw new Error(`pg-boss fetched ${job?.id}, sent ${id}`);
      await boss.complete('bench_noop', job.id);
      times.push(performance.now() - t0);
    }
    return times;
  };
  await timeJobs(warmup);
  await onPhase('pg-boss', 'start');
  const pgBoss = await timeJobs(runs);
  await onPhase('pg-boss', 'end');
  await boss.stop({ graceful: false, wait: true, close: true }).catch(() => undefined);
  return { runs, recoverable, pgBoss, leaseRenewal, heartbeatMs: DEFAULT_HEARTBEAT_MS };
}
