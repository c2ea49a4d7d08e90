import { migrate, PACKAGE_SCHEMAS, readMigrationFiles } from '@oxicloud/migrations';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('migrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('records every migration and applies nothing on a second run', async () => {
    const result = await migrate(db.pool);
    expect(result.error).toBeUndefined();
    expect(result.applied).toEqual([]);
    // The server's files, then each package's schema steps (named `<package>/<file>`).
    expect(result.alreadyApplied).toEqual([
      ...readMigrationFiles().map((f) => f.name),
      ...PACKAGE_SCHEMAS.flatMap((schema) => schema.steps.map((step) => `${schema.package}/${step.name}`)),
    ]);
  });

  it('every migration file and every package schema file applies twice in a row without error', async () => {
    const fresh = await createTestDatabase();
    const client = new pg.Client({ connectionString: fresh.url });
    await client.connect();
    try {
      await client.query(
        'DROP SCHEMA storage CASCADE; DROP SCHEMA jobs CASCADE; DROP SCHEMA auth CASCADE; DROP TABLE public.oxicloud_migrations',
      );
      for (const file of [...readMigrationFiles(), ...PACKAGE_SCHEMAS.flatMap((s) => s.steps)]) {
        await client.query(file.sql);
        await client.query(file.sql);
      }
      const tables = await client.query(
        `SELECT table_schema || '.' || table_name AS t FROM information_schema.tables
          WHERE table_schema IN ('auth', 'storage', 'jobs') ORDER BY 1`,
      );
      expect(tables.rows.map((r) => r.t)).toEqual([
        'auth.users',
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
        'storage.audio_metadata',
        'storage.blobs',
        'storage.drives',
        'storage.files',
        'storage.folders',
        'storage.image_metadata',
        'storage.role_grants',
      ]);
    } finally {
      await client.end();
      await fresh.drop();
    }
  });

  it('refuses an edited migration with a clear error', async () => {
    const files = readMigrationFiles();
    const edited = files.map((f, i) => (i === 0 ? { ...f, checksum: 'edited' } : f));
    const result = await migrate(db.pool, { files: edited });
    expect(result.error?.code).toBe('CHECKSUM_MISMATCH');
    expect(result.error?.message).toMatch(/must not be edited/);
  });

  it('keeps folder path and lpath from the parent chain, and cascades renames', async () => {
    const c = db.pool;
    const user = await c.query("INSERT INTO auth.users (username) VALUES ('paths') RETURNING id");
    const drive = await c.query("INSERT INTO storage.drives (owner_id, name) VALUES ($1, 'd') RETURNING id", [
      user.rows[0].id,
    ]);
    const d = drive.rows[0].id;
    const a = await c.query(
      "INSERT INTO storage.folders (drive_id, name) VALUES ($1, 'a') RETURNING id, path, lpath::text",
      [d],
    );
    const b = await c.query(
      "INSERT INTO storage.folders (drive_id, parent_id, name) VALUES ($1, $2, 'b') RETURNING id, path, lpath::text",
      [d, a.rows[0].id],
    );
    expect(a.rows[0].path).toBe('/a');
    expect(b.rows[0].path).toBe('/a/b');
    const label = (id: string) => id.replaceAll('-', '');
    expect(b.rows[0].lpath).toBe(`${label(a.rows[0].id)}.${label(b.rows[0].id)}`);
    await c.query("UPDATE storage.folders SET name = 'renamed' WHERE id = $1", [a.rows[0].id]);
    const after = await c.query('SELECT path FROM storage.folders WHERE id = $1', [b.rows[0].id]);
    expect(after.rows[0].path).toBe('/renamed/b');
  });

  it('keeps blob ref_count by trigger and sets orphaned_at when it reaches 0', async () => {
    const c = db.pool;
    const hash = 'a'.repeat(64);
    await c.query('INSERT INTO storage.blobs (hash, size) VALUES ($1, 3)', [hash]);
    const fresh = await c.query('SELECT ref_count, orphaned_at FROM storage.blobs WHERE hash = $1', [hash]);
    expect(fresh.rows[0].ref_count).toBe(0);
    expect(fresh.rows[0].orphaned_at).not.toBeNull();
    const user = await c.query("INSERT INTO auth.users (username) VALUES ('refs') RETURNING id");
    const drive = await c.query("INSERT INTO storage.drives (owner_id, name) VALUES ($1, 'd') RETURNING id", [
      user.rows[0].id,
    ]);
    await c.query(
      "INSERT INTO storage.files (drive_id, name, blob_hash, size) VALUES ($1, 'x', $2, 3), ($1, 'y', $2, 3)",
      [drive.rows[0].id, hash],
    );
    const two = await c.query('SELECT ref_count, orphaned_at FROM storage.blobs WHERE hash = $1', [hash]);
    expect(two.rows[0]).toEqual({ ref_count: 2, orphaned_at: null });
    await c.query("DELETE FROM storage.files WHERE name = 'x'");
    const one = await c.query('SELECT ref_count, orphaned_at FROM storage.blobs WHERE hash = $1', [hash]);
    expect(one.rows[0]).toEqual({ ref_count: 1, orphaned_at: null });
    await c.query("DELETE FROM storage.files WHERE name = 'y'");
    const zero = await c.query('SELECT ref_count, orphaned_at FROM storage.blobs WHERE hash = $1', [hash]);
    expect(zero.rows[0].ref_count).toBe(0);
    expect(zero.rows[0].orphaned_at).toBeInstanceOf(Date);
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
