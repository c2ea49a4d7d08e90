import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Inconsistency, PgFindingLedger, PgFindingStore } from '../src/index.js';

/**
 * Findings across runs on real Postgres: identity, the closing step's
 * positive evidence, decisions and what a run changed.
 */
describe('findings across runs (jobs.findings)', () => {
  let db: TestDatabase;
  let store: PgFindingStore;
  let ledger: PgFindingLedger;
  const CHECK = 'drives_consistency';
  let clock = Date.parse('2026-11-01T00:00:00Z');

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PgFindingStore({ pool: db.pool });
    ledger = new PgFindingLedger({ pool: db.pool });
  });
  afterAll(async () => {
    await db.drop();
  });

  const drift = (
    id: string,
    delta: number,
    severity: Inconsistency['severity'] = 'Drift',
  ): Inconsistency => ({
    kind: 'drive_used_bytes_drift',
    severity,
    resourceId: id,
    detail: { delta },
    magnitude: Math.abs(delta),
  });

  /** One run of the check: begins, writes `batches` (records + drops), ends with `status`. */
  async function run(
    batches: Array<{ records: Inconsistency[]; drops?: { kind: string; resourceId: string }[] }>,
    status: 'Completed' | 'Paused' | 'Failed' = 'Completed',
    graceMs = 0,
    kindGraceMs: Record<string, number | null> = {},
  ): Promise<string> {
    const id = randomUUID();
    clock += 24 * 3600_000;
    const startedAt = new Date(clock);
    await db.pool.query(
      `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at)
       VALUES ($1, $2, 'Running', $3, $3)`,
      [id, CHECK, startedAt],
    );
    await store.beginRun({ runId: id, checkName: CHECK, startedAt, graceMs, kindGraceMs });
    const boundary = new Date(clock - graceMs);
    for (const b of batches) {
      await store.write(id, b.records, b.drops ?? []);
      // write() has no context: the check comes from the run row, the boundary is now(); set it as the check would.
      await db.pool.query('UPDATE jobs.findings SET last_seen_boundary = $2 WHERE last_seen_run_id = $1', [
        id,
        boundary,
      ]);
    }
    await db.pool.query(
      `UPDATE jobs.recoverable_runs SET status = $2, completed_at = CASE WHEN $2 = 'Completed' THEN now() END WHERE id = $1`,
      [id, status],
    );
    return id;
  }

  const stateOf = async (resourceId: string) =>
    (await db.pool.query('SELECT state FROM jobs.findings WHERE resource_id = $1', [resourceId])).rows[0]
      ?.state;

  it('gives a fingerprint one row across runs; new, then still open, then fixed on evidence, then reopened', async () => {
    const r1 = await run([{ records: [drift('a', 10), drift('b', 20)] }]);
    expect((await ledger.closeRun(r1))?.fixed).toBe(0);
    let changes = await ledger.runChanges(r1);
    expect(changes.counts).toMatchObject({ new: 2, reopened: 0, stillOpen: 2, fixed: 0 });

    const r2 = await run([{ records: [drift('a', 10)] }]);
    expect((await ledger.closeRun(r2))?.fixed).toBe(1);
    expect(await stateOf('a')).toBe('open');
    expect(await stateOf('b')).toBe('fixed');
    changes = await ledger.runChanges(r2);
    expect(changes.changed).toHaveLength(0);
    expect(changes.counts).toMatchObject({ new: 0, stillOpen: 1, fixed: 1 });
    expect(changes.fixed.map((f) => f.resourceId)).toEqual(['b']);
    // Idempotent.
    expect((await ledger.closeRun(r2))?.outcome).toBe('already_closed');
    expect(await stateOf('b')).toBe('fixed');

    const r3 = await run([{ records: [drift('a', 10), drift('b', 20)] }]);
    await ledger.closeRun(r3);
    expect(await stateOf('b')).toBe('reopened');
    changes = await ledger.runChanges(r3);
    expect(changes.changed.map((f) => [f.resourceId, f.change])).toEqual([['b', 'reopened']]);
    const rows = await db.pool.query(
      `SELECT count(*)::int AS n FROM jobs.findings WHERE check_name = $1 AND resource_id IN ('a', 'b')`,
      [CHECK],
    );
    expect(rows.rows[0].n).toBe(2);
    const detail = await ledger.get(changes.changed[0]?.id ?? '');
    expect(detail?.events.map((e) => e.event)).toEqual(['new', 'fixed', 'reopened']);
    expect(detail?.sightings).toHaveLength(2);
  });

  it('closes nothing for a Paused or Failed run, and nothing pass 2 dropped', async () => {
    const r1 = await run([{ records: [drift('c', 5), drift('d', 5)] }]);
    await ledger.closeRun(r1);
    const paused = await run([{ records: [] }], 'Paused');
    expect((await ledger.closeRun(paused))?.outcome).toBe('not_completed');
    // A Paused run is active (one per job): end it as a cancel would leave it for good.
    await db.pool.query(`UPDATE jobs.recoverable_runs SET status = 'Failed' WHERE id = $1`, [paused]);
    expect((await ledger.closeRun(paused))?.outcome).toBe('not_completed');
    const failed = await run([{ records: [] }], 'Failed');
    expect((await ledger.closeRun(failed))?.outcome).toBe('not_completed');
    expect(await stateOf('c')).toBe('open');
    const dropped = await run([
      { records: [], drops: [{ kind: 'drive_used_bytes_drift', resourceId: 'c' }] },
    ]);
    await ledger.closeRun(dropped);
    expect(await stateOf('c')).toBe('open');
    expect(await stateOf('d')).toBe('fixed');
  });

  it('keeps a finding open when the run’s grace boundary lies before the last sighting (grace > time between runs)', async () => {
    const r1 = await run([{ records: [drift('e', 5)] }]);
    await ledger.closeRun(r1);
    // The next run starts a day later with a 48 h grace: its boundary is before r1's sighting.
    const r2 = await run([{ records: [] }], 'Completed', 48 * 3600_000);
    await ledger.closeRun(r2);
    expect(await stateOf('e')).toBe('open');
    const r3 = await run([{ records: [] }], 'Completed', 3600_000);
    await ledger.closeRun(r3);
    expect(await stateOf('e')).toBe('fixed');
  });

  it('never fixes a kind the run did not examine (a deep-only kind in a normal run)', async () => {
    const r1 = await run([{ records: [drift('k', 5)] }]);
    await ledger.closeRun(r1);
    const normal = await run([{ records: [] }], 'Completed', 0, { drive_used_bytes_drift: null });
    await ledger.closeRun(normal);
    expect(await stateOf('k')).toBe('open');
    const deep = await run([{ records: [] }], 'Completed', 0, { drive_used_bytes_drift: 3600_000 });
    await ledger.closeRun(deep);
    expect(await stateOf('k')).toBe('fixed');
  });

  it('accept: not among what a run changed; worse (magnitude doubles) → open again; expiry → open', async () => {
    const r1 = await run([{ records: [drift('f', 100), drift('g', 100)] }]);
    await ledger.closeRun(r1);
    const page = await ledger.list({ check: CHECK, state: 'open' });
    const f = page.items.find((i) => i.resourceId === 'f');
    const g = page.items.find((i) => i.resourceId === 'g');
    if (!f || !g) throw new Error('missing');
    await ledger.decide(f.id, 'accept', { actor: 'admin-1', comment: 'known, repaired by reconcile' });
    await ledger.decide(g.id, 'accept', {
      actor: 'admin-1',
      comment: 'ok',
      acceptUntil: new Date(Date.now() + 60_000),
    });
    await expect(ledger.decide(f.id, 'reopen', { actor: 'a', comment: '' })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
    });
    await expect(
      ledger.decide(f.id, 'accept', { actor: 'a', comment: 'x', acceptUntil: new Date(Date.now() - 1000) }),
    ).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });

    const r2 = await run([{ records: [drift('f', 150), drift('g', 100)] }]);
    await ledger.closeRun(r2);
    expect(await stateOf('f')).toBe('accepted');
    expect((await ledger.runChanges(r2)).changed).toHaveLength(0);

    const r3 = await run([{ records: [drift('f', -200), drift('g', 100)] }]);
    await ledger.closeRun(r3);
    expect(await stateOf('f')).toBe('open');
    expect((await ledger.runChanges(r3)).changed.map((c) => [c.resourceId, c.change])).toEqual([
      ['f', 'worse'],
    ]);

    await db.pool.query(`UPDATE jobs.findings SET accept_until = now() - interval '1 second' WHERE id = $1`, [
      g.id,
    ]);
    const r4 = await run([{ records: [drift('f', -200), drift('g', 100)] }]);
    await ledger.closeRun(r4);
    expect(await stateOf('g')).toBe('open');
    expect((await ledger.runChanges(r4)).changed.map((c) => [c.resourceId, c.change])).toEqual([
      ['g', 'expired'],
    ]);

    await ledger.decide(g.id, 'false_positive', { actor: 'admin-2', comment: 'reconcile race' });
    const r5 = await run([{ records: [] }]);
    await ledger.closeRun(r5);
    expect(await stateOf('g')).toBe('false_positive');
    await expect(ledger.decide(g.id, 'accept', { actor: 'a', comment: 'x' })).resolves.toMatchObject({
      state: 'accepted',
    });
    await expect(ledger.decide(randomUUID(), 'accept', { actor: 'a', comment: 'x' })).rejects.toMatchObject({
      code: 'FINDING_NOT_FOUND',
    });
    expect(await stateOf('f')).toBe('fixed');
    await expect(ledger.decide(f.id, 'accept', { actor: 'a', comment: 'x' })).rejects.toMatchObject({
      code: 'INVALID_TRANSITION',
    });
  });

  it('a replayed batch (rolled back, written again) leaves one row and the same change', async () => {
    const r1 = await run([{ records: [drift('h', 1)] }, { records: [drift('h', 2)] }]);
    await ledger.closeRun(r1);
    const rows = await db.pool.query(`SELECT change FROM jobs.run_findings WHERE run_id = $1`, [r1]);
    expect(rows.rows).toEqual([{ change: 'new' }]);
    const events = await db.pool.query(
      `SELECT e.event FROM jobs.finding_events e JOIN jobs.findings f ON f.id = e.finding_id WHERE f.resource_id = 'h'`,
    );
    expect(events.rows).toEqual([{ event: 'new' }]);
  });
});

