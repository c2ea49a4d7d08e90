/**
 * Repair plans on real Postgres: a selection of open findings becomes a
 * stored plan with one line per finding and a hash over its whole content;
 * planning writes nothing to the storage domain; a choice changes the hash.
 */
import { createHash, randomUUID } from 'node:crypto';
import { PgRepairPlans, type Severity, severityRank } from '@oxicloud/consistency';
import { OxiRepairStore } from '@oxicloud/storage/oxicloud';
import {
  createRepairActions,
  createRepairPlanner,
  isTenantsError,
  planHash,
  type RepairLine,
  type RepairPlanner,
  TRASH_CHILD,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  insertOxiDrive as insertDrive,
  insertOxiFolder as insertFolder,
  insertOxiUser as insertUser,
  oxiKysely,
} from './oxicloud-domain-fixtures.js';

describe('repair plans on Postgres', () => {
  let db: TestDatabase;
  let planner: RepairPlanner;
  let drive: string;
  let child: string;
  const ids: Record<string, string> = {};

  async function insertFinding(
    check: string,
    kind: string,
    resourceId: string,
    severity: string,
    state = 'open',
  ) {
    const id = randomUUID();
    await db.pool.query(
      `INSERT INTO jobs.findings (id, check_name, kind, resource_id, severity, severity_rank, highest_severity,
                                 state, first_seen_at, last_seen_at, last_seen_boundary)
       VALUES ($1, $2, $3, $4, $5, $6, $5, $7, now(), now(), now())`,
      [id, check, kind, resourceId, severity, severityRank(severity as Severity), state],
    );
    return id;
  }

  /** A checksum of the storage domain's rows. */
  async function storageChecksum(): Promise<string> {
    const { rows } = await db.pool.query(
      `SELECT (SELECT json_agg(d ORDER BY d.id) FROM storage.drives d) AS drives,
              (SELECT json_agg(f ORDER BY f.id) FROM storage.folders f) AS folders,
              (SELECT json_agg(u ORDER BY u.id) FROM auth.users u) AS users`,
    );
    return createHash('sha256').update(JSON.stringify(rows)).digest('hex');
  }

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    const actions = createRepairActions({ store: new OxiRepairStore(oxiKysely(db.pool)) });
    planner = createRepairPlanner({ actions, plans: new PgRepairPlans({ pool: db.pool }) });
    const user = await insertUser(db.pool, 'owner');
    drive = await insertDrive(db.pool, user, 'main', 4096);
    const top = await insertFolder(db.pool, drive, null, 'top', new Date());
    child = await insertFolder(db.pool, drive, top, 'child');
    ids['drift'] = await insertFinding('drives_consistency', 'drive_used_bytes_drift', drive, 'Drift');
    ids['trashed'] = await insertFinding('folders_consistency', 'parent_trashed_mismatch', child, 'DataLoss');
    ids['fixed'] = await insertFinding('drives_consistency', 'user_used_bytes_drift', user, 'Drift', 'fixed');
    ids['grant'] = await insertFinding('grants_consistency', 'dangling_grant', randomUUID(), 'Reclaimable');
  });
  afterAll(async () => {
    await db.drop();
  });

  it('plans the open findings of a filter, one line each, without writing to the storage domain', async () => {
    const before = await storageChecksum();
    const plan = await planner.plan({ selection: { check: 'drives_consistency' }, actor: 'admin-1' });
    expect(await storageChecksum()).toBe(before);
    expect(plan.state).toBe('planned');
    expect(plan.createdBy).toBe('admin-1');
    expect(plan.lines.map((l) => l.findingId)).toEqual([ids['drift']]); // the fixed one is not planned
    const [line] = plan.lines;
    expect(line).toMatchObject({
      type: 'action',
      action: 'recompute_drive_used_bytes',
      status: 'pending',
      before: { used_bytes: 4096, files_bytes: 0 },
      after: { used_bytes: 0 },
    });
    expect(plan.hash).toBe(
      planHash(plan.lines.map(({ status, skipReason, verified, ...l }) => l as RepairLine)),
    );
    const again = await planner.get(plan.id);
    expect(again?.hash).toBe(plan.hash);
    expect(again?.lines).toEqual(plan.lines);
  });

  it('by ids: lines in severity order, needs-a-person where no action exists, a choice changes the hash', async () => {
    const plan = await planner.plan({
      selection: { findingIds: [ids['grant'] as string, ids['trashed'] as string, ids['drift'] as string] },
      actor: 'admin-1',
    });
    expect(plan.lines.map((l) => [l.fingerprint.kind, l.type, l.status])).toEqual([
      ['parent_trashed_mismatch', 'action', 'pending'], // DataLoss
      ['dangling_grant', 'needs_person', 'needs_person'], // Reclaimable
      ['drive_used_bytes_drift', 'action', 'pending'], // Drift
    ]);
    expect(plan.unchosen).toBe(1);
    const chosen = await planner.choose(plan.id, { [ids['trashed'] as string]: TRASH_CHILD });
    expect(chosen.unchosen).toBe(0);
    expect(chosen.hash).not.toBe(plan.hash);
    const line = chosen.lines[0];
    expect(line?.type === 'action' && line.choice).toBe(TRASH_CHILD);
    expect(line?.type === 'action' && line.derived.map((d) => d.id)).toEqual([child]);
  });

  it('refuses a choice the line does not offer, naming the allowed ones', async () => {
    const error = await planner
      .plan({
        selection: { findingIds: [ids['trashed'] as string] },
        choices: { [ids['trashed'] as string]: 'burn_it' },
        actor: 'admin-1',
      })
      .catch((e: unknown) => e);
    expect(isTenantsError(error, 'INVALID_ARGUMENT')).toBe(true);
    expect((error as Error).message).toMatch(/allowed restore_parent, trash_child/);
  });

  it('refuses an empty filter and a malformed id', async () => {
    await expect(planner.plan({ selection: {}, actor: 'a' })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
    });
    await expect(planner.plan({ selection: { findingIds: ['nope'] }, actor: 'a' })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
      message: expect.stringMatching(/not a UUID/),
    });
  });
});
