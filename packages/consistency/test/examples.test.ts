import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { runExample } from './support/run-example.js';

/**
 * The package's examples are programs a consumer runs: each runs here as its
 * own Node process against a database of its own that holds nothing else
 * (the example migrates it), and must print its line and exit 0.
 */
describe('the examples run as programs on a real Postgres', () => {
  let db: TestDatabase | undefined;
  afterEach(async () => {
    await db?.drop();
    db = undefined;
  });

  it('fixed-between-runs.ts: the finding goes open → fixed when the fault is fixed between two runs', async () => {
    db = await createTestDatabase({ empty: true });
    const run = runExample('fixed-between-runs.ts', { DATABASE_URL: db.url });
    expect(run.output).toContain('consistency fixed-between-runs ok: i2 open → fixed');
    expect(run.code).toBe(0);
    // What the program left behind: one finding, fixed by the second of two completed runs.
    const { rows } = await db.pool.query(
      `SELECT f.state, f.fixed_run_id = r.id AS fixed_by_last
         FROM jobs.findings f,
              LATERAL (SELECT id FROM jobs.recoverable_runs ORDER BY started_at DESC LIMIT 1) r
        WHERE f.check_name = 'invoices_consistency'`,
    );
    expect(rows).toEqual([{ state: 'fixed', fixed_by_last: true }]);
    const runs = await db.pool.query(
      `SELECT r.status, fr.closed_at IS NOT NULL AS closed
         FROM jobs.recoverable_runs r JOIN jobs.finding_runs fr ON fr.run_id = r.id
        ORDER BY r.started_at`,
    );
    expect(runs.rows).toEqual([
      { status: 'Completed', closed: true },
      { status: 'Completed', closed: true },
    ]);
  });

  it('custom-check.ts (the README quick start) runs too', async () => {
    db = await createTestDatabase({ empty: true });
    const run = runExample('custom-check.ts', { DATABASE_URL: db.url });
    expect(run.output).toContain('consistency quick start ok: 2 order_without_customer finding(s)');
    expect(run.code).toBe(0);
  });
});
