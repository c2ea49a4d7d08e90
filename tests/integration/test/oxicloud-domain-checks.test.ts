import { randomBytes } from 'node:crypto';
import {
  expectedFaultFindings,
  OXICLOUD_FAULT_EXPECTATIONS,
  OXICLOUD_FAULT_NAMES,
  type OxiCloudDatasetReport,
  type OxiCloudFaultRecord,
} from '@oxicloud/dataset';
import { defaultRunArgs, type JobOutcomeOk } from '@oxicloud/scheduler';
import { OxiTrashRepository, OxiUsageRepository } from '@oxicloud/storage/oxicloud';
import {
  createStorageReconcileJob,
  createTrashCleanupJob,
  storageReconcileConfigFromEnv,
  trashCleanupConfigFromEnv,
} from '@oxicloud/tenants';
import { type S3rverProcess, startS3rver } from '@oxicloud/test-support';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
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
 *   kind, severity and resource id, no missing and no extra;
 * - `storage_reconcile` (OxiUsageRepository) and `trash_cleanup`
 *   (OxiTrashRepository, its 30-day floor) on the generated data, with the
 *   batch afterwards.
 */

let s3: S3rverProcess;
const worlds: OxiDomainWorld[] = [];

beforeAll(async () => {
  s3 = await startS3rver();
}, 60_000);
// Each test's world (database, store, S3 prefix, hashing workers) is closed after it.
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.close();
}, 60_000);
afterAll(async () => {
  await s3?.stop();
}, 60_000);

async function world(store: OxiStoreKind, options: Parameters<typeof oxiDomainWorld>[0]['options']) {
  const w = await oxiDomainWorld({ store, s3, options });
  worlds.push(w);
  return w;
}

/** The finding lines a fault must give: `check kind severity resource_id`, one per resource. */
function expectedLines(record: OxiCloudFaultRecord): string[] {
  return expectedFaultFindings(record).map((f) => `${f.check} ${f.kind} ${f.severity} ${f.resourceId}`);
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
    // Every check the catalog declares (eight, one declaration each in @oxicloud/tenants), each once.
    expect(new Set(w.checks.map((c) => c.name)).size).toBe(8);
    expect(w.checks).toHaveLength(8);
    // The references check has rows to read: favorites and recent items of live files and folders.
    const { rows: refs } = await w.db.pool.query<{ n: number }>(
      'SELECT (SELECT count(*) FROM auth.user_favorites) + (SELECT count(*) FROM auth.user_recent_files) AS n',
    );
    expect(Number(refs[0]?.n)).toBeGreaterThan(0);
    // …and faces, each with its file's content hash.
    expect(w.report.counts.faces).toBeGreaterThan(0);

    const clean = await w.runBatch();
    expect(clean).toMatchObject({ completed: w.checks.length, failed: 0, findings: [] });

    // `deep` is really on: other bytes of the same size under a chunk's key are found by the re-hash only.
    const { rows } = await w.db.pool.query<{ hash: string; size: string }>(
      `SELECT b.hash, b.size::text AS size FROM storage.blobs b
        WHERE b.content_type IS NULL ORDER BY b.hash LIMIT 1`,
    );
    const victim = rows[0]!;
    // The store is the one named: S3 or local, and the encrypted ones hold nonce ‖ ciphertext ‖ tag.
    expect(w.store.blobs.backend).toBe(store.endsWith('s3') ? 's3' : 'local');
    const entry = await w.store.blobs.head(victim.hash);
    expect(entry?.storedSize ?? entry?.size).toBe(
      Number(victim.size) + (store.startsWith('encrypted') ? 28 : 0),
    );
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
  it('are only the grant inside its cleanup grace: the purge’s work, not a drift', () => {
    const none = OXICLOUD_FAULT_NAMES.filter((f) => OXICLOUD_FAULT_EXPECTATIONS[f].check === null);
    expect(none).toEqual(['expired_grants']);
  });
});

