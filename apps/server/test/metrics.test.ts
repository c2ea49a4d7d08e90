import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminClient,
  adminToken,
  type CliProcess,
  freePort,
  killHard,
  scratchDir,
  seedOxiCloud,
  serverEnv,
  startServer,
} from './fault-support.js';
import { parseSamples, type Sample, sampleValue } from './prometheus-text.js';

const PROMTOOL = '/usr/bin/promtool';
const TOKEN = 'metrics-test-token-0123456789';
const PERIODIC = ['trash_cleanup', 'storage_reconcile', 'dedup_gc', 'grant_cleanup', 'consistency_batch'];

interface Node {
  server: CliProcess;
  base: string;
  metricsUrl: string;
  metricsPort: number;
}

async function scrape(node: Node, token: string | null = TOKEN): Promise<Response> {
  return fetch(node.metricsUrl, token === null ? {} : { headers: { authorization: `Bearer ${token}` } });
}

async function samplesOf(node: Node): Promise<{ text: string; samples: Sample[] }> {
  const res = await scrape(node);
  const text = await res.text();
  expect(res.status, text).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return { text, samples: parseSamples(text) };
}

const epoch = (at: Date | null) => (at === null ? undefined : at.getTime() / 1000);

/**
 * Issue 20: two server processes on one database run every job; each serves
 * /metrics on its own listener. promtool accepts both outputs; the counters
 * are what each process did; the timestamps are the database's, the same on
 * both nodes; the listener refuses a scrape without the token and is not
 * reachable on another interface or on the admin port.
 */
