import type { StoredFinding } from '@oxicloud/consistency';
import { PgGrantScan } from '@oxicloud/storage';
import {
  DANGLING_GRANT,
  EXPIRED_GRANT_LINGERING,
  GRANTS_CONSISTENCY_CHECK_NAME,
  grantsConsistencyConfigFromEnv,
  isTenantsError,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ConsistencyHarness, consistencyHarness } from './consistency-fixtures.js';

let db: TestDatabase;
let h: ConsistencyHarness;
let userId: string;
let driveId: string;
let folderId: string;
let fileId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  h = consistencyHarness(db.pool);
  const q = async (text: string, values: unknown[] = []) => (await db.pool.query(text, values)).rows[0].id;
  userId = await q("INSERT INTO auth.users (username) VALUES ('grants') RETURNING id");
  driveId = await q("INSERT INTO storage.drives (owner_id, name) VALUES ($1, 'main') RETURNING id", [userId]);
  folderId = await q("INSERT INTO storage.folders (drive_id, name) VALUES ($1, 'shared') RETURNING id", [
    driveId,
  ]);
  const hash = 'a'.repeat(64);
  await db.pool.query('INSERT INTO storage.blobs (hash, size) VALUES ($1, 1)', [hash]);
  fileId = await q(
    "INSERT INTO storage.files (drive_id, folder_id, name, blob_hash, size) VALUES ($1, $2, 'f', $3, 1) RETURNING id",
    [driveId, folderId, hash],
  );
});
afterAll(async () => {
  await h?.engine.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
  await db?.drop();
});
beforeEach(async () => {
  await db.pool.query('DELETE FROM storage.role_grants');
});

const check = () => new PgGrantScan(h.db).consistencyChecks()[0]!;
const kinds = (findings: readonly StoredFinding[]) =>
  findings.map((f) => `${f.kind} ${f.severity} ${f.resourceId}`).sort();

/** A grant two days old; `expires` is an SQL expression (or null). */
async function grant(
  type: string,
  resourceId: string,
  expires: string | null = null,
  created = "interval '2 days'",
) {
  const { rows } = await db.pool.query(
    `INSERT INTO storage.role_grants (subject_id, resource_type, resource_id, role, created_at, expires_at)
     VALUES ($1, $2, $3, 'viewer', now() - ${created}, ${expires ?? 'NULL'}) RETURNING id`,
    [userId, type, resourceId],
  );
  return rows[0].id as string;
}

describe('grants_consistency: each role grant against its resource and its expiry', () => {
  it('is the check of the grants under its job name', () => {
    expect(check().name).toBe(GRANTS_CONSISTENCY_CHECK_NAME);
    expect(check().name).toBe('grants_consistency');
    expect(check().subsystem).toBe('grants');
  });

  it('grants on a live drive, folder and file, and a recently expired one → no findings', async () => {
    await grant('drive', driveId);
    await grant('folder', folderId, "now() + interval '1 day'");
    await grant('file', fileId);
    await grant('file', '00000000-0000-7000-8000-000000000001', "now() - interval '2 days'"); // cleanup's business, not lingering yet
    const run = await h.run(check(), { batch_size: 2 });
    expect(run.status).toBe('Completed');
    expect(run.findings).toEqual([]);
    expect(run.stats['scanned_count']).toBe(4);
  });

  it('a grant whose drive / folder / file is gone → dangling_grant (Reclaimable) each; young ones only with force', async () => {
    const gone = '00000000-0000-7000-8000-00000000dead';
    const a = await grant('drive', gone);
    const b = await grant('folder', driveId); // a drive id is no folder
    const c = await grant('file', gone, "now() + interval '3 days'");
    const young = await grant('file', gone, null, "interval '5 minutes'");
    await grant('drive', driveId);
    const run = await h.run(check(), { batch_size: 2 });
    expect(kinds(run.findings)).toEqual([a, b, c].map((id) => `${DANGLING_GRANT} Reclaimable ${id}`).sort());
    expect(run.findings.find((f) => f.resourceId === b)?.detail).toMatchObject({
      resource_type: 'folder',
      resource_id: driveId,
    });
    const forced = await h.run(check(), { force: true });
    expect(kinds(forced.findings)).toEqual(
      [a, b, c, young].map((id) => `${DANGLING_GRANT} Reclaimable ${id}`).sort(),
    );
  });

  it('an expired grant past cleanup grace + 7 days → expired_grant_lingering (Drift) only, even when dangling; force does not move the threshold', async () => {
    const lingering = await grant('drive', driveId, "now() - interval '9 days'");
    const lingeringDangling = await grant(
      'file',
      '00000000-0000-7000-8000-00000000beef',
      "now() - interval '30 days'",
    );
    await grant('drive', driveId, "now() - interval '7 days'"); // 1 d grace + 7 d margin not yet over
    const run = await h.run(check(), { force: true });
    expect(kinds(run.findings)).toEqual(
      [lingering, lingeringDangling].map((id) => `${EXPIRED_GRANT_LINGERING} Drift ${id}`).sort(),
    );
    expect(run.findings.find((f) => f.resourceId === lingeringDangling)?.detail).toMatchObject({
      resource_exists: false,
    });
  });

  it('the margin is configurable (env, validated) and added to the cleanup grace', async () => {
    const g = await grant('drive', driveId, "now() - interval '3 days'");
    expect(grantsConsistencyConfigFromEnv({})).toEqual({ lingerMarginMs: 7 * 86_400_000 });
    const config = grantsConsistencyConfigFromEnv({ OXICLOUD_GRANTS_CONSISTENCY_LINGER_MARGIN_DAYS: '1' });
    // A harness of its own: the shared one keeps the check it registered first (default margin).
    const own = consistencyHarness(db.pool);
    const run = await own.run(
      new PgGrantScan(own.db, {
        checks: { grants_consistency: { cleanupGraceMs: 3_600_000, ...config } },
      }).consistencyChecks()[0]!,
    );
    await own.engine.shutdown({ timeoutMs: 1000 });
    expect(kinds(run.findings)).toEqual([`${EXPIRED_GRANT_LINGERING} Drift ${g}`]);
    let thrown: unknown;
    try {
      grantsConsistencyConfigFromEnv({ OXICLOUD_GRANTS_CONSISTENCY_LINGER_MARGIN_DAYS: 'week' });
    } catch (error) {
      thrown = error;
    }
    expect(isTenantsError(thrown, 'INVALID_CONFIG')).toBe(true);
    expect(String((thrown as Error).message)).toContain('OXICLOUD_GRANTS_CONSISTENCY_LINGER_MARGIN_DAYS');
  });
});
