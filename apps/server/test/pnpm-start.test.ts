import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/server-config.js';
import { openDatabase } from '../src/database/open-database.js';
import { applyMigrations } from '../src/database/prepare-database.js';
import { createLogger } from '../src/logger.js';
import { cleanEnv, runCli } from './cli-process.js';
import {
  FAULT_JWT_SECRET,
  freePort,
  QUIET_PERIODIC_JOBS,
  scratchDir,
  seedOxiCloud,
  sleep,
} from './fault-support.js';
import { type ProcInfo, processTree, running, shellQuote, Terminal } from './terminal.js';
import { waitUntil } from './wait-until.js';

/**
 * `pnpm start` as a person runs it, in a pseudo-terminal (tmux): a long run
 * going, then Ctrl-C (SIGINT to the whole foreground process group) or
 * SIGTERM to the top `pnpm` process (what a process manager sends). Either
 * way the run lands Paused with its cursor, "shut down cleanly" is logged,
 * and pnpm, the wrapper, the server and the embedded Postgres are all gone
 * within 15 s.
 */
const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const JOB = 'files_consistency';
const silent = createLogger({ level: 'silent', destination: 'stderr' });

interface Case {
  readonly label: string;
  /** `group-sigterm`: `kill -TERM -- -<pgid>` of pnpm's process group, as a process manager signals a service. */
  readonly stop: 'ctrl-c' | 'sigterm' | 'group-sigterm';
  readonly database: 'embedded' | 'DATABASE_URL';
}

/** An OxiCloud dataset of 8 drives × 60 files (few multi-chunk ones); returns its first admin's e-mail address. */
async function seed(pool: pg.Pool, dataDir: string): Promise<string> {
  await seedOxiCloud(pool, dataDir, {
    users: 6,
    filesPerDrive: 60,
    foldersPerDrive: { min: 3, max: 6 },
    multiChunkFileShare: 0.02,
    seed: 13,
  });
  const { rows } = await pool.query<{ email: string }>(
    "SELECT email FROM auth.users WHERE role = 'admin' ORDER BY email LIMIT 1",
  );
  return rows[0]!.email;
}

/** Runs `fn` with a pool on the database the server of `env` uses (starting the embedded one if needed). */
async function withDatabase<T>(env: Record<string, string>, fn: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const db = await openDatabase(loadConfig(env), silent, { max: 2 });
  try {
    return await fn(db.pool);
  } finally {
    await db.close();
  }
}

const dbs: TestDatabase[] = [];
afterAll(async () => {
  for (const db of dbs) await db.drop();
});

