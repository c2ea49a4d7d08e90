import { silentLogger } from '@oxicloud/scheduler';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterError, NodeMembership } from '../src/index.js';

describe('NodeMembership on real Postgres (the migrated template has the cluster tables)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('registers with host and pid, heartbeats by the database clock, deregisters on stop', async () => {
    const node = new NodeMembership({
      pool: db.pool,
      version: '9.9.9',
      heartbeatMs: 100,
      logger: silentLogger,
    });
    await node.start();
    const [first] = await node.list();
    expect(first).toMatchObject({ id: node.nodeId, pid: process.pid, version: '9.9.9' });
    await new Promise((resolve) => setTimeout(resolve, 350));
    const [later] = await node.list();
    expect(later!.lastHeartbeatAt.getTime()).toBeGreaterThan(first!.lastHeartbeatAt.getTime());
    expect(later!.startedAt).toEqual(first!.startedAt);
    expect(Math.abs(node.offsetMs)).toBeLessThan(1_000);
    await db.pool.query(
      `INSERT INTO jobs.periodic_state (job, owner_node, running_since, lease_until) VALUES ('held', $1, now(), now() + interval '1 minute')`,
      [node.nodeId],
    );
    await node.stop();
    expect(await node.list()).toEqual([]);
    const { rows } = await db.pool.query(`SELECT owner_node FROM jobs.periodic_state WHERE job = 'held'`);
    expect(rows[0].owner_node).toBeNull();
  });

  it('prunes nodes silent for longer than pruneAfterMs, and a pruned live node registers again', async () => {
    await db.pool.query(
      `INSERT INTO jobs.nodes (id, host, pid, version, started_at, last_heartbeat_at)
       VALUES ('gone:1:abcdef', 'gone', 1, '0', now() - interval '1 hour', now() - interval '1 hour')`,
    );
    const node = new NodeMembership({
      pool: db.pool,
      version: '1',
      heartbeatMs: 60_000,
      pruneAfterMs: 120_000,
      logger: silentLogger,
    });
    await node.start();
    await db.pool.query('DELETE FROM jobs.nodes WHERE id = $1', [node.nodeId]);
    await node.heartbeat();
    expect((await node.list()).map((n) => n.id)).toEqual([node.nodeId]);
    await node.stop();
  });

  it('refuses a prune age shorter than two heartbeats', () => {
    expect(
      () =>
        new NodeMembership({
          pool: db.pool,
          version: '1',
          heartbeatMs: 5_000,
          pruneAfterMs: 6_000,
          logger: silentLogger,
        }),
    ).toThrow(ClusterError);
  });
});
