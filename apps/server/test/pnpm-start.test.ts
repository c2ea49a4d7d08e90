import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateDataset } from '@oxicloud/dataset';
import { LocalFsBlobStorage } from '@oxicloud/storage';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/server-config.js';
import { openDatabase } from '../src/database/open-database.js';
import { applyMigrations } from '../src/database/prepare-database.js';
import { createLogger } from '../src/logger.js';
import { cleanEnv, runCli } from './cli-process.js';
import { FAULT_JWT_SECRET, freePort, QUIET_PERIODIC_JOBS, scratchDir, sleep } from './fault-support.js';
import { type ProcInfo, processTree, running, shellQuote, Terminal } from './terminal.js';

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
  readonly stop: 'ctrl-c' | 'sigterm';
  readonly database: 'embedded' | 'DATABASE_URL';
}

async function seed(pool: pg.Pool, dataDir: string): Promise<void> {
  await generateDataset({
    pool,
    blobs: new LocalFsBlobStorage({ root: join(dataDir, 'blobs') }),
    options: { users: 6, filesPerUser: 60, foldersPerDrive: { min: 3, max: 6 }, seed: 13 },
  });
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

async function waitUntil<T>(what: string, probe: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
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
])('pnpm start, $stop, $database', ({ label, stop, database }) => {
  it('pauses the run with its cursor, logs "shut down cleanly", and leaves no process after 15 s', async () => {
    const dir = scratchDir(label);
    const terminal = new Terminal(dir.path, label);
    try {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const vars: Record<string, string> = {
        OXICLOUD_DATA_DIR: join(dir.path, 'data'),
        OXICLOUD_HTTP_PORT: String(port),
        OXICLOUD_EMBEDDED_POSTGRES_PORT: String(await freePort()),
        OXICLOUD_JWT_SECRET: FAULT_JWT_SECRET,
        ...QUIET_PERIODIC_JOBS,
      };
      if (database === 'DATABASE_URL') {
        const db = await createTestDatabase();
        dbs.push(db);
        vars['DATABASE_URL'] = db.url;
      }
      const env = cleanEnv(vars);
      await withDatabase(env, async (pool) => {
        await applyMigrations(pool, silent);
        await seed(pool, vars['OXICLOUD_DATA_DIR']!);
      });

      // Typed into the terminal as a user would.
      const exports = Object.entries(vars)
        .map(([k, v]) => `${k}=${shellQuote(v)}`)
        .join(' ');
      terminal.type(`cd ${shellQuote(repoRoot)} && export ${exports} && pnpm start`);
      await waitUntil(
        'the server to answer /healthz',
        async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined),
        240_000,
      );

      const token = (await runCli(['token', '--user', 'admin'], env)).stdout.trim().split('\n').pop()!;
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
        30_000,
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
      else process.kill(pnpm!.pid, 'SIGTERM');
      while (pids.some(running) && Date.now() - stoppedAt < 15_000) await sleep(100);
      const left = pids.filter(running);
      expect(left, `still running 15 s after ${stop}: ${left.join(', ')}`).toEqual([]);
      await waitUntil(
        'the last log line',
        async () => (terminal.output().includes('shut down cleanly') ? true : undefined),
        2_000,
      );
      expect(terminal.output()).not.toMatch(/Cannot use a pool after calling end|run\.cancel_failed/);

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
