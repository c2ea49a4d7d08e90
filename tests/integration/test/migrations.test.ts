import { migrate, PACKAGE_SCHEMAS, storageDomainFiles } from '@oxicloud/migrations';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * What `migrate({ domain: 'oxicloud' })` makes of a database, the way the
 * server calls it: OxiCloud's storage domain (`migrations/oxicloud-domain/`),
 * the `jobs` schema and the server's jobs table, then each package's schema
 * steps; a second call applies nothing; each file is safe to run twice; an
 * edited file is refused. The domain's tables and triggers themselves are
 * `migrations/test/oxicloud-domain-schema.test.ts` and
 * `migrations/test/oxicloud-domain-triggers.test.ts`.
 */
describe('migrations on the oxicloud domain', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    // The template is exactly what migrate({ domain: 'oxicloud' }) made of an empty database.
    db = await createTestDatabase({ domain: 'oxicloud' });
  });
  afterAll(async () => {
    await db.drop();
  });

  it('records every file of the domain and every package schema step, and applies nothing on a second run', async () => {
    const result = await migrate(db.pool, { domain: 'oxicloud' });
    expect(result.error).toBeUndefined();
    expect(result.applied).toEqual([]);
    // The domain's files (storage, then jobs, then the server's jobs table), then each package's steps.
    expect(result.alreadyApplied).toEqual([
      ...storageDomainFiles('oxicloud').map((f) => f.name),
      ...PACKAGE_SCHEMAS.flatMap((schema) => schema.steps.map((step) => `${schema.package}/${step.name}`)),
    ]);
    const { rows } = await db.pool.query('SELECT domain FROM public.oxicloud_storage_domain');
    expect(rows).toEqual([{ domain: 'oxicloud' }]);
    // Idempotent again: a third call is the second.
    expect(await migrate(db.pool, { domain: 'oxicloud' })).toMatchObject({ applied: [] });
  });

  it('every file of the domain and every package schema file applies twice in a row without error', async () => {
    const fresh = await createTestDatabase({ empty: true, max: 1 });
    const client = new pg.Client({ connectionString: fresh.url });
    await client.connect();
    try {
      for (const file of [...storageDomainFiles('oxicloud'), ...PACKAGE_SCHEMAS.flatMap((s) => s.steps)]) {
        await client.query(file.sql);
        await client.query(file.sql);
      }
      const tables = await client.query(
        `SELECT table_schema || '.' || table_name AS t FROM information_schema.tables
          WHERE table_schema = 'jobs' ORDER BY 1`,
      );
      expect(tables.rows.map((r) => r.t)).toEqual([
        'jobs.finding_events',
        'jobs.finding_runs',
        'jobs.findings',
        'jobs.job_registrations',
        'jobs.nodes',
        'jobs.periodic_runs',
        'jobs.periodic_state',
        'jobs.recoverable_runs',
        'jobs.repair_audit',
        'jobs.repair_plan_items',
        'jobs.repair_plans',
        'jobs.run_findings',
        'jobs.run_unexamined',
      ]);
      // OxiCloud's content tables, none of the old model's (`storage.image_metadata`, `storage.audio_metadata`).
      const storage = await client.query(
        `SELECT table_schema || '.' || table_name AS t FROM information_schema.tables
          WHERE table_schema IN ('storage', 'audio') AND table_type = 'BASE TABLE'
            AND table_name IN ('blobs', 'chunk_manifests', 'drives', 'folders', 'files', 'role_grants',
                               'file_metadata', 'image_metadata', 'audio_metadata') ORDER BY 1`,
      );
      expect(storage.rows.map((r) => r.t)).toEqual([
        'audio.file_metadata',
        'storage.blobs',
        'storage.chunk_manifests',
        'storage.drives',
        'storage.file_metadata',
        'storage.files',
        'storage.folders',
        'storage.role_grants',
      ]);
    } finally {
      await client.end();
      await fresh.drop();
    }
  });

  it('refuses an edited migration with a clear error', async () => {
    const files = storageDomainFiles('oxicloud');
    const edited = files.map((f, i) => (i === 0 ? { ...f, checksum: 'edited' } : f));
    const result = await migrate(db.pool, { files: edited });
    expect(result.error?.code).toBe('CHECKSUM_MISMATCH');
    expect(result.error?.message).toMatch(/must not be edited/);
  });

  it('allows one active run per job (the partial unique index)', async () => {
    const c = db.pool;
    const insert = (id: string, status: string) =>
      c.query(
        `INSERT INTO jobs.recoverable_runs (id, job_name, status, started_at, last_progress_at)
         VALUES ($1, 'unique_probe', $2, NOW(), NOW())`,
        [id, status],
      );
    await insert('00000000-0000-4000-8000-000000000001', 'Running');
    await expect(insert('00000000-0000-4000-8000-000000000002', 'CancelRequested')).rejects.toThrow(
      /one_active_run_per_job/,
    );
    await insert('00000000-0000-4000-8000-000000000003', 'Completed');
  });
});
