// The benchmarks on OxiCloud's storage domain. Each returns plain data; run.mjs renders it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { completed, DEFAULT_HEARTBEAT_MS, PgJobStoreFactory, RecoverableEngine } from '@oxicloud/recoverable';
import { LocalFsBlobStorage } from '@oxicloud/storage';
import { OxiBlobWalkRepository, OxiFileContentScan, oxiCloudScans } from '@oxicloud/storage/oxicloud';
import { createStorageMigrationJob } from '@oxicloud/tenants';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { memorySampler, startLoad } from './server.mjs';
import { median, sleep } from './stats.mjs';

/** A mime type with case and parameters dropped; NULL when unknown (the checks' rule, `KNOWN_MIME` of the adapters). */
const known = (column) =>
  `NULLIF(NULLIF(lower(btrim(split_part(COALESCE(${column}, ''), ';', 1))), ''), 'application/octet-stream')`;

/**
 * The one-statement yardsticks on OxiCloud's tables: the same question each check asks, over the
 * whole tables, raw (hash joins, no batches, no grace windows). `n` = the rows the check walks,
 * `bad` = what the statement flags (informative: the checks apply grace windows and re-verify).
 */
export const YARDSTICKS = {
  // A file's content: its manifest (file_hash = blob_hash) whose chunks all have a blob row, else
  // (no manifest) its legacy whole-file blob row; size and mime against that content, its folder's
  // drive, a live file in a trashed folder. The 64-zero placeholder hash has no content to compare.
  files_consistency: `
    WITH chunk_missing AS (
      SELECT DISTINCT m.file_hash
        FROM storage.chunk_manifests m
       CROSS JOIN LATERAL unnest(m.chunk_hashes) c(h)
        LEFT JOIN storage.blobs cb ON cb.hash = c.h
       WHERE cb.hash IS NULL
    )
    SELECT count(*) AS n,
           count(*) FILTER (WHERE (f.blob_hash <> repeat('0', 64) AND (
                 (m.file_hash IS NULL AND l.hash IS NULL) OR cm.file_hash IS NOT NULL
                 OR COALESCE(m.total_size, l.size) <> f.size
                 OR ${known('f.mime_type')}
                    <> ${known('CASE WHEN m.file_hash IS NOT NULL THEN m.content_type ELSE l.content_type END')}))
             OR (NOT f.is_trashed AND d.is_trashed)
             OR d.drive_id <> f.drive_id) AS bad
      FROM storage.files f
      LEFT JOIN storage.chunk_manifests m ON m.file_hash = f.blob_hash
      LEFT JOIN storage.blobs l ON l.hash = f.blob_hash AND m.file_hash IS NULL
      LEFT JOIN chunk_missing cm ON cm.file_hash = m.file_hash
      LEFT JOIN storage.folders d ON d.id = f.folder_id`,
  // Every folder's chain up to its drive's root folder (orphan_root) as one recursive statement:
  // reached when the chain's top is the drive's root_folder_id, or a trashed top (a trashed subtree).
  folders_consistency_chain: `
    WITH RECURSIVE up (start_id, drive_id, node, next, node_trashed) AS (
      SELECT c.id, c.drive_id, c.id, c.parent_id, c.is_trashed FROM storage.folders c
      UNION ALL
      SELECT u.start_id, u.drive_id, f.id, f.parent_id, f.is_trashed
        FROM up u JOIN storage.folders f ON f.id = u.next AND f.drive_id = u.drive_id
    ) CYCLE node SET is_cycle USING visited,
    tops AS (
      SELECT u.start_id,
             bool_or(u.next IS NULL AND NOT u.is_cycle AND (u.node_trashed OR d.id IS NOT NULL)) AS reached
        FROM up u
        LEFT JOIN storage.drives d ON d.id = u.drive_id AND d.root_folder_id = u.node
       GROUP BY u.start_id
    )
    SELECT count(*) AS n, count(*) FILTER (WHERE NOT reached) AS bad FROM tops`,
  // The parent join: path (root: its name; else parent path / name), lpath (root: its id's label;
  // else parent lpath . label), a live folder under a trashed parent, the parent in another drive.
  folders_consistency: `
    SELECT count(*) AS n,
           count(*) FILTER (WHERE (NOT c.is_trashed AND COALESCE(p.is_trashed, false))
             OR c.path IS DISTINCT FROM CASE WHEN c.parent_id IS NULL THEN c.name ELSE p.path || '/' || c.name END
             OR c.lpath::text IS DISTINCT FROM CASE WHEN c.parent_id IS NULL THEN replace(c.id::text, '-', '_')
                                                    ELSE p.lpath::text || '.' || replace(c.id::text, '-', '_') END
             OR p.drive_id <> c.drive_id) AS bad
      FROM storage.folders c
      LEFT JOIN storage.folders p ON p.id = c.parent_id`,
  // Each blob row's ref_count: the distinct manifests listing it as a chunk; else 0 for a
  // manifest's own name; else (legacy) the files naming it; and orphaned_at set exactly at 0.
  blobs_consistency: `
    WITH listing AS (
      SELECT c.h AS hash, count(DISTINCT m.file_hash) AS n
        FROM storage.chunk_manifests m CROSS JOIN LATERAL unnest(m.chunk_hashes) c(h)
       GROUP BY c.h
    ),
    fc AS (SELECT blob_hash AS hash, count(*) AS n FROM storage.files GROUP BY blob_hash)
    SELECT count(*) AS n,
           count(*) FILTER (WHERE b.ref_count <> CASE WHEN l.n > 0 THEN l.n
                                                      WHEN nm.file_hash IS NOT NULL THEN 0
                                                      ELSE COALESCE(fc.n, 0) END
             OR (b.ref_count = 0 AND b.orphaned_at IS NULL)) AS bad
      FROM storage.blobs b
      LEFT JOIN listing l ON l.hash = b.hash
      LEFT JOIN fc ON fc.hash = b.hash
      LEFT JOIN storage.chunk_manifests nm ON nm.file_hash = b.hash`,
  // Lingering expired grants (past the 1-day cleanup grace + 7-day margin), and live grants whose
  // subject or resource is gone.
  grants_consistency: `
    SELECT count(*) AS n,
           count(*) FILTER (WHERE g.expires_at <= now() - interval '8 days'
             OR ((g.expires_at IS NULL OR g.expires_at > now())
                 AND NOT (CASE g.subject_type
                            WHEN 'user' THEN EXISTS (SELECT 1 FROM auth.users x WHERE x.id = g.subject_id)
                            WHEN 'group' THEN EXISTS (SELECT 1 FROM auth.subject_groups x WHERE x.id = g.subject_id)
                            WHEN 'token' THEN EXISTS (SELECT 1 FROM storage.shares x WHERE x.id = g.subject_id)
                            ELSE false END
                      AND CASE g.resource_type
                            WHEN 'drive' THEN EXISTS (SELECT 1 FROM storage.drives x WHERE x.id = g.resource_id)
                            WHEN 'folder' THEN EXISTS (SELECT 1 FROM storage.folders x WHERE x.id = g.resource_id)
                            WHEN 'file' THEN EXISTS (SELECT 1 FROM storage.files x WHERE x.id = g.resource_id)
                            WHEN 'calendar' THEN EXISTS (SELECT 1 FROM caldav.calendars x WHERE x.id = g.resource_id)
                            WHEN 'address_book' THEN EXISTS (SELECT 1 FROM carddav.address_books x WHERE x.id = g.resource_id)
                            WHEN 'playlist' THEN EXISTS (SELECT 1 FROM audio.playlists x WHERE x.id = g.resource_id)
                            ELSE false END))) AS bad
      FROM storage.role_grants g`,
  // Drive usage: Σ size of the drive's live files (trashed files not counted); the user envelope:
  // Σ used_bytes of the personal drives the user owns (owner grants), externals excluded.
  drives_consistency: `
    WITH fs AS (SELECT drive_id, sum(size) AS actual FROM storage.files WHERE NOT is_trashed GROUP BY drive_id),
         us AS (SELECT g.subject_id AS user_id, sum(d.used_bytes) AS actual
                  FROM storage.role_grants g
                  JOIN storage.drives d ON d.id = g.resource_id AND d.kind = 'personal'
                 WHERE g.subject_type = 'user' AND g.resource_type = 'drive' AND g.role = 'owner'
                 GROUP BY g.subject_id)
    SELECT (SELECT count(*) FROM storage.drives) + (SELECT count(*) FROM auth.users) AS n,
           (SELECT count(*) FROM storage.drives d LEFT JOIN fs ON fs.drive_id = d.id
             WHERE d.used_bytes <> COALESCE(fs.actual, 0))
         + (SELECT count(*) FROM auth.users u LEFT JOIN us ON us.user_id = u.id
             WHERE NOT u.is_external AND u.storage_used_bytes <> COALESCE(us.actual, 0)) AS bad`,
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
    // The server's scans on OxiCloud's tables; files_consistency's without its row stream when `stream` is false.
    const adapters = [
      ...(stream ? [] : [new OxiFileContentScan(db, { segmentRows: 0 })]),
      ...oxiCloudScans(db),
    ];
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

/**
 * b3sum over every blob object under `blobDir` (`<storage root>/.blobs`: the chunks and legacy
 * blobs, what a deep verify re-hashes; not `.thumbnails`), one process, files listed by find.
 */
export function b3sumBench(blobDir, threads) {
  const script = `find . -type f -name '*.blob' -print0 | xargs -0 b3sum ${threads ? `--num-threads ${threads}` : ''} > /dev/null`;
  return timeCommand('bash', ['-c', script], { cwd: blobDir });
}

/** Benchmark 5: storage_consistency deep=true through the server, /healthz latency from a second process. */
export async function deepBench(server, { rate }) {
  const load = startLoad({ url: `${server.base}/healthz`, rate, durationS: 600, max: rate * 600 });
  await sleep(200);
  const scan = await serverScan(server, 'storage_consistency', {}, { deep: true });
  const latency = await load.stop();
  return { scan, latency };
}

/**
 * Benchmark 6: storage_migration local → a second storage root (same `.blobs/<aa>/<hash>.blob`
 * keys), in this process, beside cp -r of the `.blobs` tree (and cp -r; sync).
 */
export async function migrationBench({ databaseUrl, storageRoot, blobDir, workDir, concurrencies }) {
  const target = join(workDir, 'migration-target');
  const copy = join(workDir, 'cp-target');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 8 });
  const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
  const fresh = (dir) => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
  };
  try {
    const source = new LocalFsBlobStorage({ root: storageRoot });
    const destination = new LocalFsBlobStorage({ root: target });
    const engine = new RecoverableEngine({ pool });
    engine.register(
      createStorageMigrationJob({
        blobs: new OxiBlobWalkRepository(db),
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
    const cpMs = timeCommand('cp', ['-r', blobDir, copy]);
    rmSync(copy, { recursive: true, force: true });
    timeCommand('sync', []);
    const cpSyncMs = timeCommand('bash', [
      '-c',
      `cp -r ${JSON.stringify(blobDir)} ${JSON.stringify(copy)} && sync`,
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