describe('storage_reconcile on the generated data (OxiUsageRepository)', () => {
  it('agrees with OxiCloud’s counters: trashed files are not counted, a file trashed without its usage is corrected', async () => {
    const w = await world('local', OXI_SMALL);
    const q = async <T extends Record<string, unknown>>(text: string, values: unknown[] = []) =>
      (await w.db.pool.query<T>(text, values)).rows;
    // The dataset holds trash whose bytes a "trashed included" sum would count.
    const [trash] = await q<{ n: string }>(
      'SELECT COALESCE(sum(size), 0)::text AS n FROM storage.files WHERE is_trashed',
    );
    expect(Number(trash?.n)).toBeGreaterThan(0);
    const job = createStorageReconcileJob({
      repository: new OxiUsageRepository(w.kysely),
      config: storageReconcileConfigFromEnv({}),
    });
    const clean = (await job.run(defaultRunArgs, new AbortController().signal)) as JobOutcomeOk;
    expect(clean).toMatchObject({ kind: 'ok', count: 0 });

    // A live file of a personal drive trashed the way a bulk path leaves it: the flag set, usage untouched.
    const [victim] = await q<{ id: string; size: string; drive_id: string; owner: string }>(
      `SELECT f.id, f.size::text AS size, f.drive_id, d.default_for_user AS owner
         FROM storage.files f JOIN storage.drives d ON d.id = f.drive_id
        WHERE NOT f.is_trashed AND f.size > 0 AND d.kind = 'personal' AND d.default_for_user IS NOT NULL
        ORDER BY f.name LIMIT 1`,
    );
    expect(victim).toBeDefined();
    await q(
      "UPDATE storage.files SET is_trashed = true, trashed_at = now() - interval '2 days' WHERE id = $1",
      [victim!.id],
    );
    // §12 item 9 drifts; item 10 still holds (the envelope is the sum of the drives' stored counters).
    const drifted = await w.runBatch();
    expect(drifted.findings).toEqual([`drives_consistency drive_used_bytes_drift Drift ${victim!.drive_id}`]);
    const [before] = await q<{ used: string }>(
      'SELECT used_bytes::text AS used FROM storage.drives WHERE id = $1',
      [victim!.drive_id],
    );

    // The reconcile corrects the drive, and the owner's envelope follows it.
    const fixed = (await job.run(defaultRunArgs, new AbortController().signal)) as JobOutcomeOk;
    expect(fixed).toMatchObject({ kind: 'ok', count: 2, extra: { drives_corrected: 1, users_corrected: 1 } });
    const size = Number(victim!.size);
    expect(fixed.extra['largest']).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          id: victim!.drive_id,
          kind: 'drive',
          before: Number(before?.used),
          after: Number(before?.used) - size,
          delta: -size,
        }),
        expect.objectContaining({ id: victim!.owner, kind: 'user', delta: -size }),
      ]),
    );
    // The counters are OxiCloud's again: Σ live files per drive, and the batch finds nothing.
    expect(
      await q(
        `SELECT d.id FROM storage.drives d
          WHERE d.used_bytes <> COALESCE((SELECT sum(f.size) FROM storage.files f
                                           WHERE f.drive_id = d.id AND NOT f.is_trashed), 0)`,
      ),
    ).toEqual([]);
    expect((await w.runBatch()).findings).toEqual([]);
  }, 120_000);
});

