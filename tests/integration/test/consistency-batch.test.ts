import { type ConsistencyCheck, checkJob } from '@oxicloud/consistency';
import { JobCatalog } from '@oxicloud/recoverable';
import { defaultRunArgs, type JobOutcome } from '@oxicloud/scheduler';
import { createConsistencyBatchJob } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type OxiWorld, oxiWorld } from '../../../packages/storage/src/oxicloud/test-fixtures.js';
import { type ConsistencyHarness, consistencyHarness } from './consistency-fixtures.js';
import { type BlobWorld, blobWorld, putBlob } from './storage-consistency-fixtures.js';

/**
 * consistency_batch through a real RecoverableEngine with four checks of
 * OxiCloud's domain (drives, folders, files on the Oxi scans; storage over
 * OxiBlobIndexScan and a real local blob root) registered via checkJob on
 * real Postgres: the order, the params handed on, a failing child, a paused
 * child resumed. Every check over a generated dataset on each store is
 * `oxicloud-domain-checks.test.ts`.
 */
describe('consistency_batch over four checks on a RecoverableEngine', () => {
  let db: TestDatabase;
  let h: ConsistencyHarness;
  let w: BlobWorld;
  let world: OxiWorld;
  let other: OxiWorld;

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
  });
  afterAll(async () => {
    await db.drop();
  });
  beforeEach(async () => {
    await db.pool.query(
      'DELETE FROM jobs.recoverable_runs; DELETE FROM auth.users; DELETE FROM storage.blobs; DELETE FROM storage.chunk_manifests',
    );
    h = consistencyHarness(db.pool);
    w = await blobWorld(db.pool);
    // Two consistent drives, their content uploaded as OxiCloud's upload path writes it, bytes in the store.
    world = await oxiWorld(db.pool, w.storage);
    other = await oxiWorld(db.pool, w.storage);
    const docs = await world.folder('docs');
    for (let i = 0; i < 4; i++) await world.upload({ name: `f${i}`, folderId: docs });
    await world.upload({ name: 'two-chunks', data: Buffer.alloc(100_000, 7) });
    await other.upload({ name: 'g' });
    await db.pool.query(`UPDATE storage.drives d SET used_bytes = COALESCE((SELECT sum(size) FROM storage.files f
                          WHERE f.drive_id = d.id AND NOT f.is_trashed), 0)`);
    await db.pool.query(`UPDATE auth.users u SET storage_used_bytes = COALESCE((SELECT sum(used_bytes)
                          FROM storage.drives d WHERE d.default_for_user = u.id), 0)`);
    const findings = h.findings;
    const checks: ConsistencyCheck[] = [
      w.check(),
      h.files.consistencyChecks()[0] as ConsistencyCheck,
      h.drives.consistencyChecks()[0] as ConsistencyCheck,
      h.folders.consistencyChecks()[0] as ConsistencyCheck,
    ];
    for (const check of checks) h.engine.register(checkJob(check, { findings }));
  });
  afterEach(async () => {
    await h.engine.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
    await w.close();
  });

  const batch = () =>
    createConsistencyBatchJob({
      checks: () => new JobCatalog({ list: () => [] }, h.engine).checks().map((c) => c.name),
      runOrResume: (name, args) => h.engine.runOrResume(name, args),
      logger: h.logger,
    });
  const perCheck = (outcome: JobOutcome) =>
    (outcome.kind === 'ok' ? outcome.extra['per_check'] : {}) as Record<
      string,
      { outcome: JobOutcome; run_id?: string }
    >;

  it('runs drives, folders, files, storage in turn, each a completed run with its findings', async () => {
    // A drive counting 300 bytes it does not hold; the owner's envelope follows it (only the drive drifts).
    await db.pool.query('UPDATE storage.drives SET used_bytes = used_bytes + 300 WHERE id = $1', [
      other.driveId,
    ]);
    await db.pool.query('UPDATE auth.users SET storage_used_bytes = storage_used_bytes + 300 WHERE id = $1', [
      other.userId,
    ]);
    const orphan = await putBlob(db.pool, w, { row: false });
    const outcome = await batch().run(defaultRunArgs, new AbortController().signal);
    expect(outcome).toMatchObject({ kind: 'ok', count: 4, extra: { completed: 4, failed: 0, deep: false } });
    const per = perCheck(outcome);
    expect(Object.keys(per)).toEqual([
      'drives_consistency',
      'folders_consistency',
      'files_consistency',
      'storage_consistency',
    ]);
    expect(per['drives_consistency']?.outcome).toMatchObject({
      kind: 'ok',
      count: 1,
      extra: { completed: true },
    });
    expect(per['folders_consistency']?.outcome).toMatchObject({ kind: 'ok', count: 0 });
    expect(per['files_consistency']?.outcome).toMatchObject({ kind: 'ok', count: 0 });
    expect(per['storage_consistency']?.outcome).toMatchObject({ kind: 'ok', count: 1 });
    const storageRun = per['storage_consistency']?.run_id as string;
    const findings = await h.findings.list(storageRun, { limit: 10 });
    expect(findings.map((f) => `${f.kind} ${f.resourceId}`)).toEqual([`orphan_blob ${orphan.hash}`]);
    // One run row per check, all Completed, in the order of the batch.
    const { rows } = await db.pool.query(
      'SELECT job_name, status FROM jobs.recoverable_runs ORDER BY started_at, job_name',
    );
    expect(rows.map((r) => `${r.job_name} ${r.status}`)).toEqual([
      'drives_consistency Completed',
      'folders_consistency Completed',
      'files_consistency Completed',
      'storage_consistency Completed',
    ]);
  });

  it('passes deep and force on into every child run params', async () => {
    const outcome = await batch().run({ force: false, deep: true }, new AbortController().signal);
    expect(outcome).toMatchObject({ kind: 'ok', count: 4, extra: { deep: true } });
    const { rows } = await db.pool.query('SELECT job_name, params FROM jobs.recoverable_runs');
    expect(rows).toHaveLength(4);
    for (const row of rows) expect(row.params).toMatchObject({ deep: true, force: false });
  });

  it('a failing child lands in per_check, the batch is still ok and the others still run', async () => {
    h.engine.register(
      checkJob(
        {
          name: 'broken_consistency',
          subsystem: 'broken',
          order: 99,
          countMeaning: 'never counts: it fails',
          kinds: [],
          graceWindowMs: () => 0,
          concurrentSafe: () => true,
          runResumable: async () => {
            throw new Error('the disk controller caught fire');
          },
        },
        { findings: h.findings },
      ),
    );
    const outcome = await batch().run(defaultRunArgs, new AbortController().signal);
    expect(outcome).toMatchObject({ kind: 'ok', count: 4, extra: { completed: 4, failed: 1 } });
    const per = perCheck(outcome);
    expect(Object.keys(per).at(-1)).toBe('broken_consistency');
    expect(per['broken_consistency']?.outcome).toEqual({
      kind: 'err',
      message: 'broken_consistency: the disk controller caught fire',
    });
    const { rows } = await db.pool.query(
      "SELECT status, error_message FROM jobs.recoverable_runs WHERE job_name = 'broken_consistency'",
    );
    expect(rows).toEqual([
      { status: 'Failed', error_message: 'broken_consistency: the disk controller caught fire' },
    ]);
  });

  it('a Paused child is resumed by the batch (same run id)', async () => {
    await putBlob(db.pool, w, { row: false });
    await db.pool.query(
      `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at, cursor)
       VALUES (gen_random_uuid(), 'storage_consistency', 'Paused', now(), now(), NULL)`,
    );
    const { rows: before } = await db.pool.query(
      "SELECT id FROM jobs.recoverable_runs WHERE job_name = 'storage_consistency'",
    );
    const outcome = await batch().run(defaultRunArgs, new AbortController().signal);
    expect(perCheck(outcome)['storage_consistency']).toMatchObject({
      run_id: before[0].id,
      outcome: { kind: 'ok', count: 1, extra: { completed: true } },
    });
  });
});
