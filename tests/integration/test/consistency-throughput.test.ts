import type { ConsistencyCheck } from '@oxicloud/consistency';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsistencyHarness, consistencyHarness } from './consistency-fixtures.js';

/**
 * Scan throughput of the three checks, against the one-statement yardstick
 * measured in the same run (PERFORMANCE.md). Off by default; run with
 * `OXICLOUD_CONSISTENCY_BENCH_FILES=1000000 npx vitest run test/consistency-throughput.test.ts`.
 */
const files = Number(process.env['OXICLOUD_CONSISTENCY_BENCH_FILES'] ?? 0);

describe.runIf(files > 0)(`consistency scan throughput over ${files} files`, () => {
  let db: TestDatabase;
  let h: ConsistencyHarness;
  const drives = Math.max(1, Math.round(files / 1000));

  beforeAll(async () => {
    db = await createTestDatabase();
    h = consistencyHarness(db.pool);
    const q = (text: string) => db.pool.query(text);
    const t0 = performance.now();
    await q(
      `INSERT INTO auth.users (id, username) SELECT gen_random_uuid(), 'u' || i FROM generate_series(1, ${drives}) i`,
    );
    await q(
      `INSERT INTO storage.drives (id, owner_id, name) SELECT gen_random_uuid(), id, 'main' FROM auth.users`,
    );
    await q(`INSERT INTO storage.folders (id, drive_id, name, created_at)
             SELECT gen_random_uuid(), d.id, 'f' || g, now() - interval '2 days'
               FROM storage.drives d, generate_series(1, 20) g`);
    await q(
      `UPDATE storage.folders SET is_trashed = true, trashed_at = now() - interval '2 days' WHERE random() < 0.05`,
    );
    await q(`INSERT INTO storage.blobs (hash, size, created_at)
             SELECT md5(i::text) || md5((-i)::text), (i % 10000) + 1, now() - interval '2 days'
               FROM generate_series(1, ${files}) i`);
    await q(`CREATE TEMP TABLE bench_folders AS
             SELECT id, drive_id, is_trashed, row_number() OVER (ORDER BY id) AS rn FROM storage.folders`);
    await q(`INSERT INTO storage.files (id, drive_id, folder_id, name, blob_hash, size, is_trashed, trashed_at, created_at)
             SELECT gen_random_uuid(), f.drive_id, f.id, 'file' || i, md5(i::text) || md5((-i)::text), (i % 10000) + 1,
                    f.is_trashed, CASE WHEN f.is_trashed THEN now() - interval '2 days' END, now() - interval '2 days'
               FROM generate_series(1, ${files}) i
               JOIN bench_folders f ON f.rn = (i % ${drives * 20}) + 1`);
    await q(`UPDATE storage.drives d SET used_bytes = s.total
               FROM (SELECT drive_id, sum(size) AS total FROM storage.files GROUP BY drive_id) s WHERE s.drive_id = d.id`);
    await q(`UPDATE auth.users u SET storage_used_bytes = s.total
               FROM (SELECT owner_id, sum(used_bytes) AS total FROM storage.drives GROUP BY owner_id) s WHERE s.owner_id = u.id`);
    await q('VACUUM ANALYZE');
    console.log(
      `seeded ${files} files, ${drives} drives, ${drives * 20} folders in ${Math.round(performance.now() - t0)} ms`,
    );
  }, 1_800_000);
  afterAll(async () => {
    await h?.engine.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
    await db?.drop();
  });

  it('measures the yardstick and each check', async () => {
    const t0 = performance.now();
    const { rows } = await db.pool.query(`
      SELECT count(*) AS n,
             count(*) FILTER (WHERE b.hash IS NULL OR b.size <> f.size OR (NOT f.is_trashed AND d.is_trashed)) AS bad
        FROM storage.files f LEFT JOIN storage.blobs b ON b.hash = f.blob_hash
        LEFT JOIN storage.folders d ON d.id = f.folder_id`);
    const yardstickMs = performance.now() - t0;
    expect(Number(rows[0].bad)).toBe(0);
    const report = [`yardstick (one statement): ${Math.round(files / (yardstickMs / 1000))} rows/s`];
    const checks: Array<[ConsistencyCheck, Record<string, unknown>]> = [
      [h.files.consistencyChecks()[0]!, {}],
      [h.files.consistencyChecks()[0]!, { batch_size: 5000 }],
      [h.folders.consistencyChecks()[0]!, {}],
      [h.drives.consistencyChecks()[0]!, {}],
    ];
    for (const [check, params] of checks) {
      const started = performance.now();
      const run = await h.run(check, params);
      const ms = performance.now() - started;
      expect(run.status).toBe('Completed');
      expect(run.findings).toEqual([]);
      const scanned = Number(run.stats['scanned_count']);
      report.push(
        `${check.name} ${JSON.stringify(params)}: ${scanned} rows in ${Math.round(ms)} ms = ${Math.round(scanned / (ms / 1000))} rows/s`,
      );
    }
    console.log(report.join('\n'));
  }, 1_800_000);
});
