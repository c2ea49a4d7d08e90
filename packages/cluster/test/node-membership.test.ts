import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
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

  it('at start, removes dead nodes of this host and releases the periodic jobs they held; other hosts keep theirs', async () => {
    // A pid that surely exited: a child that ran and ended.
    const child = spawnSync(process.execPath, ['-e', '']);
    const deadLocal = `${hostname()}:${child.pid}:abc123`;
    const otherHost = 'another-host-x:42:def456';
    for (const id of [deadLocal, otherHost]) {
      const [host, pid] = id.split(':');
      await db.pool.query(
        `INSERT INTO jobs.nodes (id, host, pid, version, started_at, last_heartbeat_at)
         VALUES ($1, $2, $3, '0', now(), now())`,
        [id, host, Number(pid)],
      );
    }
    await db.pool.query(
      `INSERT INTO jobs.periodic_state (job, owner_node, running_since, lease_until) VALUES
         ('held_by_dead', $1, now(), now() + interval '1 minute'),
         ('held_by_other', $2, now(), now() + interval '1 minute')`,
      [deadLocal, otherHost],
    );
    const node = new NodeMembership({
      pool: db.pool,
      version: '1',
      heartbeatMs: 60_000,
      logger: silentLogger,
    });
    await node.start();
    try {
      const ids = (await node.list()).map((n) => n.id);
      expect(ids).not.toContain(deadLocal);
      expect(ids).toContain(otherHost);
      const { rows } = await db.pool.query(
        `SELECT job, owner_node FROM jobs.periodic_state WHERE job LIKE 'held_by_%' ORDER BY job`,
      );
      expect(rows).toEqual([
        { job: 'held_by_dead', owner_node: null },
        { job: 'held_by_other', owner_node: otherHost },
      ]);
    } finally {
      await node.stop();
      await db.pool.query(`DELETE FROM jobs.nodes WHERE id = $1`, [otherHost]);
    }
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
