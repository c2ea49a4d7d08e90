import { randomBytes } from 'node:crypto';
import {
  OXICLOUD_FAULT_EXPECTATIONS,
  OXICLOUD_FAULT_NAMES,
  type OxiCloudDatasetReport,
  type OxiCloudFaultRecord,
} from '@oxicloud/dataset';
import { type S3rverProcess, startS3rver } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  OXI_SMALL,
  OXI_STORES,
  type OxiDomainWorld,
  type OxiStoreKind,
  oxiDomainWorld,
} from './oxicloud-domain-fixtures.js';

/**
 * Issue 30, "Done when" 2, end to end on OxiCloud's domain: a database with
 * OxiCloud's schema (`createTestDatabase({ domain: 'oxicloud' })`), a
 * generated dataset with every content and tree shape (multi-chunk,
 * one-chunk, empty, legacy, dedup, trash, shared drives, thumbnails) on each
 * blob store OxiCloud runs on (local, S3, both encrypted), and the real
 * `consistency_batch` with `force` and `deep` over every check wired to the
 * `@oxicloud/storage/oxicloud` adapters:
 *
 * - clean data: 0 findings, every check completed;
 * - every ported fault injected at once (each on resources of its own):
 *   exactly the findings `OXICLOUD_FAULT_EXPECTATIONS` declares, by check,
 *   kind, severity and resource id, no missing and no extra.
 */

let s3: S3rverProcess;
const worlds: OxiDomainWorld[] = [];

beforeAll(async () => {
  s3 = await startS3rver();
}, 60_000);
afterAll(async () => {
  for (const w of worlds) await w.close();
  await s3?.stop();
}, 60_000);

async function world(store: OxiStoreKind, options: Parameters<typeof oxiDomainWorld>[0]['options']) {
  const w = await oxiDomainWorld({ store, s3, options });
  worlds.push(w);
  return w;
}

/** The finding line a fault must give: `check kind severity resource_id`, one per resource. */
function expectedLines(record: OxiCloudFaultRecord): string[] {
  const e = OXICLOUD_FAULT_EXPECTATIONS[record.fault];
  if (e.check === null) return [];
  const severity = 'severity' in e ? e.severity : undefined;
  return record.resources.map((r) => {
    const id = 'findingId' in e && e.findingId === 'file_hash' ? String(r.detail?.['fileHash']) : r.id;
    return `${e.check} ${e.kind} ${severity} ${id}`;
  });
}

/** The shapes the clean dataset must hold, or a 0 would prove little. */
function expectEveryShape(report: OxiCloudDatasetReport): void {
  const c = report.counts;
  for (const key of [
    'multiChunkFiles',
    'oneChunkFiles',
    'emptyFiles',
    'legacyFiles',
    'dedupFiles',
    'sharedChunks',
    'trashedFiles',
    'trashedFolders',
    'oldTrashedFiles',
    'sharedDrives',
    'thumbnails',
    'grants',
  ] as const) {
    expect(c[key], key).toBeGreaterThan(0);
  }
  expect(c.files).toBeLessThan(500);
}

describe.each(OXI_STORES)('consistency_batch --force --deep on OxiCloud’s domain, %s store', (store) => {
  it('reports 0 findings on a clean generated dataset; a deep run catches bytes swapped under a key', async () => {
    const w = await world(store, OXI_SMALL);
    expectEveryShape(w.report);
    expect(w.report.faults).toEqual([]);
    expect(w.checks.map((c) => c.name).sort()).toEqual(
      [
        'blobs_consistency',
        'drives_consistency',
        'files_consistency',
        'folders_consistency',
        'grants_consistency',
        'storage_consistency',
      ].sort(),
    );

    const clean = await w.runBatch();
    expect(clean).toMatchObject({ completed: w.checks.length, failed: 0, findings: [] });

    // `deep` is really on: other bytes of the same size under a chunk's key are found by the re-hash only.
    const { rows } = await w.db.pool.query<{ hash: string; size: string }>(
      `SELECT b.hash, b.size::text AS size FROM storage.blobs b
        WHERE b.content_type IS NULL ORDER BY b.hash LIMIT 1`,
    );
    const victim = rows[0]!;
    await w.store.blobs.put(victim.hash, randomBytes(Number(victim.size)), Number(victim.size));
    const swapped = await w.runBatch();
    expect(swapped).toMatchObject({ completed: w.checks.length, failed: 0 });
    expect(swapped.findings).toEqual([`storage_consistency blob_hash_mismatch DataLoss ${victim.hash}`]);
  }, 180_000);

  it('reports exactly the findings of every ported fault, no missing and no extra', async () => {
    const w = await world(store, {
      ...OXI_SMALL,
      users: 12,
      sharedDrives: 6,
      seed: 11,
      faults: [...OXICLOUD_FAULT_NAMES],
    });
    expect(w.report.faults.map((f) => f.fault)).toEqual([...OXICLOUD_FAULT_NAMES]);
    const run = await w.runBatch();
    expect(run).toMatchObject({ completed: w.checks.length, failed: 0 });

    // Fault by fault: each one's lines are all there (the faults touch disjoint resources).
    const byFault = Object.fromEntries(
      w.report.faults.map((r) => [r.fault, expectedLines(r).filter((l) => run.findings.includes(l))]),
    );
    const wanted = Object.fromEntries(w.report.faults.map((r) => [r.fault, expectedLines(r)]));
    expect(byFault).toEqual(wanted);

    // And nothing else: the union is exactly the findings.
    const expected = w.report.faults.flatMap(expectedLines).sort();
    expect(new Set(expected).size).toBe(expected.length);
    const missing = expected.filter((l) => !run.findings.includes(l));
    const extra = run.findings.filter((l) => !expected.includes(l));
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
    expect(run.findings).toEqual(expected);
  }, 180_000);
});

describe('the faults no check on OxiCloud’s domain reports', () => {
  it('are the §12 items without a check yet, and the grant inside its cleanup grace', () => {
    const none = OXICLOUD_FAULT_NAMES.filter((f) => OXICLOUD_FAULT_EXPECTATIONS[f].check === null);
    expect(none).toEqual([
      'manifest_ref_count_drift',
      'manifest_shape_mismatch',
      'drive_without_owner',
      'orphan_thumbnail',
      'expired_grants',
    ]);
  });
});
