import { join } from 'node:path';
import { type FaultName, generateDataset } from '@oxicloud/dataset';
import { LocalFsBlobStorage } from '@oxicloud/storage';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForStatus } from './cli-process.js';
import {
  adminClient,
  adminToken,
  type CliProcess,
  findingSet,
  freePort,
  killHard,
  scratchDir,
  serverEnv,
  sleep,
  startServer,
} from './fault-support.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

const JOB = 'files_consistency';
const PARAMS = { batch_size: 20, throttle_ms: 60 };
const OUTAGE_MS = Number(process.env['OXICLOUD_FAULT_OUTAGE_MS'] ?? 10_000);
const FAULTS: FaultName[] = ['live_file_under_trashed_folder', 'missing_blob_row', 'blob_size_mismatch'];

/**
 * Issue 8: Postgres goes away for 10 s in the middle of a run (a TCP proxy in
 * front of it cuts every connection and refuses new ones). The server process
 * stays up and says so on /healthz (503 degraded while down, 200 after); the
 * run ends Failed or Paused with a message naming the database problem, never
 * stuck Running; once Postgres is back a trigger resumes (or restarts) it, and
 * it finds the same findings as a clean run.
 */
describe('Postgres stopped in the middle of a run', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof scratchDir>;
  let proxy: TcpProxy;
  let server: CliProcess | undefined;
  let base: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = scratchDir('fault-outage');
    await generateDataset({
      pool: db.pool,
      blobs: new LocalFsBlobStorage({ root: join(dir.path, 'blobs') }),
      options: {
        users: 20,
        filesPerUser: 40,
        foldersPerDrive: { min: 3, max: 6 },
        trashedFolderShare: 0.2,
        seed: 77,
        faults: FAULTS,
        faultsPerKind: 3,
      },
    });
    const url = new URL(db.url);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) });
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = await startServer(serverEnv({ databaseUrl: url.toString(), dataDir: dir.path, httpPort: port }));
  }, 120_000);

  afterAll(async () => {
    if (server) await killHard(server);
    await proxy?.close();
    await db?.drop();
    dir?.remove();
  });

  it('stays up, reports degraded, lands the run with a clear message, and resumes to the clean findings', async () => {
    const api = adminClient(base, await adminToken(db.pool));
    const started = await api.trigger(JOB, PARAMS);
    // Mid-run: a few checkpoints in.
    const deadline = Date.now() + 20_000;
    while (Number((await api.run(JOB, started.run_id)).stats['scanned_count'] ?? 0) < 3 * PARAMS.batch_size) {
      if (Date.now() > deadline) throw new Error('the run made no progress');
      await sleep(20);
    }

    const downAt = Date.now();
    await proxy.down();
    const degraded = (await waitForStatus(`${base}/healthz`, 503, { process: server, timeoutMs: 8_000 })) as {
      status: string;
      database: { ok: boolean; error: string };
    };
    expect(degraded).toMatchObject({ status: 'degraded', database: { ok: false } });
    expect(degraded.database.error.length).toBeGreaterThan(0);
    // While down, the admin API answers JSON errors (never hangs, never crashes the process).
    const during = await fetch(`${base}/api/admin/jobs/${JOB}/runs/${started.run_id}`, {
      headers: { authorization: `Bearer ${await adminToken(db.pool)}` },
    });
    expect(during.status).toBeGreaterThanOrEqual(500);
    expect(((await during.json()) as { error: { code: string } }).error.code).toBe('UNAVAILABLE');
    await sleep(Math.max(0, OUTAGE_MS - (Date.now() - downAt)));
    expect(server?.child.exitCode).toBeNull();
    await proxy.up();
    await waitForStatus(`${base}/healthz`, 200, { process: server, timeoutMs: 20_000 });

    // The interrupted run landed (Failed or Paused) with a message about the database, not stuck Running.
    const landed = await api.waitFor(JOB, started.run_id, ['Failed', 'Paused', 'Completed'], 30_000);
    expect(['Failed', 'Paused'], JSON.stringify(landed)).toContain(landed.status);
    expect(landed.error_message ?? '', JSON.stringify(landed)).toMatch(
      /connect|connection|terminat|ECONNREFUSED|database|timeout/i,
    );

    // A trigger resumes (Paused) or restarts (Failed) it, to completion.
    const again = await api.trigger(JOB);
    expect(again.resumed).toBe(landed.status === 'Paused');
    const finished = await api.waitFor(JOB, again.run_id, ['Completed', 'Failed'], 60_000);
    expect(finished.status, JSON.stringify(finished)).toBe('Completed');

    // A clean run on the same (unchanged) data finds the same.
    const clean = await api.trigger(JOB, { batch_size: 1000 });
    expect(clean.resumed).toBe(false);
    await api.waitFor(JOB, clean.run_id, ['Completed'], 60_000);
    const got = findingSet((await api.findings(JOB, again.run_id)).findings);
    const want = findingSet((await api.findings(JOB, clean.run_id)).findings);
    expect(want.length).toBeGreaterThanOrEqual(6);
    expect(got).toEqual(want);
    expect(server?.child.exitCode).toBeNull();
  }, 120_000);
});