describe.each<Case>([
  { label: 'ctrl-c-embedded', stop: 'ctrl-c', database: 'embedded' },
  { label: 'sigterm-embedded', stop: 'sigterm', database: 'embedded' },
  { label: 'ctrl-c-database-url', stop: 'ctrl-c', database: 'DATABASE_URL' },
  { label: 'group-sigterm-database-url', stop: 'group-sigterm', database: 'DATABASE_URL' },
])('pnpm start, $stop, $database', ({ label, stop, database }) => {
  it('pauses the run with its cursor, logs "shut down cleanly", exits 0, and leaves no process after 15 s', async () => {
    const dir = scratchDir(label);
    const terminal = new Terminal(dir.path, label);
    try {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const vars: Record<string, string> = {
        OXICLOUD_DATA_DIR: join(dir.path, 'data'),
        OXICLOUD_HTTP_PORT: String(port),
        OXICLOUD_EMBEDDED_POSTGRES_PORT: String(await freePort()),
        OXIJOBS_JWT_SECRET: FAULT_JWT_SECRET,
        ...QUIET_PERIODIC_JOBS,
      };
      if (database === 'DATABASE_URL') {
        const db = await createTestDatabase({ empty: true });
        dbs.push(db);
        vars['DATABASE_URL'] = db.url;
      }
      const env = cleanEnv(vars);
      // The dataset brings its own admins (the server then creates no "admin"): the token is the first one's.
      const admin = await withDatabase(env, async (pool) => {
        await applyMigrations(pool, silent, { source: 'DATABASE_URL', createStorageDomain: true });
        return seed(pool, vars['OXICLOUD_DATA_DIR']!);
      });

      // Typed into the terminal as a user would.
      const exports = Object.entries(vars)
        .map(([k, v]) => `${k}=${shellQuote(v)}`)
        .join(' ');
      terminal.type(
        `cd ${shellQuote(repoRoot)} && export ${exports} && pnpm start; echo "pnpm start exited $?"`,
      );
      await waitUntil(
        'the server to answer /healthz',
        async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined),
        { ms: 240_000, everyMs: 200, retryOnError: true },
      );

      const token = (await runCli(['token', '--user', admin], env)).stdout.trim().split('\n').pop()!;
      const api = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${base}/api/admin/jobs${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return (await res.json()) as Record<string, unknown>;
      };
      const { run_id } = (await api('POST', `/${JOB}/trigger`, { batch_size: 10, throttle_ms: 300 })) as {
        run_id: string;
      };
      expect(run_id).toEqual(expect.any(String));
      await waitUntil(
        'the run to make progress',
        async () => {
          const run = (await api('GET', `/${JOB}/runs/${run_id}`)) as {
            status: string;
            stats: Record<string, unknown>;
          };
          return run.status === 'Running' && Number(run.stats['scanned_count'] ?? 0) >= 20 ? run : undefined;
        },
        { ms: 30_000, everyMs: 200, retryOnError: true },
      );

      // Every process of the tree: pnpm, sh, the wrapper, the server, and the embedded postmaster.
      const tree: ProcInfo[] = processTree(terminal.shellPid()).slice(1);
      const pnpm = tree.find((p) => /pnpm/.test(p.command) && / start$/.test(p.command));
      expect(pnpm, JSON.stringify(tree)).toBeDefined();
      expect(tree.some((p) => p.command.includes('apps/server/bin/oxijobs.js serve'))).toBe(true);
      const pids = tree.map((p) => p.pid);
      if (database === 'embedded') {
        const pidFile = join(vars['OXICLOUD_DATA_DIR']!, 'postgres', 'postmaster.pid');
        pids.push(Number(readFileSync(pidFile, 'utf8').split('\n')[0]));
      }

      const stoppedAt = Date.now();
      if (stop === 'ctrl-c') terminal.ctrlC();
      else if (stop === 'sigterm') process.kill(pnpm!.pid, 'SIGTERM');
      else process.kill(-pnpm!.pgid, 'SIGTERM');
      while (pids.some(running) && Date.now() - stoppedAt < 15_000) await sleep(100);
      const left = pids.filter(running);
      expect(left, `still running 15 s after ${stop}: ${left.join(', ')}`).toEqual([]);
      await waitUntil(
        'the exit status',
        async () => (/pnpm start exited \d+/.test(terminal.output()) ? true : undefined),
        { ms: 2_000, everyMs: 200, retryOnError: true },
      );
      const output = terminal.output();
      expect(output).toContain('shut down cleanly');
      expect(output).toContain('pnpm start exited 0');
      expect(output).not.toContain('ELIFECYCLE');
      expect(output).not.toContain('exiting now');
      expect(output).not.toMatch(/Cannot use a pool after calling end|run\.cancel_failed/);
      if (database === 'embedded') {
        // The order the README promises: "shut down cleanly", then the embedded Postgres stops.
        expect(output.indexOf('embedded Postgres stopped')).toBeGreaterThan(
          output.indexOf('shut down cleanly'),
        );
      }

      const row = await withDatabase(env, async (pool) => {
        const { rows } = await pool.query(
          `SELECT status, error_message, cursor IS NOT NULL AS has_cursor
             FROM jobs.recoverable_runs WHERE id = $1`,
          [run_id],
        );
        return rows[0];
      });
      // Paused by the shutdown itself (no "server restart mid-run" from a later sweep).
      expect(row).toEqual({ status: 'Paused', error_message: null, has_cursor: true });
    } finally {
      terminal.close();
      dir.remove();
    }
  });
});

/**
 * `nohup … &` from a terminal, both ways (the wrapper itself, and `pnpm
 * start`): the job's process group gets SIGHUP and the terminal closes (its
 * shell gets SIGHUP, passes it to its jobs and exits). Both servers still
 * serve 10 s later. Then the wrapper of one is killed with SIGKILL: its
 * server, told by the IPC channel closing, stops by itself.
 */
