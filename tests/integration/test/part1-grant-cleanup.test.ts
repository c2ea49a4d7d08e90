import { randomUUID } from 'node:crypto';
import { defaultRunArgs, type JobOutcomeOk } from '@oxicloud/scheduler';
import { type OxiCloudDatabase, OxiGrantRepository } from '@oxicloud/storage/oxicloud';
import { createGrantCleanupJob, grantCleanupConfigFromEnv } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ago, DAY, HOUR, recordingLogger } from './part1-fixtures.js';

/**
 * grant_cleanup as a job on OxiCloud's `storage.role_grants` (no foreign
 * keys: subjects and resources are plain ids), through OxiGrantRepository:
 * the grace, `force`, the audit line and the batches. What the repository
 * deletes beside a grant (a share's last token grant takes its share along)
 * is `packages/storage/src/oxicloud/oxi-grant-scan.test.ts`.
 */
describe('grant_cleanup on OxiCloud’s grants', () => {
  let db: TestDatabase;
  let kysely: Kysely<OxiCloudDatabase>;
  const repository = () => new OxiGrantRepository(kysely);
  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    kysely = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
  });
  afterAll(async () => {
    await kysely?.destroy();
    await db?.drop();
  });

  it('deletes only grants expired past the grace (force: grace 0) and writes the audit line', async () => {
    const pool = db.pool;
    const [owner, drive] = [randomUUID(), randomUUID()];
    const grant = async (label: string, expiresAt: Date | null) => {
      // One grant per (subject, resource): each its own guest.
      const { rows } = await pool.query<{ id: string }>(
        `INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by, expires_at)
         VALUES ('user', $1, 'drive', $2, 'viewer', $3, $4) RETURNING id`,
        [randomUUID(), drive, owner, expiresAt],
      );
      return [label, rows[0]!.id] as const;
    };
    const ids = Object.fromEntries([
      await grant('expired2d', ago(2 * DAY)),
      await grant('expired25h', ago(25 * HOUR)),
      await grant('expired1h', ago(HOUR)),
      await grant('future', ago(-DAY)),
      await grant('never', null),
    ]);
    const remaining = async () =>
      (await pool.query<{ id: string }>('SELECT id FROM storage.role_grants ORDER BY id')).rows
        .map((r) => r.id)
        .sort();

    const logger = recordingLogger();
    const job = createGrantCleanupJob({
      repository: repository(),
      config: grantCleanupConfigFromEnv({}),
      logger,
    });
    expect(job.intervalMs).toBe(24 * HOUR);
    const outcome = (await job.run(defaultRunArgs, new AbortController().signal)) as JobOutcomeOk;
    expect(outcome.kind).toBe('ok');
    expect(outcome.count).toBe(2);
    expect(outcome.extra).toMatchObject({ grace_seconds: 86_400, forced: false });
    expect(await remaining()).toEqual([ids['expired1h'], ids['future'], ids['never']].sort());
    const audit = logger.lines.filter((l) => l.fields['target'] === 'audit');
    expect(audit).toHaveLength(1);
    expect(audit[0]!.fields).toMatchObject({
      event: 'grant_cleanup.deleted',
      count: 2,
      grant_ids: [ids['expired2d'], ids['expired25h']],
      grant_ids_truncated: false,
      forced: false,
    });

    const forced = (await job.run({ force: true }, new AbortController().signal)) as JobOutcomeOk;
    expect(forced.count).toBe(1);
    expect(forced.extra).toMatchObject({ grace_seconds: 0, forced: true });
    expect(await remaining()).toEqual([ids['future'], ids['never']].sort());
    expect(logger.lines.filter((l) => l.fields['target'] === 'audit')[1]!.fields).toMatchObject({
      count: 1,
      grant_ids: [ids['expired1h']],
      forced: true,
    });
  });

  it('works through a large backlog in batches', async () => {
    const pool = db.pool;
    const subject = randomUUID();
    await pool.query(
      `INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by, expires_at)
       SELECT 'user', $1, 'file', gen_random_uuid(), 'viewer', $1, now() - interval '3 days' - g * interval '1 second'
         FROM generate_series(1, 250) g`,
      [subject],
    );
    const logger = recordingLogger();
    const job = createGrantCleanupJob({
      repository: repository(),
      config: grantCleanupConfigFromEnv({ OXICLOUD_GRANT_CLEANUP_BATCH_SIZE: '100' }),
      logger,
    });
    const outcome = (await job.run(defaultRunArgs, new AbortController().signal)) as JobOutcomeOk;
    expect(outcome.count).toBe(250);
    const audit = logger.lines.find((l) => l.fields['target'] === 'audit')!;
    expect(audit.fields).toMatchObject({ count: 250, grant_ids_truncated: true });
    expect(audit.fields['grant_ids']).toHaveLength(100);
    const left = await pool.query('SELECT 1 FROM storage.role_grants WHERE subject_id = $1', [subject]);
    expect(left.rowCount).toBe(0);
  });
});
