import { join } from 'node:path';
import { generateDataset } from '@oxicloud/dataset';
import { LocalFsBlobStorage } from '@oxicloud/storage';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ComposedServer } from '../src/index.js';
import { composeInProcess, scratchDir } from './fault-support.js';

const JOB = 'files_consistency';

/**
 * Issue 5 (kill -9), made deterministic: the window the random kills of
 * fault-kill-consistency rarely hit. A process killed after a batch recorded
 * its findings but before that batch's checkpoint leaves the findings rows
 * and a cursor/stats from before them. The resume replays the batch: the rows
 * are there already (the upsert inserts nothing), yet the run's counters must
 * still count them once — `stats.findings` (and `count`, and the per-kind
 * counters, which alerts and the listing read) equal the finding rows.
 */
describe('findings recorded before a crash, replayed after the resume', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof scratchDir>;
  let server: ComposedServer;

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = scratchDir('fault-replay');
    await generateDataset({
      pool: db.pool,
      blobs: new LocalFsBlobStorage({ root: join(dir.path, 'blobs') }),
      options: {
        users: 6,
        filesPerUser: 20,
        seed: 5,
        faults: ['missing_blob_row', 'blob_size_mismatch'],
        faultsPerKind: 2,
      },
    });
    ({ server } = await composeInProcess({ pool: db.pool, dataDir: dir.path }));
  });

  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    dir?.remove();
  });

  it('stats.findings, count and findings_<kind> equal the rows after the replay', async () => {
    const params = { batch_size: 10_000 };
    // A clean run: what the one batch finds.
    expect((await server.engine.runOrResume(JOB, { params })).kind).toBe('ok');
    const clean = await db.pool.query(
      `SELECT r.id, r.stats, (SELECT count(*)::int FROM jobs.run_findings f WHERE f.run_id = r.id) AS rows
         FROM jobs.recoverable_runs r WHERE job_name = $1`,
      [JOB],
    );
    const cleanRun = clean.rows[0] as { id: string; stats: Record<string, number>; rows: number };
    expect(cleanRun.rows).toBeGreaterThanOrEqual(4);
    expect(cleanRun.stats['findings']).toBe(cleanRun.rows);

    // The state a kill -9 leaves between "findings recorded" and "first checkpoint", after the boot sweep.
    const crashed = await db.pool.query(
      `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at, cursor, stats, params, error_message)
       VALUES (public.oxicloud_uuid_v7(), $1, 'Paused', now(), now(), NULL, '{}'::jsonb,
               '{"batch_size": 10000, "force": false, "deep": false}'::jsonb, 'server restart mid-run')
       RETURNING id::text`,
      [JOB],
    );
    const runId = crashed.rows[0].id as string;
    await db.pool.query(
      `INSERT INTO jobs.run_findings (id, run_id, kind, severity, resource_id, detail, found_at)
       SELECT public.oxicloud_uuid_v7(), $1, kind, severity, resource_id, detail, now() - interval '1 second'
         FROM jobs.run_findings WHERE run_id = $2`,
      [runId, cleanRun.id],
    );

    const resumed = await server.engine.runOrResume(JOB);
    expect(resumed).toMatchObject({ kind: 'ok', extra: { completed: true, run_id: runId } });
    const after = await db.pool.query(
      `SELECT r.stats, (SELECT count(*)::int FROM jobs.run_findings f WHERE f.run_id = r.id) AS rows
         FROM jobs.recoverable_runs r WHERE id = $1`,
      [runId],
    );
    const run = after.rows[0] as { stats: Record<string, number>; rows: number };
    expect(run.rows).toBe(cleanRun.rows);
    expect(run.stats['findings'], 'stats.findings').toBe(run.rows);
    expect(run.stats['count'], 'stats.count').toBe(cleanRun.stats['count']);
    for (const [key, value] of Object.entries(cleanRun.stats)) {
      if (key.startsWith('findings_')) expect(run.stats[key], key).toBe(value);
    }
  });
});
