import type { ConsistencyCheck } from '@oxicloud/consistency';
import { categoryOrderFor } from '@oxicloud/storage';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsistencyHarness, consistencyHarness } from './consistency-fixtures.js';

/**
 * Scan throughput of the three checks on OxiCloud's domain (personal drives
 * by the four writes, legacy whole-file blobs), against the one-statement
 * yardstick measured in the same run (PERFORMANCE.md). Off by default; run with
 * `OXICLOUD_CONSISTENCY_BENCH_FILES=1000000 npx vitest run test/consistency-throughput.test.ts`.
 */
const files = Number(process.env['OXICLOUD_CONSISTENCY_BENCH_FILES'] ?? 0);

describe.runIf(files > 0)(`consistency scan throughput over ${files} files`, () => {
  let db: TestDatabase;
  let h: ConsistencyHarness;
  const drives = Math.max(1, Math.round(files / 1000));

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    h = consistencyHarness(db.pool);
    const q = (text: string) => db.pool.query(text);
    const t0 = performance.now();
    await q(
      `INSERT INTO auth.users (username, email, role)
       SELECT 'u' || i, 'u' || i || '@example.test', 'user' FROM generate_series(1, ${drives}) i`,
    );
    // OxiCloud's four writes, in bulk and in one transaction (the orphan-root trigger checks at COMMIT).
    await q(`BEGIN;
      INSERT INTO storage.drives (kind, default_for_user, created_at)
        SELECT 'personal', id, now() - interval '2 days' FROM auth.users;
      INSERT INTO storage.folders (name, parent_id, drive_id, created_by, created_at)
        SELECT 'Personal', NULL, d.id, d.default_for_user, now() - interval '2 days' FROM storage.drives d;
      UPDATE storage.drives d SET root_folder_id = f.id
        FROM storage.folders f WHERE f.drive_id = d.id AND f.parent_id IS NULL;
      INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by)
        SELECT 'user', d.default_for_user, 'drive', d.id, 'owner', d.default_for_user FROM storage.drives d;
      COMMIT`);
    await q(`INSERT INTO storage.folders (drive_id, parent_id, name, created_at)
             SELECT d.id, d.root_folder_id, 'f' || g, now() - interval '2 days'
               FROM storage.drives d, generate_series(1, 20) g`);
    // 5 % of the folders trashed as OxiCloud trashes one (leaves: no descendants to cascade to).
    await q(`UPDATE storage.folders SET is_trashed = true, trashed_at = now() - interval '2 days',
                    original_parent_id = parent_id
              WHERE parent_id IS NOT NULL AND random() < 0.05`);
    // Legacy whole-file blobs: one object per file, counted once (OxiCloud's upload path counts, no trigger).
    await q(`INSERT INTO storage.blobs (hash, size, ref_count, content_type, created_at)
             SELECT md5(i::text) || md5((-i)::text), (i % 10000) + 1, 1, 'application/octet-stream',
                    now() - interval '2 days'
               FROM generate_series(1, ${files}) i`);
    await q(`CREATE TEMP TABLE bench_folders AS
             SELECT id, drive_id, is_trashed, row_number() OVER (ORDER BY id) AS rn
               FROM storage.folders WHERE parent_id IS NOT NULL`);
    await q(`INSERT INTO storage.files (id, drive_id, folder_id, name, blob_hash, size, is_trashed, trashed_at, created_at,
                                        media_sort_date, category_order)
             SELECT gen_random_uuid(), f.drive_id, f.id, 'file' || i, md5(i::text) || md5((-i)::text), (i % 10000) + 1,
                    f.is_trashed, CASE WHEN f.is_trashed THEN now() - interval '2 days' END, now() - interval '2 days',
                    now() - interval '2 days', ${categoryOrderFor('f', 'application/octet-stream')}
               FROM generate_series(1, ${files}) i
               JOIN bench_folders f ON f.rn = (i % ${drives * 20}) + 1`);
    // OxiCloud's formulas: a drive counts its live files; a user's envelope its personal drives.
    await q(`UPDATE storage.drives d SET used_bytes = s.total
               FROM (SELECT drive_id, sum(size) AS total FROM storage.files WHERE NOT is_trashed GROUP BY drive_id) s
              WHERE s.drive_id = d.id`);
    await q(`UPDATE auth.users u SET storage_used_bytes = s.total
               FROM (SELECT default_for_user, sum(used_bytes) AS total FROM storage.drives GROUP BY default_for_user) s
              WHERE s.default_for_user = u.id`);
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
