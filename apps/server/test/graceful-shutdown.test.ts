import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminClient,
  adminToken,
  type CliProcess,
  freePort,
  jsonLines,
  killHard,
  scratchDir,
  seedOxiCloud,
  serverEnv,
  sleep,
  startServer,
} from './fault-support.js';

/**
 * Graceful shutdown (beyond the plan): on SIGTERM the server asks its own
 * running runs to pause, waits for them to land Paused with their cursor,
 * and exits 0 — so the next boot finds nothing for the sweep, and a trigger
 * resumes from that cursor.
 */
describe('SIGTERM during a recoverable run', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof scratchDir>;
  let server: CliProcess | undefined;
  let env: Record<string, string>;
  let base: string;
  const JOB = 'files_consistency';

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    dir = scratchDir('graceful');
    await seedOxiCloud(db.pool, dir.path, {
      users: 6,
      filesPerDrive: 60,
      foldersPerDrive: { min: 3, max: 6 },
      seed: 21,
    });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = serverEnv({ databaseUrl: db.url, dataDir: dir.path, httpPort: port });
  });

  afterAll(async () => {
    if (server) await killHard(server);
    await db?.drop();
    dir?.remove();
  });

  it('lands the run Paused with its cursor, exits 0, and the next boot resumes it from there', async () => {
    server = await startServer(env);
    const api = adminClient(base, await adminToken(db.pool));
    const { run_id } = await api.trigger(JOB, { batch_size: 20, throttle_ms: 150 });
    // Let it make progress: a few checkpoints.
    let before = await api.run(JOB, run_id);
    for (let i = 0; i < 100 && Number(before.stats['scanned_count'] ?? 0) < 60; i++) {
      await sleep(50);
      before = await api.run(JOB, run_id);
    }
    expect(before.status).toBe('Running');

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    const lines = jsonLines(server.stdout());
    const shutdown = lines.find((l) => l['event'] === 'engine.shutdown');
    expect(shutdown?.['landed']).toEqual([expect.objectContaining({ run_id, status: 'Paused' })]);

    const { rows } = await db.pool.query(
      `SELECT status, error_message, cursor IS NOT NULL AS has_cursor, (stats->>'scanned_count')::int AS scanned
         FROM jobs.recoverable_runs WHERE id = $1`,
      [run_id],
    );
    expect(rows[0]).toMatchObject({ status: 'Paused', has_cursor: true });
    // Paused by the shutdown itself, not by the next boot's sweep.
    expect(rows[0].error_message).toBeNull();
    const pausedAt = rows[0].scanned as number;
    expect(pausedAt).toBeGreaterThan(0);

    server = await startServer(env);
    const bootLines = jsonLines(server.stdout());
    expect(bootLines.some((l) => l['event'] === 'run.boot_sweep')).toBe(false);
    const resumed = await api.trigger(JOB, {});
    expect(resumed).toMatchObject({ run_id, resumed: true });
    const done = await api.waitFor(JOB, run_id, ['Completed', 'Failed'], 120_000);
    expect(done.status).toBe('Completed');
    expect(Number(done.stats['scanned_count'])).toBeGreaterThan(pausedAt);
  }, 180_000);
});
