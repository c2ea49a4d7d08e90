import { completed, RecoverableEngine, type RecoverableJobHandler } from '@oxicloud/recoverable';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgJobFreshnessStore } from '../src/freshness/job-freshness-store.js';

/**
 * A recoverable run's deep success counts for the deep cadence: the run's
 * `deep` option reaches the freshness store through the engine's
 * `RunFinishedEvent.options`, never by reading the run row's JSON.
 */
describe('freshness of recoverable runs', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('a deep run records a deep success; a regular one does not', async () => {
    const store = new PgJobFreshnessStore(db.pool);
    const job: RecoverableJobHandler = {
      name: 'deep_walk',
      capabilities: { deep: true },
      async runResumable(s) {
        await s.checkpoint(Uint8Array.of(1), 1);
        return completed();
      },
    };
    const engine = new RecoverableEngine({
      pool: db.pool,
      onRunFinished: (event) =>
        store.recordRecoverableRun(event.run_id, event.status === 'Completed', event.options.deep),
    });
    engine.register(job);
    const deepOf = async () => (await store.list()).find((r) => r.job === 'deep_walk');

    await engine.runOrResume('deep_walk');
    const regular = await deepOf();
    expect(regular?.lastSuccessAt).toBeInstanceOf(Date);
    expect(regular?.lastDeepSuccessAt ?? null).toBeNull();

    await engine.runOrResume('deep_walk', { deep: true });
    const deep = await deepOf();
    expect(deep?.lastDeepSuccessAt).toBeInstanceOf(Date);
    expect(deep?.lastDeepSuccessAt?.getTime()).toBe(deep?.lastSuccessAt?.getTime());
    await engine.shutdown({ timeoutMs: 1000 });
  });
});
