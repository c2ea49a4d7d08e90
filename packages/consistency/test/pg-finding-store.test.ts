import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Inconsistency, PgFindingStore } from '../src/index.js';

describe('PgFindingStore on jobs.run_findings', () => {
  let db: TestDatabase;
  let store: PgFindingStore;
  const runA = '00000000-0000-7000-8000-00000000000a';
  const runB = '00000000-0000-7000-8000-00000000000b';

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PgFindingStore({ pool: db.pool });
    for (const [id, job] of [
      [runA, 'files_consistency'],
      [runB, 'drives_consistency'],
    ]) {
      await db.pool.query(
        `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at)
         VALUES ($1, $2, 'Running', now(), now())`,
        [id, job],
      );
    }
  });
  /** One finding per write, each in its own transaction, answering as the old sink did. */
  const sinkOf = (runId: string) => ({
    recordFinding: async (f: Inconsistency) => (await store.write(runId, [f])).recordedNew[0],
    dropFinding: async (kind: string, resourceId: string) =>
      (await store.write(runId, [], [{ kind, resourceId }])).dropped[0],
  });
  afterAll(async () => {
    await db.drop();
  });

  it('upserts idempotently on (run_id, kind, resource_id) and says whether the finding was new', async () => {
    const sink = sinkOf(runA);
    const finding = {
      kind: 'missing_blob',
      severity: 'DataLoss' as const,
      resourceId: 'aa'.repeat(32),
      detail: { ref_count: 1 },
    };
    expect(await sink.recordFinding(finding)).toBe(true);
    expect(await sink.recordFinding({ ...finding, detail: { ref_count: 2 } })).toBe(false);
    // Same kind and resource in another run is another finding.
    expect(await sinkOf(runB).recordFinding(finding)).toBe(true);
    const rows = await db.pool.query(
      'SELECT run_id, detail FROM jobs.run_findings WHERE resource_id = $1 ORDER BY run_id',
      [finding.resourceId],
    );
    expect(rows.rows).toEqual([
      { run_id: runA, detail: { ref_count: 2 } },
      { run_id: runB, detail: { ref_count: 1 } },
    ]);
  });

  it('drops a finding and reports whether it existed', async () => {
    const sink = sinkOf(runB);
    expect(await sink.dropFinding('missing_blob', 'aa'.repeat(32))).toBe(true);
    expect(await sink.dropFinding('missing_blob', 'aa'.repeat(32))).toBe(false);
  });

  it('lists in triage order (worst severity, biggest impact first) and summarises per kind', async () => {
    const sink = sinkOf(runA);
    await sink.recordFinding({
      kind: 'drive_used_bytes_drift',
      severity: 'Drift',
      resourceId: 'd1',
      detail: {},
    });
    await sink.recordFinding({
      kind: 'missing_blob',
      severity: 'DataLoss',
      resourceId: 'bb'.repeat(32),
      detail: { ref_count: 7, total_bytes: 10 },
    });
    await sink.recordFinding({
      kind: 'missing_blob',
      severity: 'DataLoss',
      resourceId: 'cc'.repeat(32),
      detail: { ref_count: 7, total_bytes: 99 },
    });
    const all = await store.list(runA);
    expect(all.map((f) => f.resourceId)).toEqual(['cc'.repeat(32), 'bb'.repeat(32), 'aa'.repeat(32), 'd1']);
    expect(all[0]).toMatchObject({ runId: runA, kind: 'missing_blob', severity: 'DataLoss' });
    expect(all[0]?.foundAt).toBeInstanceOf(Date);
    expect((await store.list(runA, { severity: 'Drift' })).map((f) => f.resourceId)).toEqual(['d1']);
    expect((await store.list(runA, { limit: 1, offset: 1 })).map((f) => f.resourceId)).toEqual([
      'bb'.repeat(32),
    ]);
    expect(await store.summarize(runA)).toEqual([
      { kind: 'missing_blob', severity: 'DataLoss', count: 3 },
      { kind: 'drive_used_bytes_drift', severity: 'Drift', count: 1 },
    ]);
    await expect(store.list(runA, { limit: 0 })).rejects.toThrow(/limit must be an integer in 1..10000/);
  });

  it('wraps database errors with code DATABASE and the cause', async () => {
    const sink = sinkOf('00000000-0000-7000-8000-0000000000ff'); // no such run: FK violation
    const error = await sink
      .recordFinding({ kind: 'k', severity: 'Drift', resourceId: 'r', detail: {} })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'DATABASE' });
    expect((error as Error).message).toMatch(
      /could not write 1 finding\(s\) and drop 0 of run 0+-0+-7000-8000-0+ff in jobs.run_findings/,
    );
    expect((error as Error).cause).toBeInstanceOf(Error);
  });
});