describe('PgFindingLedger.health', () => {
  it('answers per check: last completed run, open by severity, new and fixed, trend', async () => {
    const db = await createTestDatabase();
    try {
      const ledger = new PgFindingLedger({ pool: db.pool });
      const store = new PgFindingStore({ pool: db.pool });
      const id = randomUUID();
      await db.pool.query(
        `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at)
         VALUES ($1, 'files_consistency', 'Running', now(), now())`,
        [id],
      );
      await store.beginRun({ runId: id, checkName: 'files_consistency', startedAt: new Date(), graceMs: 0 });
      await store.write(id, [{ kind: 'missing_blob', severity: 'DataLoss', resourceId: 'x', detail: {} }]);
      await db.pool.query(
        `UPDATE jobs.recoverable_runs SET status = 'Completed', completed_at = now() WHERE id = $1`,
        [id],
      );
      await ledger.closeRun(id);
      const [files, drives] = await ledger.health(['files_consistency', 'drives_consistency']);
      expect(files).toMatchObject({
        check: 'files_consistency',
        lastCompletedRun: { runId: id },
        openBySeverity: { DataLoss: 1, Drift: 0 },
        newSincePrevious: 1,
        fixedSincePrevious: 0,
        trend: [{ runId: id, reported: 1, new: 1, fixed: 0 }],
      });
      expect(drives).toMatchObject({ check: 'drives_consistency', lastCompletedRun: null, trend: [] });
    } finally {
      await db.drop();
    }
  });
});
