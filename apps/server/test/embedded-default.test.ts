import { chmodSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, cleanEnv, jsonLines, runCli, startCli, waitForStatus } from './cli-process.js';

/** `oxijobs serve` with no DATABASE_URL: the embedded Postgres under OXICLOUD_DATA_DIR. */
describe('oxijobs serve (embedded Postgres default)', () => {
  let parent: string;
  let dataDir: string;
  let env: Record<string, string>;
  let server: CliProcess;
  let base: string;

  beforeAll(async () => {
    // The data dir's parent must be 0755 so the `postgres` user can enter it when running as root.
    parent = join(tmpdir(), `oxijobs-embedded-${process.pid}-${Date.now()}`);
    mkdirSync(parent, { recursive: true });
    chmodSync(parent, 0o755);
    dataDir = join(parent, 'data');
    const httpPort = await freePort();
    base = `http://127.0.0.1:${httpPort}`;
    env = cleanEnv({
      OXICLOUD_DATA_DIR: dataDir,
      OXICLOUD_HTTP_PORT: String(httpPort),
      OXICLOUD_EMBEDDED_POSTGRES_PORT: String(await freePort()),
    });
    server = startCli(['serve'], env);
    await waitForStatus(`${base}/healthz`, 200, { process: server, timeoutMs: 150_000 });
  });

  afterAll(async () => {
    if (server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    rmSync(parent, { recursive: true, force: true });
  });

  it('initialised and started its own Postgres under <data dir>/postgres', async () => {
    const body = (await (await fetch(`${base}/healthz`)).json()) as { status: string };
    expect(body.status).toBe('ok');
    expect(existsSync(join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(true);
    const connected = jsonLines(server.stdout()).find((l) => l['event'] === 'database.connected');
    expect(connected).toMatchObject({ source: 'embedded' });
  });

  it('`oxijobs migrate` while the server is up reuses the server’s Postgres', async () => {
    const result = await runCli(['migrate'], env);
    expect(result.stderr).not.toContain('oxijobs:');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^migrations: up to date \(\d+ migration\(s\)\) \(database: embedded \(reused\)\)$/m,
    );
    expect(jsonLines(result.stderr).some((l) => l['event'] === 'database.embedded_reused')).toBe(true);
    // The server's Postgres is still there: migrate did not stop what it did not start.
    await waitForStatus(`${base}/healthz`, 200, { process: server, timeoutMs: 5_000 });
  });

  it('a token minted by the CLI (same generated secret) is accepted', async () => {
    const result = await runCli(['token', '--user', 'admin'], env);
    expect(result.code).toBe(0);
    const token = result.stdout.trim().split('\n').at(-1)!;
    const res = await fetch(`${base}/api/admin/jobs`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
  });

  it('SIGTERM stops HTTP and the embedded Postgres, exit 0', async () => {
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
    const events = jsonLines(server.stdout()).map((l) => l['event']);
    // In the order the README promises: "shut down cleanly", then the embedded Postgres stops.
    const shutdown = ['server.stopping', 'server.stopped', 'database.embedded_stopped'];
    expect(events.filter((e) => shutdown.includes(String(e)))).toEqual(shutdown);
  });

  it('`oxijobs migrate` with the server down starts the embedded Postgres itself and stops it after', async () => {
    const result = await runCli(['migrate'], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('(database: embedded)');
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  });
});
