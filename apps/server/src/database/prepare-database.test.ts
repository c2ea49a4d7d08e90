import { CapturingLogger, createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMigrations } from './prepare-database.js';

describe('applyMigrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('the first boot says "applied N of M", a later one "up to date (M)": the same M', async () => {
    const first = new CapturingLogger();
    const { applied } = await applyMigrations(db.pool, first);
    const total = applied.length;
    expect(total).toBeGreaterThan(10);
    // The packages' schema steps are counted too.
    expect(applied.some((name) => name.startsWith('@oxicloud/recoverable/'))).toBe(true);
    expect(first.events('database.migrated')[0]?.message).toBe(`applied ${total} of ${total} migration(s)`);

    const later = new CapturingLogger();
    await applyMigrations(db.pool, later);
    const line = later.events('database.migrated')[0];
    expect(line?.message).toBe(`database schema up to date (${total} migration(s))`);
    expect(line?.fields).toMatchObject({ applied: [], already_applied: total, total });
  });
});
