import type { OxiCloudFaultName } from '@oxicloud/dataset';
import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, jsonLines } from './cli-process.js';
import {
  adminClient,
  adminToken,
  type FinishedRun,
  latestRun,
  type RunJson,
  referenceRuns,
  scratchDir,
  seedOxiCloud,
  serverEnv,
  sleep,
  startServer,
} from './fault-support.js';

/** `storage_reconcile`'s interval: one slot a second. */
const INTERVAL_MS = 1_000;
/** How long three nodes tick together: 30 slots (Done-when 1 had 30 slots of 2 s in 60 s). */
const WINDOW_MS = 30_000;
/** The run that goes on through the rolling restart, throttled so it outlives three restarts. */
const JOB = 'files_consistency';
const RUN_PARAMS = { batch_size: 20, throttle_ms: 500 };
/** Short leases so the test stays fast: lease 3 s (trust window 2.5 s), run heartbeat 1 s, janitor 1 s. */
const LEASE_MS = 3_000;
const LEASES = {
  OXICLOUD_RUN_LEASE_SECONDS: '3',
  OXICLOUD_RUN_HEARTBEAT_SECONDS: '1',
  OXICLOUD_RUN_JANITOR_SECONDS: '1',
};
/** Node heartbeat 1 s: a node is live while its last heartbeat is younger than two beats. */
const FRESH_MS = 2_000;
const FAULTS: OxiCloudFaultName[] = [
  'live_file_under_trashed_folder',
  'missing_blob_row',
  'blob_size_mismatch',
];

interface Node {
  readonly port: number;
  readonly env: Record<string, string>;
  server: CliProcess;
  /** The node id the process logged in `server.listening` (a new one at each start). */
  id: string;
}

/** What the owner watcher saw of `Running` runs and their owners' heartbeats. */
interface OwnerReport {
  readonly samples: number;
  readonly runningSamples: number;
  readonly owners: Set<string>;
  /** The longest a run was `Running` while its owner was not live (heartbeat older than FRESH_MS). */
  readonly maxOwnerlessMs: number;
  readonly worst: string;
}

/**
 * Three real `oxijobs serve` processes on one Postgres, `storage_reconcile`
 * every second: the history holds exactly one run per slot (none doubled, none
 * missing but possibly the first); then a rolling restart while a
 * `files_consistency` run goes on: still one run per slot, the run is never
 * `Running` without a live owner for longer than a lease, each graceful stop
 * lands it `Paused`, another node resumes it, and it ends with the findings
 * of an uninterrupted run. On a generated OxiCloud-shaped dataset.
 */
