import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { PgRunRetention } from '@oxicloud/consistency';
import type { Logger } from '@oxicloud/scheduler';
import { createRunRetentionJob, runRetentionConfigFromEnv } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DAY = 86_400_000;

/**
 * `run_retention` on a seeded history (real Postgres): old terminal runs and
 * their per-run findings go; each job's latest completed run, active runs,
 * runs an open finding needs and recent fixed findings stay; a kill -9 of a
 * real pruning process leaves no half-deleted run.
 */
/** The child's `application_name`, to see when its server session is gone. */
const CHILD_APP = 'oxicloud-retention-child';

describe('run_retention', () => {
  let db: TestDatabase;
  const now = Date.now();
  const ids: Record<string, string> = {};

  async function insertRun(name: string, job: string, status: string, ageDays: number, findings = 2) {
    const id = randomUUID();
    ids[name] = id;
    const at = new Date(now - ageDays * DAY);
    await db.pool.query(
      `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at, completed_at)
       VALUES ($1, $2, $3, $4, $4, CASE WHEN $3 = 'Completed' THEN $4::timestamptz END)`,
      [id, job, status, at],
    );
    for (let i = 0; i < findings; i++) {
      await db.pool.query(
        `INSERT INTO jobs.run_findings (id, run_id, kind, severity, resource_id, found_at)
         VALUES ($1, $2, 'missing_blob', 'DataLoss', $3, $4)`,
        [randomUUID(), id, `${name}-${i}`, at],
      );
    }
    return id;
  }

  async function insertFinding(
    name: string,
    state: string,
    first: string,
    last: string,
    fixedAgeDays?: number,
  ) {
    const id = randomUUID();
    ids[name] = id;
    await db.pool.query(
      `INSERT INTO jobs.findings (id, check_name, kind, resource_id, severity, severity_rank, highest_severity, state,
                                  first_seen_run_id, first_seen_at, last_seen_run_id, last_seen_at, last_seen_boundary,
                                  fixed_at)
       VALUES ($1, 'files_consistency', 'missing_blob', $2, 'DataLoss', 0, 'DataLoss', $3, $4, now(), $5, now(), now(), $6)`,
      [
        id,
        name,
        state,
        ids[first],
        ids[last],
        fixedAgeDays === undefined ? null : new Date(now - fixedAgeDays * DAY),
      ],
    );
  }

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    await insertRun('old1', 'files_consistency', 'Completed', 200);
    await insertRun('old2', 'files_consistency', 'Failed', 150);
    await insertRun('neededByOpen', 'files_consistency', 'Completed', 120);
    await insertRun('old4', 'files_consistency', 'Completed', 100);
    await insertRun('recent', 'files_consistency', 'Completed', 10);
    await insertRun('drivesOldFailed', 'drives_consistency', 'Failed', 300);
    await insertRun('drivesLatest', 'drives_consistency', 'Completed', 200);
    await insertRun('pausedOld', 'storage_consistency', 'Paused', 200);
    await insertFinding('open', 'open', 'neededByOpen', 'recent');
    await insertFinding('fixedOld', 'fixed', 'old1', 'old4', 100);
    await insertFinding('fixedRecent', 'fixed', 'old1', 'old4', 10);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('deletes exactly what it should, in batches, and audits it', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const push = (fields: object) => lines.push(fields as Record<string, unknown>);
    const logger: Logger = { info: push, warn: push, error: push, debug: () => undefined };
    const job = createRunRetentionJob({
      repository: new PgRunRetention({ pool: db.pool }),
      config: { ...runRetentionConfigFromEnv({ OXICLOUD_JOB_RUN_RETENTION_DAYS: '90' }), batchSize: 2 },
      logger,
    });
    const outcome = await job.run({ force: false }, new AbortController().signal);
    expect(outcome).toMatchObject({
      kind: 'ok',
      count: 4,
      extra: { fixed_findings_deleted: 1, retention_days: 90 },
    });
    const runs = (await db.pool.query('SELECT id FROM jobs.recoverable_runs')).rows.map((r) => r.id).sort();
    expect(runs).toEqual([ids['neededByOpen'], ids['recent'], ids['drivesLatest'], ids['pausedOld']].sort());
    const left = (await db.pool.query('SELECT DISTINCT run_id FROM jobs.run_findings')).rows
      .map((r) => r.run_id)
      .sort();
    expect(left).toEqual(runs);
    const findings = (await db.pool.query('SELECT resource_id FROM jobs.findings ORDER BY 1')).rows.map(
      (r) => r.resource_id,
    );
    expect(findings).toEqual(['fixedRecent', 'open']);
    const audit = lines.find((l) => l['target'] === 'audit' && l['event'] === 'run_retention.deleted');
    expect(audit).toMatchObject({
      count: 4,
      runs_per_job: { files_consistency: 3, drives_consistency: 1 },
      fixed_findings_deleted: 1,
    });
    expect((audit?.['run_ids'] as string[]).sort()).toEqual(
      [ids['old1'], ids['old2'], ids['old4'], ids['drivesOldFailed']].sort(),
    );
    expect(lines.filter((l) => l['event'] === 'run_retention.batch').length).toBeGreaterThanOrEqual(2);
    // Idempotent: nothing more to delete.
    expect(await job.run({ force: false }, new AbortController().signal)).toMatchObject({
      kind: 'ok',
      count: 0,
    });
  });

  it('refuses a bad OXICLOUD_JOB_RUN_RETENTION_DAYS, naming what is allowed', () => {
    expect(() => runRetentionConfigFromEnv({ OXICLOUD_JOB_RUN_RETENTION_DAYS: '0' })).toThrow(
      /OXICLOUD_JOB_RUN_RETENTION_DAYS/,
    );
    expect(() => runRetentionConfigFromEnv({ OXICLOUD_JOB_RUN_RETENTION_DAYS: 'ninety' })).toThrow(
      /OXICLOUD_JOB_RUN_RETENTION_DAYS/,
    );
    expect(runRetentionConfigFromEnv({}).retentionMs).toBe(90 * DAY);
  });

  it('a kill -9 in the middle of pruning leaves every run whole or gone, never half', async () => {
    const RUNS = 400;
    const FINDINGS = 25;
    await db.pool.query(
      `WITH r AS (
         INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at, completed_at)
         SELECT gen_random_uuid(), 'kill_test', 'Failed', now() - interval '200 days' + n * interval '1 second',
                now() - interval '200 days', NULL
           FROM generate_series(1, ${RUNS}) n RETURNING id)
       INSERT INTO jobs.run_findings (id, run_id, kind, severity, resource_id)
       SELECT gen_random_uuid(), r.id, 'k', 'Drift', 'res' || i FROM r, generate_series(1, ${FINDINGS}) i`,
    );
    const child: ChildProcess = spawn(
      process.execPath,
      [fileURLToPath(new URL('./fixtures/retention-child.mjs', import.meta.url))],
      {
        env: {
          ...process.env,
          DATABASE_URL: db.url,
          PGAPPNAME: CHILD_APP,
          CUTOFF: new Date(now - 90 * DAY).toISOString(),
          BATCH: '3',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        // Kill it mid-way: a few batches committed, more to go.
        if ((out.match(/^batch /gm) ?? []).length >= 10) resolve();
      });
      child.on('exit', () => reject(new Error(`the child ended before the kill: ${out}`)));
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    // The child's last statement may still be running in its server session (a COMMIT already sent commits):
    // count only once that session is gone, so the count and the rerun see the same rows.
    for (;;) {
      const { rows: left } = await db.pool.query(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
        [CHILD_APP],
      );
      if (left[0].n === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const { rows } = await db.pool.query(
      `SELECT r.id, count(f.id)::int AS n FROM jobs.recoverable_runs r
         LEFT JOIN jobs.run_findings f ON f.run_id = r.id WHERE r.job_name = 'kill_test' GROUP BY r.id`,
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThan(RUNS);
    expect(rows.every((r) => r.n === FINDINGS)).toBe(true);
    const orphans = await db.pool.query(
      `SELECT count(*)::int AS n FROM jobs.run_findings f
        WHERE NOT EXISTS (SELECT 1 FROM jobs.recoverable_runs r WHERE r.id = f.run_id)`,
    );
    expect(orphans.rows[0].n).toBe(0);
    // A rerun finishes the job.
    const again = await new PgRunRetention({ pool: db.pool }).pruneRuns(new Date(now - 90 * DAY), 10_000);
    expect(again.runs.length).toBe(rows.length);
  }, 60_000);
});