describe('nohup … & survives the terminal hanging up', () => {
  it('both ways still serve 10 s after a group SIGHUP and the shell exiting; a SIGKILLed wrapper takes its server down', async () => {
    const dir = scratchDir('nohup');
    const terminal = new Terminal(dir.path, 'nohup');
    const started: number[] = [];
    try {
      const ways = [
        {
          name: 'wrapper',
          command: `nohup node ${shellQuote(join(repoRoot, 'scripts', 'oxijobs.mjs'))} serve &`,
        },
        { name: 'pnpm', command: `nohup pnpm -C ${shellQuote(repoRoot)} start &` },
      ];
      const servers: Array<{ name: string; base: string; job: ProcInfo; tree: ProcInfo[] }> = [];
      for (const way of ways) {
        const db = await createTestDatabase({ domain: 'oxicloud' });
        dbs.push(db);
        const port = await freePort();
        const vars: Record<string, string> = {
          DATABASE_URL: db.url,
          OXICLOUD_DATA_DIR: join(dir.path, way.name),
          OXICLOUD_HTTP_PORT: String(port),
          OXIJOBS_JWT_SECRET: FAULT_JWT_SECRET,
          ...QUIET_PERIODIC_JOBS,
        };
        const exports = Object.entries(vars)
          .map(([k, v]) => `${k}=${shellQuote(v)}`)
          .join(' ');
        // Each from its own folder: nohup appends the output to ./nohup.out there.
        terminal.type(
          `mkdir -p ${shellQuote(vars['OXICLOUD_DATA_DIR']!)} && cd ${shellQuote(vars['OXICLOUD_DATA_DIR']!)} && export ${exports}`,
        );
        terminal.type(way.command);
        const base = `http://127.0.0.1:${port}`;
        await waitUntil(
          `the ${way.name} server to answer /healthz`,
          async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined),
          { ms: 240_000, everyMs: 200, retryOnError: true },
        );
        const tree = processTree(terminal.shellPid()).slice(1);
        const job = tree.find(
          (p) =>
            p.command.startsWith(way.name === 'pnpm' ? 'pnpm' : 'node') &&
            !servers.some((s) => s.tree.some((q) => q.pid === p.pid)),
        );
        expect(job, JSON.stringify(tree)).toBeDefined();
        const own = processTree(job!.pid);
        started.push(...own.map((p) => p.pid));
        servers.push({ name: way.name, base, job: job!, tree: own });
      }

      for (const { job } of servers) process.kill(-job.pgid, 'SIGHUP');
      const shell = terminal.shellPid();
      terminal.close(); // the terminal goes away: its shell gets SIGHUP, hangs up its jobs, and exits
      await waitUntil('the shell to exit', async () => (running(shell) ? undefined : true), {
        ms: 5_000,
        everyMs: 200,
        retryOnError: true,
      });
      // The issue's own check: still serving 10 s later.
      await sleep(10_000);
      for (const { name, base, tree } of servers) {
        expect((await fetch(`${base}/healthz`)).status, `${name} /healthz`).toBe(200);
        expect(
          tree.filter((p) => !running(p.pid)).map((p) => p.command),
          `${name}: gone`,
        ).toEqual([]);
        expect(readFileSync(join(dir.path, name, 'nohup.out'), 'utf8')).not.toContain('shutting down');
      }

      // No orphan left behind: a wrapper killed outright (SIGKILL) takes its server down, cleanly.
      const wrapper = servers[0]!;
      const server = wrapper.tree.find((p) => p.command.includes('apps/server/bin/oxijobs.js serve'))!;
      process.kill(wrapper.job.pid, 'SIGKILL');
      await waitUntil('the server to stop', async () => (running(server.pid) ? undefined : true), {
        ms: 15_000,
        everyMs: 200,
        retryOnError: true,
      });
      const log = readFileSync(join(dir.path, 'wrapper', 'nohup.out'), 'utf8');
      expect(log).toContain('launcher gone: shutting down');
      expect(log).toContain('shut down cleanly');
    } finally {
      terminal.close();
      for (const pid of started.filter(running)) process.kill(pid, 'SIGTERM');
      const deadline = Date.now() + 15_000;
      while (started.some(running) && Date.now() < deadline) await sleep(100);
      for (const pid of started.filter(running)) process.kill(pid, 'SIGKILL');
      dir.remove();
    }
  });
});