describe('three server processes on one database: one firing per tick, a run through a rolling restart', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof scratchDir>;
  let reference: FinishedRun;
  let nodes: Node[] = [];

  async function tickSlots(from: number, to: number): Promise<Map<number, number>> {
    const { rows } = await db.pool.query<{ slot: Date; n: number }>(
      `SELECT slot, count(*)::int AS n FROM jobs.periodic_runs
        WHERE job = 'storage_reconcile' AND source = 'tick' AND slot >= $1 AND slot < $2
        GROUP BY slot ORDER BY slot`,
      [new Date(from), new Date(to)],
    );
    return new Map(rows.map((r) => [r.slot.getTime(), r.n]));
  }

  /** Every slot of [from, to) is there exactly once (the first may be missing when `allowFirstMissing`). */
  function expectOnePerSlot(
    slots: Map<number, number>,
    from: number,
    to: number,
    allowFirstMissing = false,
  ): void {
    const doubled = [...slots].filter(([, n]) => n !== 1).map(([slot]) => new Date(slot).toISOString());
    expect(doubled, 'slots fired more than once').toEqual([]);
    const first = Math.ceil(from / INTERVAL_MS) * INTERVAL_MS;
    const missing: string[] = [];
    for (let slot = first; slot < to; slot += INTERVAL_MS) {
      if (!slots.has(slot) && !(allowFirstMissing && slot === first)) {
        missing.push(new Date(slot).toISOString());
      }
    }
    expect(missing, 'slots never fired').toEqual([]);
  }

  async function dbNow(): Promise<number> {
    const { rows } = await db.pool.query<{ ms: number }>(
      'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms',
    );
    return rows[0]!.ms;
  }

  async function start(node: Node): Promise<void> {
    node.server = await startServer(node.env);
    const listening = jsonLines(node.server.stdout()).find((l) => l['event'] === 'server.listening');
    node.id = String(listening?.['node']);
    expect(node.id).toMatch(/^.+:\d+:[0-9a-f]{6}$/);
  }

  /**
   * Samples every run that is `Running` (or `CancelRequested`) and `jobs.nodes`
   * every ~250 ms, on the database clock. A run's owner is live while its last
   * heartbeat is younger than FRESH_MS; a run whose owner is not live has been
   * ownerless since the owner's last heartbeat + FRESH_MS (or since first seen
   * so, when the owner was never seen).
   */
  function watchOwners(): { report(): OwnerReport; stop(): Promise<OwnerReport> } {
    const lastHeartbeat = new Map<string, number>();
    const ownerlessSince = new Map<string, number>();
    const owners = new Set<string>();
    let samples = 0;
    let runningSamples = 0;
    let maxOwnerlessMs = 0;
    let worst = '';
    let watching = true;
    const loop = (async () => {
      while (watching) {
        const { rows } = await db.pool.query<{
          now_ms: number;
          runs: Array<{ id: string; status: string; owner: string | null }>;
          nodes: Record<string, number>;
        }>(
          `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
                  (SELECT coalesce(json_agg(json_build_object('id', id, 'status', status, 'owner', owner_node)), '[]')
                     FROM jobs.recoverable_runs WHERE status IN ('Running', 'CancelRequested')) AS runs,
                  (SELECT coalesce(json_object_agg(id, extract(epoch FROM last_heartbeat_at) * 1000), '{}')
                     FROM jobs.nodes) AS nodes`,
        );
        const sample = rows[0]!;
        samples++;
        for (const [id, at] of Object.entries(sample.nodes)) {
          lastHeartbeat.set(id, Math.max(lastHeartbeat.get(id) ?? 0, Number(at)));
        }
        if (sample.runs.length > 0) runningSamples++;
        for (const run of sample.runs) {
          const key = `${run.id} ${run.owner}`;
          if (run.owner !== null) owners.add(run.owner);
          const beat = run.owner === null ? undefined : lastHeartbeat.get(run.owner);
          let ownerlessMs: number;
          if (beat !== undefined) ownerlessMs = sample.now_ms - (beat + FRESH_MS);
          else {
            if (!ownerlessSince.has(key)) ownerlessSince.set(key, sample.now_ms);
            ownerlessMs = sample.now_ms - ownerlessSince.get(key)!;
          }
          if (ownerlessMs > maxOwnerlessMs) {
            maxOwnerlessMs = ownerlessMs;
            worst = `run ${run.id} ${run.status} owned by ${run.owner}: its owner not live for ${Math.round(ownerlessMs)} ms`;
          }
        }
        await sleep(250);
      }
    })();
    // A failed sample surfaces in stop(), not as an unhandled rejection.
    const ended = loop.then(
      () => undefined,
      (error: unknown) => error,
    );
    const report = (): OwnerReport => ({ samples, runningSamples, owners, maxOwnerlessMs, worst });
    return {
      report,
      async stop() {
        watching = false;
        const error = await ended;
        if (error !== undefined) throw error;
        return report();
      },
    };
  }

  /** Waits until the run scanned one more batch on `node`, its owner. */
  async function progressOn(node: Node, runId: string): Promise<void> {
    const client = adminClient(`http://127.0.0.1:${node.port}`, await adminToken(db.pool));
    const before = Number((await client.run(JOB, runId)).stats['scanned_count'] ?? 0);
    const deadline = Date.now() + 15_000;
    for (;;) {
      const run = await client.run(JOB, runId);
      if (run.owner_node === node.id && Number(run.stats['scanned_count'] ?? 0) > before) return;
      if (Date.now() > deadline)
        throw new Error(`${JOB} made no progress on ${node.id}: ${JSON.stringify(run)}`);
      await sleep(50);
    }
  }

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    // One data folder for the three nodes (the blobs the consistency run reads).
    dir = scratchDir('cluster');
    // 20 users and 4 shared drives of 33 files: about the 800 files the run scans in batches of 20.
    const report = await seedOxiCloud(db.pool, dir.path, {
      users: 20,
      filesPerDrive: 33,
      foldersPerDrive: { min: 3, max: 6 },
      trashedFolderShare: 0.2,
      seed: 1717,
      faults: FAULTS,
      faultsPerKind: 3,
    });
    const seeded = report.faults
      .filter((f) => f.expect.check === JOB)
      .flatMap((f) => f.resourceIds.map((id) => `${f.expect.kind} ${f.expect.severity} ${id}`));
    // The reference: an uninterrupted run on a copy of the same database, before any tick.
    const ref = await referenceRuns(db.name, dir.path, [{ name: JOB, params: { batch_size: 1000 } }]);
    reference = ref.runs.get(JOB)!;
    await ref.reference.drop();
    // The seeded faults were found at all (the comparison is not between two empty sets).
    expect(seeded.length).toBeGreaterThanOrEqual(6);
    expect(reference.findings).toEqual(expect.arrayContaining(seeded));

    nodes = await Promise.all(
      [0, 1, 2].map(async () => {
        const port = await freePort();
        const env = serverEnv({
          databaseUrl: db.url,
          dataDir: dir.path,
          httpPort: port,
          extra: {
            OXICLOUD_STORAGE_USAGE_RECONCILE_INTERVAL_SECONDS: String(INTERVAL_MS / 1000),
            OXICLOUD_METRICS_ADDR: '',
            OXICLOUD_NODE_HEARTBEAT_SECONDS: '1',
            ...LEASES,
          },
        });
        return { port, env, server: undefined as unknown as CliProcess, id: '' };
      }),
    );
    // One at a time (the dataset brought its own admins: no boot creates one).
    for (const node of nodes) await start(node);
  }, 120_000);

  afterAll(async () => {
    for (const node of nodes) {
      if (node.server && node.server.child.exitCode === null) node.server.child.kill('SIGKILL');
      await node.server?.exited;
    }
    await db?.drop();
    dir?.remove();
  });

  it(`with all three up for ${WINDOW_MS / 1000} s, every ${INTERVAL_MS / 1000} s slot runs exactly once; every node lists the three nodes and the same last outcome`, async () => {
    const from = await dbNow();
    await sleep(WINDOW_MS);
    const to = (await dbNow()) - INTERVAL_MS; // the slot in flight may not have written its row yet
    const slots = await tickSlots(from, to);
    expectOnePerSlot(slots, from, to, true);
    expect(slots.size).toBeGreaterThanOrEqual(WINDOW_MS / INTERVAL_MS - 2);
    // The work was shared: more than one node won slots (each wakes at the slot's start).
    const { rows } = await db.pool.query<{ node: string }>(
      `SELECT DISTINCT node FROM jobs.periodic_runs WHERE job = 'storage_reconcile'`,
    );
    expect(rows.length).toBeGreaterThanOrEqual(1);
    // The losers of a slot lost the claim itself (debug job.tick_taken), not the run's lease:
    // no node found the job held by another (job.tick_skipped) — the run takes milliseconds.
    const skipped = nodes.flatMap((node) =>
      jsonLines(node.server.stdout()).filter((line) => line['event'] === 'job.tick_skipped'),
    );
    expect(skipped).toEqual([]);

    const token = await adminToken(db.pool);
    const headers = { authorization: `Bearer ${token}` };
    const listed = (await (
      await fetch(`http://127.0.0.1:${nodes[0]!.port}/api/admin/nodes`, { headers })
    ).json()) as Array<{
      id: string;
      pid: number;
    }>;
    expect(listed.map((n) => n.pid).sort()).toEqual(nodes.map((n) => n.server.child.pid).sort());

    // The same last outcome from every node (asked together, right after a tick lands).
    let agreed = false;
    for (let attempt = 0; attempt < 5 && !agreed; attempt++) {
      const outcomes = await Promise.all(
        nodes.map(async (node) => {
          const jobs = (await (
            await fetch(`http://127.0.0.1:${node.port}/api/admin/jobs`, { headers })
          ).json()) as Array<{
            name: string;
            last_outcome: { at: string; node?: string } | null;
            missed_slots?: number;
            last_slot_at?: string | null;
          }>;
          return jobs.find((j) => j.name === 'storage_reconcile');
        }),
      );
      agreed = outcomes.every(
        (o) => o?.last_outcome?.at === outcomes[0]?.last_outcome?.at && o?.last_outcome?.node,
      );
      if (agreed) {
        expect(outcomes[0]).toMatchObject({
          missed_slots: expect.any(Number),
          last_slot_at: expect.any(String),
        });
      } else await sleep(300);
    }
    expect(agreed).toBe(true);
  }, 90_000);

  it('a rolling restart of the three nodes, one at a time, while a run and ticks go on: no slot fired twice or missed, the run never Running without a live owner for longer than a lease, its findings an uninterrupted run’s', async () => {
    const token = await adminToken(db.pool);
    const client = (node: Node) => adminClient(`http://127.0.0.1:${node.port}`, token);
    const from = await dbNow();
    const started = await client(nodes[0]!).trigger(JOB, RUN_PARAMS);
    const runId = started.run_id;
    const watcher = watchOwners();
    const owners = [nodes[0]!.id];
    let done: RunJson;
    try {
      // Each node in turn executes the run and is restarted: the run goes on on the next one.
      for (const [i, node] of nodes.entries()) {
        const next = nodes[(i + 1) % nodes.length]!;
        await progressOn(node, runId);
        expect(await client(next).run(JOB, runId), 'the run outlives the rolling restart').toMatchObject({
          status: 'Running',
          owner_node: node.id,
        });
        node.server.child.kill('SIGTERM');
        expect(await node.server.exited).toBe(0);
        expect(watcher.report().maxOwnerlessMs, watcher.report().worst).toBeLessThan(LEASE_MS);
        // A graceful stop releases the lease: the run lands Paused at its cursor ('server shutdown').
        expect(await client(next).run(JOB, runId)).toMatchObject({
          status: 'Paused',
          pause_reason: 'server shutdown',
          lease_until: null,
        });
        expect(await client(next).trigger(JOB)).toMatchObject({ run_id: runId, resumed: true });
        owners.push(next.id);
        await start(node);
      }
      done = await client(nodes[1]!).waitFor(JOB, runId, ['Completed', 'Failed', 'Paused'], 60_000);
    } catch (error) {
      await watcher.stop().catch(() => undefined);
      throw error;
    }
    const seen = await watcher.stop();
    expect(seen.maxOwnerlessMs, seen.worst).toBeLessThan(LEASE_MS);
    expect(seen.runningSamples).toBeGreaterThanOrEqual(20);
    // It ran on each node in turn: the first, the second, the third, the restarted first.
    expect([...seen.owners].sort()).toEqual([...owners].sort());
    expect(done).toMatchObject({ status: 'Completed', attempt: 4, lease_until: null });
    expect(done.pauses.map((p) => p.reason)).toEqual([
      'server shutdown',
      'server shutdown',
      'server shutdown',
    ]);
    // The findings equal the uninterrupted run's, none twice, and the run's count agrees with its rows.
    const run = await latestRun(db.pool, JOB);
    expect(run.runId).toBe(runId);
    expect(run.findings).toEqual(reference.findings);
    expect(run.findingRows).toBe(reference.findingRows);
    expect(Number(run.stats['findings'])).toBe(reference.findings.length);

    // Ticks through the whole restart: every slot once.
    const to = (await dbNow()) - INTERVAL_MS;
    expectOnePerSlot(await tickSlots(from, to), from, to);
    // And over the whole test: no slot twice.
    const { rows } = await db.pool.query(
      `SELECT slot FROM jobs.periodic_runs WHERE job = 'storage_reconcile' AND source = 'tick'
        GROUP BY slot HAVING count(*) > 1`,
    );
    expect(rows).toEqual([]);
  }, 120_000);
});
