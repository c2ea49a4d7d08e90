import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminClient,
  adminToken,
  type CliProcess,
  type DatabaseCopy,
  type FinishedRun,
  findingSet,
  freePort,
  killHard,
  referenceRuns,
  scratchDir,
  seedOxiCloudConsistencyFaults,
  serverEnv,
  startServer,
} from './fault-support.js';

/** Kills inside the checkpoint transaction (issue 14: 20). */
const KILLS = Number(process.env['OXICLOUD_FAULT_KILLS'] ?? 20);

/** Small batches, so the faults spread over many batches with findings. */
const JOBS = [
  { name: 'drives_consistency', params: { batch_size: 2 } },
  { name: 'folders_consistency', params: { batch_size: 5 } },
  { name: 'files_consistency', params: { batch_size: 10 } },
  { name: 'storage_consistency', params: { batch_size: 5 } },
];

/** The counters of a run: the engine's count and scanned_count, and every finding counter. */
function counters(stats: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(stats).filter(([k]) => k === 'count' || k === 'scanned_count' || k.startsWith('findings')),
  );
}

/**
 * Issue 14: a batch's findings commit with its checkpoint or not at all. A
 * test-only failpoint (`OXICLOUD_FAILPOINT=checkpoint.after_batch_writes@2`)
 * kills the server with SIGKILL inside the checkpoint transaction, after the
 * batch's finding writes and before the cursor UPDATE and the commit: the
 * window a kill from outside rarely hits. `@2` lets the replayed batch (hit 1)
 * commit and kills the next batch with findings, so every kill moves the run
 * on. After each kill the server starts again and the run resumes; at the end
 * its findings AND its counters equal those of an uninterrupted run, exactly.
 */
describe('kill -9 inside the checkpoint transaction, between the finding writes and the commit', () => {
  let db: TestDatabase;
  let reference: DatabaseCopy;
  let dir: ReturnType<typeof scratchDir>;
  let server: CliProcess | undefined;
  let expected = new Map<string, FinishedRun>();

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    dir = scratchDir('fault-failpoint');
    await seedOxiCloudConsistencyFaults(db.pool, dir.path, 3);
    const ref = await referenceRuns(db.name, dir.path, JOBS);
    reference = ref.reference;
    expected = ref.runs;
  }, 180_000);

  afterAll(async () => {
    if (server) await killHard(server);
    await reference?.drop();
    await db?.drop();
    dir?.remove();
  });

  it(`${KILLS} kills inside the transaction: findings and counters equal the uninterrupted run's`, async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = serverEnv({ databaseUrl: db.url, dataDir: dir.path, httpPort: port });
    const armed = { ...env, OXICLOUD_FAILPOINT: 'checkpoint.after_batch_writes@2' };
    const runIds = new Map<string, string>();
    let killed = 0;
    let jobIndex = 0;
    const done = new Set<string>();
    server = await startServer(armed);
    const api = adminClient(base, await adminToken(db.pool));
    while (jobIndex < JOBS.length && killed < KILLS) {
      const job = JOBS[jobIndex]!;
      const started = await api.trigger(job.name, job.params);
      const known = runIds.get(job.name);
      if (known === undefined) runIds.set(job.name, started.run_id);
      else expect(started).toMatchObject({ run_id: known, resumed: true });
      // Either the failpoint kills the server, or the run completes first (no batch with findings left).
      const outcome = await Promise.race([
        server.exited.then(() => 'killed' as const),
        api
          .waitFor(job.name, started.run_id, ['Completed'], 120_000)
          .then(() => 'completed' as const)
          // The server died under the poll: the kill answers.
          .catch(() => new Promise<never>(() => undefined)),
      ]);
      if (outcome === 'completed') {
        done.add(job.name);
        jobIndex++;
        continue;
      }
      expect(server.child.signalCode, 'killed by the failpoint').toBe('SIGKILL');
      killed++;
      server = await startServer(armed);
    }
    expect(killed).toBe(KILLS);
    // The rest without the failpoint.
    await killHard(server);
    server = await startServer(env);
    for (const job of JOBS) {
      const runId = done.has(job.name)
        ? runIds.get(job.name)!
        : (await api.trigger(job.name, job.params)).run_id;
      await api.waitFor(job.name, runId, ['Completed'], 120_000);
      const run = await api.run(job.name, runId);
      const ref = expected.get(job.name)!;
      const { findings } = await api.findings(job.name, runId);
      expect(findingSet(findings), job.name).toEqual(ref.findings);
      expect(counters(run.stats), job.name).toEqual(counters(ref.stats));
    }
    expect([...expected.values()].reduce((n, r) => n + r.findings.length, 0)).toBeGreaterThanOrEqual(KILLS);
  }, 600_000);
});
