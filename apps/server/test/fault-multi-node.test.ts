import type { OxiCloudFaultName } from '@oxicloud/dataset';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminClient,
  adminToken,
  type CliProcess,
  composeInProcess,
  copyDatabase,
  findingSet,
  freePort,
  jsonLines,
  killHard,
  type RunJson,
  scratchDir,
  seedOxiCloud,
  serverEnv,
  sleep,
  startServer,
} from './fault-support.js';

const JOB = 'files_consistency';
/** Short leases so the test stays fast: lease 3 s (trust window 2.5 s), heartbeat 1 s, janitor 1 s. */
const LEASE_MS = 3_000;
const JANITOR_MS = 1_000;
const LEASES = {
  OXICLOUD_RUN_LEASE_SECONDS: '3',
  OXICLOUD_RUN_HEARTBEAT_SECONDS: '1',
  OXICLOUD_RUN_JANITOR_SECONDS: '1',
};
const FAULTS: OxiCloudFaultName[] = [
  'live_file_under_trashed_folder',
  'missing_blob_row',
  'blob_size_mismatch',
];

/** One `oxijobs serve` process: its HTTP base, its node id (from `server.listening`), its output. */
interface Node {
  readonly name: string;
  readonly port: number;
  process: CliProcess;
  id: string;
}

/**
 * Issue 17 (the run half): several real `oxijobs serve` processes on one
 * Postgres. A run records its owner node and a lease its heartbeat renews;
 * every write is fenced by (owner, attempt); a node's boot pauses only runs of
 * dead processes of its own host; a janitor pauses runs whose lease expired
 * ("node <id> lost mid-run") and never resumes them; a trigger on another node
 * takes the run over (new owner, attempt + 1). On a generated OxiCloud-shaped dataset.
 */
