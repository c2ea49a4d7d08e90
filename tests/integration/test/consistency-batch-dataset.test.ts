import { type ConsistencyCheck, checkJob } from '@oxicloud/consistency';
import { backdateLocalBlob, type DatasetReport, FAULT_NAMES, generateDataset } from '@oxicloud/dataset';
import { JobCatalog } from '@oxicloud/recoverable';
import type { JobOutcome } from '@oxicloud/scheduler';
import { createConsistencyBatchJob } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsistencyHarness, consistencyHarness } from './consistency-fixtures.js';
import { type BlobWorld, blobWorld } from './storage-consistency-fixtures.js';

/**
 * The seeded faults are the findings: `seed --faults all` at small scale,
 * then `consistency_batch` with `force` over every check; the union of the
 * children's findings must equal the union of the report's expected findings,
 * no more and no fewer. The checks are the catalog's: every check the
 * server's Postgres scans and blob backend contribute, however many.
 */
describe('consistency_batch --force over a dataset with every fault', () => {
  let db: TestDatabase;
  let h: ConsistencyHarness;
  let w: BlobWorld;
  let report: DatasetReport;
  let checks: ConsistencyCheck[];
  /** The catalog `consistency_batch` reads: the checks registered in the engine, by declared order. */
  const catalog = () => new JobCatalog({ list: () => [] }, h.engine);

  beforeAll(async () => {
    db = await createTestDatabase();
    w = await blobWorld(db.pool);
    h = consistencyHarness(db.pool);
    report = await generateDataset({
      pool: db.pool,
      blobs: w.storage,
      backdateBlob: backdateLocalBlob((hash) => w.storage.pathOf(hash)),
      options: {
        users: 30,
        filesPerUser: 20,
        blobsOnDisk: 200,
        foldersPerDrive: { min: 8, max: 16 },
        secondDriveShare: 0.5,
        trashedFolderShare: 0.2,
        trashedFileShare: 0.1,
        grants: 6,
        seed: 29,
        faults: [...FAULT_NAMES],
        faultsPerKind: 2,
      },
    });
    checks = [w.check(), ...h.scans.flatMap((a) => a.consistencyChecks())];
    for (const check of checks) h.engine.register(checkJob(check, { findings: h.findings }));
  }, 180_000);
  afterAll(async () => {
    await h?.engine.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
    await w?.close();
    await db?.drop();
  });

  it('every fault names the findings it must produce; the new faults each at least one', () => {
    expect(report.faults.map((f) => f.fault)).toEqual([...FAULT_NAMES]);
    for (const f of report.faults) {
      if (f.expect.job.endsWith('_consistency')) expect(f.findings.length, f.fault).toBeGreaterThan(0);
      else expect(f.findings, f.fault).toEqual([]);
    }
  });

  it('reports exactly the seeded findings, no more and no fewer', async () => {
    const batch = createConsistencyBatchJob({
      checks: () =>
        catalog()
          .checks()
          .map((c) => c.name),
      runOrResume: (name, args) => h.engine.runOrResume(name, args),
      logger: h.logger,
    });
    const outcome = await batch.run({ force: true, deep: false }, new AbortController().signal);
    const n = checks.length;
    expect(outcome).toMatchObject({ kind: 'ok', count: n, extra: { completed: n, failed: 0, force: true } });
    const perCheck = (outcome.kind === 'ok' ? outcome.extra['per_check'] : {}) as Record<
      string,
      { outcome: JobOutcome; run_id?: string }
    >;
    // Every check, in its declared order (ties by name); among them every check a fault must make report.
    const byOrder = [...checks]
      .sort((a, b) => a.order - b.order || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((c) => c.name);
    expect(Object.keys(perCheck)).toEqual(byOrder);
    expect(byOrder).toEqual(
      expect.arrayContaining(report.faults.flatMap((f) => f.findings.map((x) => x.job))),
    );
    const found: string[] = [];
    for (const [job, entry] of Object.entries(perCheck)) {
      const findings = await h.findings.list(entry.run_id as string, { limit: 1000 });
      for (const f of findings) found.push(`${job} ${f.kind} ${f.severity} ${f.resourceId}`);
    }
    const expected = report.faults
      .flatMap((f) => f.findings)
      .map((x) => `${x.job} ${x.kind} ${x.severity} ${x.resourceId}`);
    expect(new Set(expected).size).toBe(expected.length);
    const missing = expected.filter((x) => !found.includes(x));
    const extra = found.filter((x) => !expected.includes(x));
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
    expect(found.sort()).toEqual(expected.sort());
  }, 120_000);
});
