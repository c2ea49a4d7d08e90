// The server process under test: `node apps/server/bin/oxijobs.js serve` on OxiCloud's storage
// domain with the bench's database, a fresh data dir, periodic jobs off, and the event-loop probe
// preloaded.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './postgres.mjs';
import { sleep } from './stats.mjs';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'apps/server/bin/oxijobs.js');
const PROBE = join(ROOT, 'bench/server-probe.mjs');
const JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';

/** The env the server and `oxijobs token` share. */
export function serverEnv({ databaseUrl, dataDir, port }) {
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    OXICLOUD_DATA_DIR: dataDir,
    // OxiCloud's schema and blob layout (the storage root is `<dataDir>/storage`, `.blobs/<aa>/<hash>.blob`).
    OXICLOUD_STORAGE_DOMAIN: 'oxicloud',
    OXICLOUD_HTTP_PORT: String(port),
    OXIJOBS_JWT_SECRET: JWT_SECRET,
    OXICLOUD_LOG_LEVEL: 'warn',
    // No periodic job may fire and touch the data mid-benchmark.
    OXICLOUD_TRASH_CLEANUP_INTERVAL_HOURS: '0',
    OXICLOUD_STORAGE_USAGE_RECONCILE_INTERVAL_SECONDS: '0',
    OXIJOBS_GRANT_CLEANUP_INTERVAL_HOURS: '0',
    OXICLOUD_BENCH_PROBE_FILE: join(dataDir, 'event-loop-probe.json'),
  };
}

/** Reads VmRSS / VmHWM (KiB) of a process. */
export function memoryOf(pid) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { rssKiB: kib('VmRSS'), hwmKiB: kib('VmHWM') };
}

/** Samples RSS every `everyMs` until stopped; resets the kernel's peak (VmHWM) first. */
export function memorySampler(pid, everyMs = 50) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5'); // resets VmHWM to the current RSS
  } catch {
    // not permitted: VmHWM stays the peak since start; the sampled peak still counts
  }
  const start = memoryOf(pid);
  let peakRssKiB = start.rssKiB;
  const timer = setInterval(() => {
    try {
      peakRssKiB = Math.max(peakRssKiB, memoryOf(pid).rssKiB);
    } catch {
      // process gone
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const end = memoryOf(pid);
      return {
        startRssMiB: start.rssKiB / 1024,
        peakRssMiB: Math.max(peakRssKiB, end.rssKiB) / 1024,
        vmHwmMiB: end.hwmKiB / 1024,
        endRssMiB: end.rssKiB / 1024,
      };
    },
  };
}

/** `adminUser`: the username `oxijobs token --user` signs for (the dataset's first user is an admin). */
export async function startServer({ databaseUrl, dataDir, adminUser }) {
  const port = await freePort();
  const env = serverEnv({ databaseUrl, dataDir, port });
  // OXICLOUD_BENCH_SERVER_NODE_ARGS: node options for the server only (`--cpu-prof --cpu-prof-dir=…`,
  // which NODE_OPTIONS refuses), split on spaces.
  const nodeArgs = (process.env.OXICLOUD_BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', PROBE, CLI, 'serve'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = null;
  child.on('exit', (code, signal) => {
    exited = { code, signal };
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (exited) throw new Error(`server exited during boot (${JSON.stringify(exited)}):\n${output}`);
    try {
      const res = await fetch(`${base}/healthz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not answer /healthz in 120 s:\n${output}`);
    await sleep(100);
  }
  const token = spawnSync(process.execPath, [CLI, 'token', '--user', adminUser], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
  });
  if (token.status !== 0) throw new Error(`oxijobs token failed:\n${token.stderr}`);
  const bearer = token.stdout.trim().split('\n').pop();
  const probeFile = env.OXICLOUD_BENCH_PROBE_FILE;

  async function api(method, path, body) {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${text}`);
    return json;
  }

  return {
    pid: child.pid,
    base,
    token: bearer,
    api,
    output: () => output,
    /**
     * Triggers a recoverable job and waits for a terminal status, polling the run.
     * Returns the final RunSummary plus the server-side elapsed time (started_at →
     * completed_at) and the wall time seen here.
     */
    async runJob(name, { params = {}, deep = false, pollMs = 100, timeoutMs = 3_600_000 } = {}) {
      const t0 = performance.now();
      const started = await api('POST', `/api/admin/jobs/${name}/trigger${deep ? '?deep=true' : ''}`, params);
      if (!started.run_id || started.already_running || started.resumed) {
        throw new Error(`${name}: expected a fresh run, got ${JSON.stringify(started)}`);
      }
      for (;;) {
        const run = await api('GET', `/api/admin/jobs/${name}/runs/${started.run_id}`);
        if (!['Running', 'CancelRequested'].includes(run.status)) {
          const wallMs = performance.now() - t0;
          if (run.status !== 'Completed') {
            throw new Error(`${name}: run ${run.run_id} ended ${run.status}: ${run.error_message}`);
          }
          const serverMs = Date.parse(run.completed_at) - Date.parse(run.started_at);
          return { run, serverMs, wallMs };
        }
        if (performance.now() - t0 > timeoutMs)
          throw new Error(`${name}: still ${run.status} after ${timeoutMs} ms`);
        await sleep(pollMs);
      }
    },
    /** The event-loop delay histogram since the previous call (or boot), measured in the server. */
    async eventLoopDelay() {
      const before = existsSync(probeFile) ? statSync(probeFile).mtimeMs : 0;
      const prevSeq = existsSync(probeFile) ? JSON.parse(readFileSync(probeFile, 'utf8')).seq : 0;
      process.kill(child.pid, 'SIGUSR2');
      for (let i = 0; i < 100; i++) {
        await sleep(20);
        if (existsSync(probeFile) && statSync(probeFile).mtimeMs >= before) {
          const snap = JSON.parse(readFileSync(probeFile, 'utf8'));
          if (snap.seq > prevSeq) return snap;
        }
      }
      throw new Error('the server probe did not answer SIGUSR2 (was bench/server-probe.mjs preloaded?)');
    },
    async stop() {
      if (exited) return;
      const done = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await done;
      clearTimeout(timer);
    },
  };
}

/**
 * Starts bench/load.mjs in a second process. `done` resolves to its JSON summary when it
 * reaches its bounds; `stop()` ends it early (SIGTERM) and resolves to the same summary.
 */
export function startLoad({ url, token, rate, durationS, max }) {
  let child;
  const done = new Promise((resolve, reject) => {
    child = spawn(
      process.execPath,
      [
        join(ROOT, 'bench/load.mjs'),
        '--url',
        url,
        ...(token ? ['--token', token] : []),
        '--rate',
        String(rate),
        '--duration',
        String(durationS),
        '--max',
        String(max),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.stderr.on('data', (c) => {
      err += c;
    });
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`load.mjs exited ${code}: ${err}`));
      resolve(JSON.parse(out.trim().split('\n').pop()));
    });
  });
  return {
    done,
    stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return done;
    },
  };
}
