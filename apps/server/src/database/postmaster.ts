import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  assertReachable,
  EmbeddedPostgresError,
  postgresBinaries,
  postgresSystemUser,
} from '@oxicloud/embedded-postgres';
import type { ServerConfig } from '../config/server-config.js';
import { ServerError } from '../server-error.js';
import { findPortOwner } from './port-owner.js';

/** What to do besides `chmod o+x` when the `postgres` system user cannot reach the data folder. */
export const UNREACHABLE_FIX =
  'set OXICLOUD_DATA_DIR to a folder it can reach (for example /var/lib/oxicloud)';

/** The log file of the embedded postmaster, inside its data directory. */
export const POSTMASTER_LOG = 'postmaster.log';

/** A postmaster this process started, in its own session. */
export interface Postmaster {
  readonly pid: number;
  /** Fast shutdown (SIGINT), resolved when the postmaster has exited. */
  stop(): Promise<void>;
  /** Fast shutdown (SIGINT) without waiting: for a forced exit. */
  stopNow(): void;
}

function alive(pid: number): boolean {
  // A zombie (exited, not yet reaped by an init that does not reap) is gone.
  try {
    if (/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) return false;
  } catch {
    // no /proc entry: ask kill(0) below
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function tail(path: string, lines: number): Promise<string> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text.trim().split('\n').slice(-lines).join(' ').replace(/\s+/g, ' ').slice(0, 600);
}

/** Why the port is taken, and what to do about it. */
async function portTakenMessage(port: number): Promise<string> {
  const owner = await findPortOwner(port);
  const fix = `set OXICLOUD_EMBEDDED_POSTGRES_PORT to a free port (and the same value in every terminal that runs oxijobs), or DATABASE_URL to use another Postgres`;
  if (owner?.postgresDataDir !== undefined) {
    const dir = resolve(owner.postgresDataDir);
    return (
      `port 127.0.0.1:${port} is taken by another Postgres (pid ${owner.pid}, data dir ${dir}` +
      `${dir.endsWith('/postgres') ? `: the embedded Postgres of OXICLOUD_DATA_DIR=${dir.slice(0, -'/postgres'.length)}` : ''}); ${fix}`
    );
  }
  if (owner !== undefined) {
    return `port 127.0.0.1:${port} is taken by another program (pid ${owner.pid}: ${owner.command.slice(0, 200)}); ${fix}`;
  }
  return `port 127.0.0.1:${port} is taken by a process this user cannot see; ${fix}`;
}

/**
 * Starts the cluster of `config.postgresDir` with `pg_ctl start`, which puts
 * the postmaster in its own session: the terminal's Ctrl-C (SIGINT to the
 * foreground process group) reaches the server, never Postgres directly, so
 * the server can pause its runs before it stops the database.
 *
 * @throws ServerError `DATABASE_UNAVAILABLE` naming the cause (the port's owner, or the log's last lines).
 */
export async function startPostmaster(config: ServerConfig, port: number): Promise<Postmaster> {
  const log = join(config.postgresDir, POSTMASTER_LOG);
  let owner: Awaited<ReturnType<typeof postgresSystemUser>>;
  let pgCtl: string;
  try {
    // As root, Postgres runs as the `postgres` system user (created at initdb).
    owner = await postgresSystemUser({ create: false });
    await assertReachable(config.postgresDir, owner, 'the data folder', UNREACHABLE_FIX);
    pgCtl = (await postgresBinaries({ runAs: owner })).pg_ctl;
  } catch (cause) {
    if (!(cause instanceof EmbeddedPostgresError)) throw cause;
    throw new ServerError('DATABASE_UNAVAILABLE', cause.message, { cause });
  }
  const taken = await findPortOwner(port);
  if (taken !== undefined) {
    throw new ServerError('DATABASE_UNAVAILABLE', await portTakenMessage(port));
  }
  const result = await new Promise<{ code: number; output: string }>((done) => {
    execFile(
      pgCtl,
      ['start', '-D', config.postgresDir, '-l', log, '-w', '-t', '60', '-o', `-p ${port}`],
      { cwd: config.postgresDir, env: { ...process.env, LC_MESSAGES: 'C' }, ...owner },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        done({ code, output: `${stdout}${stderr}` });
      },
    );
  });
  if (result.code !== 0) {
    const logTail = await tail(log, 4);
    if (/address already in use|could not create any TCP\/IP sockets/i.test(logTail)) {
      throw new ServerError('DATABASE_UNAVAILABLE', await portTakenMessage(port));
    }
    const detail = `${result.output} ${logTail}`.replace(/\s+/g, ' ').trim().slice(0, 800);
    throw new ServerError(
      'DATABASE_UNAVAILABLE',
      `the embedded Postgres in ${config.postgresDir} could not start on 127.0.0.1:${port}: ${detail || `pg_ctl exited ${result.code}`} (log: ${log}); ` +
        'set OXICLOUD_EMBEDDED_POSTGRES_PORT to a free port, or DATABASE_URL to use another Postgres',
    );
  }
  const pid = Number((await readFile(join(config.postgresDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch {
      // already gone
    }
  };
  return {
    pid,
    stopNow: () => signal('SIGINT'),
    async stop() {
      signal('SIGINT');
      const deadline = Date.now() + 30_000;
      while (alive(pid)) {
        if (Date.now() > deadline) signal('SIGQUIT');
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}