describe('trash_cleanup on the generated data (OxiTrashRepository)', () => {
  it('never purges trash younger than OxiCloud’s 30 days, whatever the configured retention', async () => {
    const w = await world('local', OXI_SMALL);
    const q = async <T extends Record<string, unknown>>(text: string) =>
      (await w.db.pool.query<T>(text)).rows;
    const ids = async (where: string) =>
      (
        await q<{ id: string }>(
          `SELECT id::text FROM storage.folders WHERE ${where}
           UNION ALL SELECT id::text FROM storage.files WHERE ${where} ORDER BY 1`,
        )
      ).map((r) => r.id);
    const old = await ids("is_trashed AND trashed_at < now() - interval '30 days'");
    const fresh = await ids("is_trashed AND trashed_at >= now() - interval '30 days'");
    const live = await ids('NOT is_trashed');
    // Fresh trash is 1–7 days old: a 1-day retention would purge it, the floor must not.
    expect(old.length).toBeGreaterThan(0);
    expect(fresh.length).toBeGreaterThan(0);
    expect(
      await ids(
        "is_trashed AND trashed_at < now() - interval '1 day' AND trashed_at >= now() - interval '30 days'",
      ),
    ).not.toEqual([]);

    // One-chunk contents with a file in the old trash: OxiCloud's trigger decrements their chunk row per
    // deleted file and nothing decrements the manifest (§5), so those rows drift low after any purge.
    const oneChunk = (
      await q<{ hash: string }>(
        `SELECT DISTINCT f.blob_hash AS hash FROM storage.files f
           JOIN storage.chunk_manifests m ON m.file_hash = f.blob_hash AND cardinality(m.chunk_hashes) = 1
          WHERE f.is_trashed AND f.trashed_at < now() - interval '30 days' ORDER BY 1`,
      )
    ).map((r) => r.hash);
    expect(oneChunk.length).toBeGreaterThan(0);
    // Every manifest with a file in the old trash: the purge deletes files rows and never the manifest's count.
    const purgedContent = (
      await q<{ hash: string }>(
        `SELECT DISTINCT f.blob_hash AS hash FROM storage.files f
           JOIN storage.chunk_manifests m ON m.file_hash = f.blob_hash
          WHERE f.is_trashed AND f.trashed_at < now() - interval '30 days' ORDER BY 1`,
      )
    ).map((r) => r.hash);
    expect(purgedContent.length).toBeGreaterThan(0);

    const job = createTrashCleanupJob({
      repository: new OxiTrashRepository(w.kysely, { logger: w.h.logger }),
      config: { ...trashCleanupConfigFromEnv({}), retentionDays: 1, batchSize: 7 },
      logger: w.h.logger,
    });
    const outcome = (await job.run(defaultRunArgs, new AbortController().signal)) as JobOutcomeOk;
    expect(outcome.kind).toBe('ok');
    expect(outcome.count).toBe(old.length);
    expect(w.h.lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ event: 'trash_cleanup.retention_floor', floor_days: 30 }),
      ]),
    );
    // Exactly the trash older than 30 days is gone; the fresh trash and every live row stay.
    expect(await ids('is_trashed')).toEqual(fresh);
    expect(await ids('NOT is_trashed')).toEqual(live);
    expect(await ids("is_trashed AND trashed_at < now() - interval '30 days'")).toEqual([]);

    // The batch afterwards: the usage, tree, grants and store still hold; only that documented drift shows.
    const after = await w.runBatch();
    expect(after).toMatchObject({ completed: w.checks.length, failed: 0 });
    // …and the manifests that counted the purged files: high while a file still names one, unreferenced once none does.
    const manifests = await q<{ hash: string; files: string }>(
      `SELECT m.file_hash AS hash, (SELECT count(*) FROM storage.files f WHERE f.blob_hash = m.file_hash)::text AS files
         FROM storage.chunk_manifests m
        WHERE m.ref_count <> (SELECT count(*) FROM storage.files f WHERE f.blob_hash = m.file_hash)`,
    );
    expect(manifests.map((m) => m.hash).sort()).toEqual(purgedContent);
    expect(after.findings).toEqual(
      [
        ...oneChunk.map((h) => `blobs_consistency ref_count_mismatch Drift ${h}`),
        ...manifests.map((m) =>
          m.files === '0'
            ? `manifests_consistency manifest_unreferenced Reclaimable ${m.hash}`
            : `manifests_consistency manifest_ref_count_high Drift ${m.hash}`,
        ),
      ].sort(),
    );
  }, 120_000);
});
