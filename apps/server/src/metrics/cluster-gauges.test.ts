import { randomUUID } from 'node:crypto';
import {
  type ConsistencyCheck,
  checkJob,
  PgFindingLedger,
  PgFindingStore,
  PgRepairPlans,
} from '@oxicloud/consistency';
import { completed, migrate as migrateRecoverable, RecoverableEngine } from '@oxicloud/recoverable';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterGauges } from './cluster-gauges.js';

/** One batch recording a `thing_broken` finding per id of `broken`, then completed. */
function brokenThings(broken: readonly string[]): ConsistencyCheck {
  return {
    name: 'gauge_consistency',
    subsystem: 'demo',
    order: 1,
    countMeaning: 'broken things',
    kinds: [{ kind: 'thing_broken', severity: 'Drift', meaning: 'the thing is broken' }],
    graceWindowMs: () => 0,
    concurrentSafe: () => true,
    async runResumable(store) {
      for (const id of broken) {
        store.recordFinding({ kind: 'thing_broken', severity: 'Drift', resourceId: id, detail: {} });
      }
      await store.checkpoint(Uint8Array.of(1), broken.length);
      return completed();
    },
  };
}

describe('oxicloud_findings_open', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('counts the open findings of the lifecycle: a finding a repair fixed no longer counts', async () => {
    const engine = new RecoverableEngine({ pool: db.pool });
    engine.register(checkJob(brokenThings(['a', 'b']), { findings: new PgFindingStore({ pool: db.pool }) }));
    const outcome = await engine.runOrResume('gauge_consistency');
    expect(outcome).toMatchObject({ kind: 'ok', extra: { completed: true } });
    const runId = outcome.kind === 'ok' ? String(outcome.extra['run_id']) : '';

    const registry = new Registry();
    const gauges = new ClusterGauges({
      registry,
      pool: db.pool,
      freshness: { snapshot: async () => ({ records: [], states: [] }) },
      findings: new PgFindingLedger({ pool: db.pool }),
      jobs: ['gauge_consistency'],
    });
    const open = async () => {
      await gauges.refresh();
      const metric = (await registry.getSingleMetric('oxicloud_findings_open')?.get())?.values ?? [];
      return metric.map((v) => ({ labels: v.labels, value: v.value }));
    };
    expect(await open()).toEqual([
      { labels: { check: 'gauge_consistency', kind: 'thing_broken', severity: 'Drift' }, value: 2 },
    ]);

    // A repair's re-check passes for "a": the finding is fixed, though the latest completed run still reported it.
    const { rows } = await db.pool.query<{ id: string }>(
      `SELECT id FROM jobs.findings WHERE check_name = 'gauge_consistency' AND resource_id = 'a'`,
    );
    await new PgRepairPlans({ pool: db.pool }).recordVerification(randomUUID(), 0, null, {
      findingId: rows[0]!.id,
      runId,
      actor: 'repair:admin',
    });
    expect(await open()).toEqual([
      { labels: { check: 'gauge_consistency', kind: 'thing_broken', severity: 'Drift' }, value: 1 },
    ]);
  });

  it('with a schema, counts the runs of that schema (oxicloud_job_runs_recorded), not those of jobs', async () => {
    const schema = 'oxijobs_gauges';
    await migrateRecoverable(db.pool, { schema });
    for (const status of ['Completed', 'Completed', 'Failed']) {
      await db.pool.query(
        `INSERT INTO ${schema}.recoverable_runs (id, job_name, status, started_at, last_progress_at)
         VALUES ($1, 'gauge_consistency', $2, now(), now())`,
        [randomUUID(), status],
      );
    }
    const registry = new Registry();
    const gauges = new ClusterGauges({
      registry,
      pool: db.pool,
      freshness: { snapshot: async () => ({ records: [], states: [] }) },
      findings: { openCounts: async () => [] },
      jobs: ['gauge_consistency'],
      schema,
    });
    await gauges.refresh();
    const recorded = (await registry.getSingleMetric('oxicloud_job_runs_recorded')?.get())?.values ?? [];
    expect(
      recorded
        .map((v) => ({ status: v.labels['status'], value: v.value }))
        .sort((a, b) => String(a.status).localeCompare(String(b.status))),
    ).toEqual([
      { status: 'Completed', value: 2 },
      { status: 'Failed', value: 1 },
    ]);
  });
});