describe('several server processes on one database: leases and fencing of runs', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof scratchDir>;
  let api: ReturnType<typeof adminClient>;
  let token: string;
  let expected: string[];
  /** The findings the seeded faults give files_consistency (`kind severity resource_id`, as {@link findingSet}). */
  let seeded: string[] = [];
  const nodes = new Map<string, Node>();

  function envOf(port: number): Record<string, string> {
    return serverEnv({
      databaseUrl: db.url,
      dataDir: dir.path,
      httpPort: port,
      extra: LEASES,
    });
  }

  async function boot(name: string): Promise<Node> {
    const port = nodes.get(name)?.port ?? (await freePort());
    const process = await startServer(envOf(port));
    const listening = jsonLines(process.stdout()).find((l) => l['event'] === 'server.listening');
    const node: Node = { name, port, process, id: String(listening?.['node']) };
    expect(node.id).toMatch(/^.+:\d+:[0-9a-f]{6}$/);
    nodes.set(name, node);
    return node;
  }

  async function stopGracefully(node: Node): Promise<void> {
    node.process.child.kill('SIGTERM');
    await node.process.exited;
  }

  function client(node: Node) {
    return adminClient(`http://127.0.0.1:${node.port}`, token);
  }

  const params = (throttle_ms: number) => ({ batch_size: 20, throttle_ms });

  /** Waits until the run checkpointed at least `batches` batches. */
  async function midRun(runId: string, batches = 3): Promise<RunJson> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const run = await api.run(JOB, runId);
      if (Number(run.stats['scanned_count'] ?? 0) >= batches * 20) return run;
      if (Date.now() > deadline) throw new Error(`${JOB} made no progress: ${JSON.stringify(run)}`);
      await sleep(20);
    }
  }

  /** The run's findings equal the uninterrupted reference run's, none twice, and its count agrees with its rows. */
  async function expectReferenceFindings(runId: string): Promise<void> {
    const run = await api.run(JOB, runId);
    const { total, findings } = await api.findings(JOB, runId);
    const got = findingSet(findings);
    expect(got).toEqual(expected);
    expect(new Set(got).size).toBe(got.length);
    expect(total).toBe(got.length);
    expect(Number(run.stats['findings'])).toBe(got.length);
  }

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    dir = scratchDir('multi-node');
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
    seeded = report.faults
      .filter((f) => f.expect.check === JOB)
      .flatMap((f) => f.resourceIds.map((id) => `${f.expect.kind} ${f.expect.severity} ${id}`))
      .sort();
    // The reference: an uninterrupted run on a copy of the same database.
    const reference = await copyDatabase(db.name, 'ref');
    try {
      const { server } = await composeInProcess({ pool: reference.pool, dataDir: dir.path });
      try {
        const outcome = await server.engine.runOrResume(JOB, { params: { batch_size: 1000 } });
        expect(outcome.kind).toBe('ok');
      } finally {
        await server.stop();
      }
      const { rows } = await reference.pool.query(
        `SELECT f.kind, f.severity, f.resource_id FROM jobs.run_findings f
           JOIN jobs.recoverable_runs r ON r.id = f.run_id WHERE r.job_name = $1`,
        [JOB],
      );
      expected = findingSet(rows);
    } finally {
      await reference.drop();
    }
    // The seeded faults were found at all (the comparison is not between two empty sets).
    expect(seeded.length).toBeGreaterThanOrEqual(6);
    expect(expected).toEqual(expect.arrayContaining(seeded));
    await boot('A');
    token = await adminToken(db.pool);
    api = client(nodes.get('A')!);
  }, 180_000);

  afterAll(async () => {
    for (const node of nodes.values()) await killHard(node.process);
    await db?.drop();
    dir?.remove();
  });

  it('booting B and restarting C leave the run A executes alone: it stays Running and completes on A', async () => {
    const a = nodes.get('A')!;
    const started = await client(a).trigger(JOB, params(400));
    await midRun(started.run_id, 2);
    const statuses = new Set<string>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const run = await api.run(JOB, started.run_id);
        statuses.add(run.status);
        if (run.status === 'Completed') return;
        await sleep(50);
      }
    })();
    await boot('B');
    await boot('C');
    await stopGracefully(nodes.get('C')!);
    await boot('C');
    const running = await api.run(JOB, started.run_id);
    expect(running.status, 'the run outlived two boots and a stop').toBe('Running');
    const done = await api.waitFor(JOB, started.run_id, ['Completed', 'Paused', 'Failed'], 60_000);
    watching = false;
    await watch;
    // The watcher may stop between two reads, before it saw the landing waitFor saw.
    statuses.add(done.status);
    expect(done.status).toBe('Completed');
    expect([...statuses].sort()).toEqual(['Completed', 'Running']);
    expect(done).toMatchObject({ owner_node: a.id, attempt: 1, pauses: [] });
    await expectReferenceFindings(started.run_id);
  }, 90_000);

  it('kill -9 of A mid-run: within lease + janitor interval the run is Paused "node <A> lost mid-run"; B resumes it from its checkpoint', async () => {
    const a = nodes.get('A')!;
    const b = nodes.get('B')!;
    const started = await client(a).trigger(JOB, params(150));
    await midRun(started.run_id);
    await killHard(a.process);
    const killedAt = Date.now();
    const before = await client(b).run(JOB, started.run_id);
    const paused = await client(b).waitFor(JOB, started.run_id, ['Paused', 'Completed', 'Failed'], 15_000);
    const pausedAfterMs = Date.now() - killedAt;
    expect(paused.status).toBe('Paused');
    expect(paused.pause_reason).toBe(`node ${a.id} lost mid-run`);
    expect(pausedAfterMs).toBeLessThan(LEASE_MS + JANITOR_MS + 2_000);
    // At its last checkpoint: the cursor is the one the row held when A died.
    expect(paused.cursor_hex).toBe(before.cursor_hex);

    const resumed = await client(b).trigger(JOB);
    expect(resumed).toMatchObject({ run_id: started.run_id, resumed: true });
    const done = await client(b).waitFor(JOB, started.run_id, ['Completed', 'Failed', 'Paused'], 60_000);
    expect(done.status).toBe('Completed');
    expect(done).toMatchObject({ owner_node: b.id, attempt: 2, lease_until: null });
    await boot('A');
    await expectReferenceFindings(started.run_id);
  }, 90_000);

  it('the stale writer: SIGSTOP A past its lease, B takes the run over, SIGCONT A: A is refused, logs run.lease_lost and stops; the result is B’s', async () => {
    const a = nodes.get('A')!;
    const b = nodes.get('B')!;
    const started = await client(a).trigger(JOB, params(150));
    await midRun(started.run_id);
    a.process.child.kill('SIGSTOP');
    try {
      const paused = await client(b).waitFor(JOB, started.run_id, ['Paused', 'Completed', 'Failed'], 15_000);
      expect(paused.pause_reason).toBe(`node ${a.id} lost mid-run`);
      const resumed = await client(b).trigger(JOB);
      expect(resumed).toMatchObject({ run_id: started.run_id, resumed: true });
      expect(await client(b).run(JOB, started.run_id)).toMatchObject({ owner_node: b.id, attempt: 2 });
    } finally {
      a.process.child.kill('SIGCONT');
    }
    // A wakes: its next write (a renewal, a checkpoint or its landing) is refused by the fence.
    const deadline = Date.now() + 15_000;
    let lost: Record<string, unknown> | undefined;
    while (lost === undefined && Date.now() < deadline) {
      lost = jsonLines(a.process.stdout()).find(
        (l) => l['event'] === 'run.lease_lost' && l['run_id'] === started.run_id,
      );
      await sleep(50);
    }
    expect(lost, a.process.stdout().slice(-3000)).toMatchObject({ node: a.id, attempt: 1 });
    const done = await client(b).waitFor(JOB, started.run_id, ['Completed', 'Failed', 'Paused'], 60_000);
    expect(done.status).toBe('Completed');
    // Nothing of A after the takeover: one pause (the janitor's), B's owner and attempt.
    expect(done).toMatchObject({ owner_node: b.id, attempt: 2 });
    expect(done.pauses.map((p) => p.reason)).toEqual([`node ${a.id} lost mid-run`]);
    // A is alive and serving; it stopped the run without writing.
    expect(a.process.child.exitCode).toBeNull();
    expect(
      jsonLines(a.process.stdout()).some((l) => l['event'] === 'job.run' && l['run_id'] === started.run_id),
    ).toBe(false);
    await expectReferenceFindings(started.run_id);
  }, 90_000);

  it('a single process works as before: a killed server’s run is Paused "server restart mid-run" as soon as it is back', async () => {
    for (const name of ['B', 'C']) await stopGracefully(nodes.get(name)!);
    const a = nodes.get('A')!;
    const started = await client(a).trigger(JOB, params(150));
    await midRun(started.run_id);
    await killHard(a.process);
    const back = await boot('A');
    const run = await client(back).run(JOB, started.run_id);
    expect(run.status).toBe('Paused');
    expect(run.pause_reason).toBe('server restart mid-run');
    const resumed = await client(back).trigger(JOB);
    expect(resumed).toMatchObject({ run_id: started.run_id, resumed: true });
    const done = await client(back).waitFor(JOB, started.run_id, ['Completed', 'Failed'], 60_000);
    expect(done).toMatchObject({ status: 'Completed', owner_node: back.id, attempt: 2 });
    await expectReferenceFindings(started.run_id);
  }, 90_000);
});
