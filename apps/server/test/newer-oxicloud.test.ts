import { createOxiCloudDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMigrations, type ComposedServer } from '../src/index.js';
import { capturingLogger, composeInProcess, scratchDir } from './fault-support.js';

/** One migration past the fact sheet's HEAD (20260921000000). */
const NEWER = 20261101000000;

/**
 * Beside an OxiCloud that migrated past what the engine knows: it says so
 * at boot, and before each check run holds what the check reads against
 * OxiCloud's schema as the engine knows it. A check whose column changed is
 * refused with the reason, not run; a check whose tables are as known runs.
 */
describe('beside a newer OxiCloud', () => {
  let db: TestDatabase;
  let dir: { path: string; remove(): void };
  let server: ComposedServer | undefined;
  const logger = capturingLogger();

  beforeAll(async () => {
    db = await createOxiCloudDatabase({ max: 4 });
    dir = scratchDir('newer-oxicloud');
    // What a newer OxiCloud did: one more migration, and storage.blobs.ref_count renamed.
    await db.pool.query(`
      INSERT INTO public._sqlx_migrations (version, description, success, checksum, execution_time)
      VALUES (${NEWER}, 'blob refs', true, sha384('${NEWER}'::bytea), 1000000);
      ALTER TABLE storage.blobs RENAME COLUMN ref_count TO refs;`);
    const prepared = await applyMigrations(db.pool, logger, { source: 'DATABASE_URL' });
    expect(prepared.mode).toMatchObject({ kind: 'sidecar', newerOxiCloud: true, oxicloudLatest: NEWER });
    ({ server } = await composeInProcess({
      pool: db.pool,
      dataDir: dir.path,
      database: prepared.mode,
      logger,
    }));
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    dir?.remove();
  });

  it('says so at boot', () => {
    const line = logger.lines.find((l) => l['event'] === 'database.oxicloud_newer');
    expect(line).toMatchObject({ oxicloud_latest_migration: NEWER, known_latest_migration: 20260921000000 });
  });

  it('refuses a check whose column changed, naming it; nothing is recorded and the run examined nothing', async () => {
    const outcome = await server!.engine.runOrResume('blobs_consistency', { force: true });
    expect(outcome.kind).toBe('err');
    const message = outcome.kind === 'err' ? outcome.message : '';
    expect(message).toMatch(
      /^blobs_consistency: refused: OxiCloud's latest migration 20261101000000 is newer/,
    );
    expect(message).toContain('storage.blobs: missing column ref_count integer');
    const { rows } = await db.pool.query(
      "SELECT status, error_message, (SELECT count(*)::int FROM oxijobs.run_findings f WHERE f.run_id = r.id) AS findings FROM oxijobs.recoverable_runs r WHERE job_name = 'blobs_consistency'",
    );
    expect(rows).toEqual([{ status: 'Failed', error_message: message, findings: 0 }]);
    expect(logger.lines.some((l) => l['event'] === 'consistency.refused')).toBe(true);
  });

  it('runs a check whose tables are as the engine knows them', async () => {
    const outcome = await server!.engine.runOrResume('folders_consistency', { force: true });
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ kind: 'ok', extra: { completed: true } });
  });
});