describe('/metrics of two processes on one database', () => {
  let db: TestDatabase;
  const dirs: Array<ReturnType<typeof scratchDir>> = [];
  const nodes: Node[] = [];

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    const closedPort = await freePort();
    for (let i = 0; i < 2; i++) {
      const dir = scratchDir(`metrics-${i}`);
      dirs.push(dir);
      if (i === 0) {
        await seedOxiCloud(db.pool, dir.path, { users: 3, filesPerDrive: 20, seed: 20 });
      }
      const port = await freePort();
      const metricsPort = await freePort();
      const server = await startServer(
        serverEnv({
          databaseUrl: db.url,
          dataDir: dir.path,
          httpPort: port,
          extra: {
            OXICLOUD_METRICS_ADDR: `127.0.0.1:${metricsPort}`,
            OXICLOUD_METRICS_TOKEN: TOKEN,
            // S3 as a migration target that does not answer: storage_migration runs and fails.
            OXICLOUD_S3_BUCKET: 'unreachable',
            OXICLOUD_S3_REGION: 'us-east-1',
            OXICLOUD_S3_ENDPOINT_URL: `http://127.0.0.1:${closedPort}`,
            OXICLOUD_S3_ACCESS_KEY: 'test',
            OXICLOUD_S3_SECRET_KEY: 'test-secret',
            OXICLOUD_S3_FORCE_PATH_STYLE: 'true',
          },
        }),
      );
      nodes.push({
        server,
        base: `http://127.0.0.1:${port}`,
        metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
        metricsPort,
      });
    }
  }, 120_000);

  afterAll(async () => {
    for (const node of nodes) await killHard(node.server);
    await db?.drop();
    for (const dir of dirs) dir.remove();
  });

  it('passes promtool and reports per-process counters and the database timestamps', async () => {
    const token = await adminToken(db.pool);
    const [a, b] = nodes.map((n) => adminClient(n.base, token)) as [
      ReturnType<typeof adminClient>,
      ReturnType<typeof adminClient>,
    ];
    const [nodeA, nodeB] = nodes as [Node, Node];
    const runPeriodic = async (node: Node, job: string) => {
      const res = await fetch(`${node.base}/api/admin/jobs/${job}/trigger`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.json()) as { ok: boolean };
    };
    // Every Part 1 job on A; two of them and the batch (every *_consistency check) on B.
    for (const job of PERIODIC.filter((j) => j !== 'consistency_batch')) await runPeriodic(nodeA, job);
    await runPeriodic(nodeB, 'trash_cleanup');
    await runPeriodic(nodeB, 'grant_cleanup');
    expect((await runPeriodic(nodeB, 'consistency_batch')).ok).toBe(true);
    // Every recoverable job on A, one again on B; storage_migration to the dead S3 fails.
    for (const job of ['files_consistency', 'reextract_audio', 'reextract_image']) {
      const run = await a.trigger(job);
      expect((await a.waitFor(job, run.run_id, ['Completed', 'Failed'])).status).toBe('Completed');
    }
    const again = await b.trigger('reextract_audio');
    await b.waitFor('reextract_audio', again.run_id, ['Completed']);
    const migration = await a.trigger('storage_migration', { target: 's3' });
    expect(
      (await a.waitFor('storage_migration', migration.run_id, ['Completed', 'Failed'], 90_000)).status,
    ).toBe('Failed');

    const [outA, outB] = [await samplesOf(nodeA), await samplesOf(nodeB)];
    expect(existsSync(PROMTOOL), `${PROMTOOL} is missing: run scripts/setup-system.sh`).toBe(true);
    for (const out of [outA, outB]) {
      const check = spawnSync(PROMTOOL, ['check', 'metrics'], { input: out.text, encoding: 'utf8' });
      expect(check.status, `${check.stdout}${check.stderr}`).toBe(0);
      expect(`${check.stdout}${check.stderr}`.trim()).toBe('');
    }

    // Counters: what each process did.
    const runs = (s: Sample[], job: string, outcome: string) =>
      sampleValue(s, 'oxicloud_job_runs_total', { job, outcome }) ?? 0;
    expect(runs(outA.samples, 'trash_cleanup', 'ok')).toBe(1);
    expect(runs(outB.samples, 'trash_cleanup', 'ok')).toBe(1);
    expect(runs(outA.samples, 'consistency_batch', 'ok')).toBe(0);
    expect(runs(outB.samples, 'consistency_batch', 'ok')).toBe(1);
    expect(runs(outA.samples, 'storage_reconcile', 'ok')).toBe(1);
    expect(runs(outB.samples, 'storage_reconcile', 'ok')).toBe(0);
    // Recoverable runs: the two processes' counters add up to the runs in the history.
    const { rows: history } = await db.pool.query<{ job_name: string; status: string; n: string }>(
      'SELECT job_name, status, count(*) AS n FROM jobs.recoverable_runs GROUP BY 1, 2',
    );
    expect(history.length).toBeGreaterThanOrEqual(7);
    for (const row of history) {
      const outcome = row.status === 'Completed' ? 'ok' : row.status === 'Failed' ? 'err' : 'paused';
      const sum = runs(outA.samples, row.job_name, outcome) + runs(outB.samples, row.job_name, outcome);
      expect(sum, `${row.job_name} ${row.status}`).toBe(Number(row.n));
      for (const out of [outA, outB]) {
        expect(
          sampleValue(out.samples, 'oxicloud_job_runs_recorded', { job: row.job_name, status: row.status }),
        ).toBe(Number(row.n));
      }
    }
    expect(runs(outA.samples, 'storage_migration', 'err')).toBe(1);
    const count = (s: Sample[], name: string, job: string) => sampleValue(s, name, { job }) ?? 0;
    expect(count(outA.samples, 'oxicloud_job_run_duration_seconds_count', 'files_consistency')).toBe(1);
    expect(count(outB.samples, 'oxicloud_job_run_duration_seconds_count', 'files_consistency')).toBe(1);

    // Timestamps: the database's, identical on both nodes.
    const { rows: fresh } = await db.pool.query<{
      job_name: string;
      first_registered_at: Date;
      last_run_at: Date | null;
      last_success_at: Date | null;
    }>('SELECT job_name, first_registered_at, last_run_at, last_success_at FROM jobs.job_registrations');
    const jobs = new Set(fresh.map((r) => r.job_name));
    for (const job of [
      ...PERIODIC,
      'files_consistency',
      'storage_consistency',
      'reextract_audio',
      'storage_migration',
    ]) {
      expect(jobs.has(job), job).toBe(true);
    }
    for (const row of fresh) {
      for (const [metric, at] of [
        ['oxicloud_job_last_success_timestamp_seconds', row.last_success_at],
        ['oxicloud_job_last_run_timestamp_seconds', row.last_run_at],
        ['oxicloud_job_registered_timestamp_seconds', row.first_registered_at],
      ] as const) {
        const va = sampleValue(outA.samples, metric, { job: row.job_name });
        const vb = sampleValue(outB.samples, metric, { job: row.job_name });
        expect(va, `${metric} ${row.job_name}`).toBe(vb);
        if (at === null) expect(va).toBeUndefined();
        else expect(va, `${metric} ${row.job_name}`).toBeCloseTo(epoch(at) as number, 3);
      }
    }
    // A recoverable job's last success is its newest Completed run's end.
    const { rows: completed } = await db.pool.query<{ job_name: string; at: Date }>(
      `SELECT job_name, max(completed_at) AS at FROM jobs.recoverable_runs WHERE status = 'Completed' GROUP BY 1`,
    );
    for (const row of completed) {
      expect(
        sampleValue(outA.samples, 'oxicloud_job_last_success_timestamp_seconds', { job: row.job_name }),
        row.job_name,
      ).toBeCloseTo(epoch(row.at) as number, 3);
    }
    expect(
      sampleValue(outA.samples, 'oxicloud_job_last_success_timestamp_seconds', { job: 'storage_migration' }),
    ).toBe(undefined);
    expect(
      sampleValue(outA.samples, 'oxicloud_job_last_run_timestamp_seconds', { job: 'storage_migration' }),
    ).toBeDefined();
    // Nothing runs now; nobody is overdue on a fresh database; the pool and process defaults are there.
    expect(outA.samples.filter((s) => s.name === 'oxicloud_job_running').every((s) => s.value === 0)).toBe(
      true,
    );
    expect(outA.samples.filter((s) => s.name === 'oxicloud_job_overdue').every((s) => s.value === 0)).toBe(
      true,
    );
    expect(
      sampleValue(outA.samples, 'oxicloud_job_max_age_seconds', {
        job: 'files_consistency',
        mode: 'regular',
      }),
    ).toBe(7 * 24 * 3600);
    expect(
      sampleValue(outA.samples, 'oxicloud_job_max_age_seconds', { job: 'storage_consistency', mode: 'deep' }),
    ).toBe(30 * 24 * 3600);
    expect(sampleValue(outA.samples, 'oxicloud_db_pool_clients')).toBeGreaterThan(0);
    expect(sampleValue(outA.samples, 'nodejs_eventloop_lag_seconds')).toBeDefined();
    const { rows: scanned } = await db.pool.query<{ n: string }>(
      `SELECT (stats->>'scanned_count') AS n FROM jobs.recoverable_runs
        WHERE job_name = 'files_consistency' ORDER BY started_at DESC LIMIT 1`,
    );
    expect(Number(scanned[0]?.n)).toBeGreaterThan(0);
    expect(sampleValue(outA.samples, 'oxicloud_run_rows_scanned_total', { job: 'files_consistency' })).toBe(
      Number(scanned[0]?.n),
    );
  });

  it('refuses a scrape without the token or with a wrong one, and serves nothing on the admin port', async () => {
    const node = nodes[0] as Node;
    const none = await scrape(node, null);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await none.text()).not.toContain('oxicloud_');
    const wrong = await scrape(node, `${TOKEN}x`);
    expect(wrong.status).toBe(401);
    expect(
      (await fetch(`${node.base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status,
    ).toBe(404);
  });

  it('is bound to loopback only: another interface of this machine is refused', async (ctx) => {
    const other = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
    if (other === undefined) ctx.skip();
    const node = nodes[0] as Node;
    await expect(
      fetch(`http://${other}:${node.metricsPort}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } }),
    ).rejects.toThrow(/fetch failed/);
  });
});
