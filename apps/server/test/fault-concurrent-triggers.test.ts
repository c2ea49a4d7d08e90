import { request } from 'node:http';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminClient,
  adminToken,
  type CliProcess,
  freePort,
  killHard,
  scratchDir,
  seedOxiCloud,
  serverEnv,
  startServer,
} from './fault-support.js';

interface TriggerAnswer {
  status: number;
  body: { run_id?: string; resumed?: boolean; already_running?: boolean; error?: { code: string } };
  socket: string;
}

/** One POST on a socket of its own (`agent: false`, `Connection: close`): no pooling, no pipelining. */
function triggerOnOwnSocket(port: number, path: string, token: string, body: string): Promise<TriggerAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${token}`,
          connection: 'close',
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(text) as TriggerAnswer['body'],
            socket: `${req.socket?.localPort}`,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Issue 8: 100 concurrent triggers of the same recoverable job, each on its
 * own TCP connection to a real server process, start exactly one run (and 100
 * concurrent triggers of a Paused run resume it exactly once). The unique
 * one-active-run index settles the race, not the process: every request gets
 * 202 with the same run id.
 */
describe('100 concurrent triggers of one recoverable job', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof scratchDir>;
  let server: CliProcess;
  let port: number;
  let token: string;
  const JOB = 'files_consistency';
  const PATH = `/api/admin/jobs/${JOB}/trigger`;

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    dir = scratchDir('fault-concurrent');
    await seedOxiCloud(db.pool, dir.path, {
      users: 4,
      filesPerDrive: 50,
      foldersPerDrive: { min: 3, max: 6 },
      seed: 11,
    });
    port = await freePort();
    server = await startServer(serverEnv({ databaseUrl: db.url, dataDir: dir.path, httpPort: port }));
    token = await adminToken(db.pool);
  });

  afterAll(async () => {
    if (server) await killHard(server);
    await db?.drop();
    dir?.remove();
  });

  async function fire(n: number, body: string): Promise<TriggerAnswer[]> {
    return Promise.all(Array.from({ length: n }, () => triggerOnOwnSocket(port, PATH, token, body)));
  }

  it('a fresh start: one run id for all 100, exactly one of them started it', async () => {
    // A slow run (1 row per batch, 100 ms apart) so every trigger lands while it is active.
    const answers = await fire(100, JSON.stringify({ batch_size: 1, throttle_ms: 100 }));
    expect(answers.map((a) => a.status)).toEqual(Array(100).fill(202));
    expect(new Set(answers.map((a) => a.socket)).size).toBe(100);
    const ids = new Set(answers.map((a) => a.body.run_id));
    expect(ids.size).toBe(1);
    const starters = answers.filter((a) => a.body.already_running === false);
    expect(starters).toHaveLength(1);
    expect(starters[0]?.body.resumed).toBe(false);
    const rows = await db.pool.query('SELECT id::text FROM jobs.recoverable_runs WHERE job_name = $1', [JOB]);
    expect(rows.rows.map((r) => r.id)).toEqual([...ids]);
    expect(server.child.exitCode).toBeNull();
  });

  it('a Paused run: 100 concurrent triggers resume it exactly once, under the same id', async () => {
    const api = adminClient(`http://127.0.0.1:${port}`, token);
    const [run] = await api.runs(JOB);
    const cancel = await fetch(`http://127.0.0.1:${port}/api/admin/jobs/${JOB}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(cancel.status).toBe(200);
    const paused = await api.waitFor(JOB, run!.run_id, ['Paused'], 20_000);
    expect(paused.status).toBe('Paused');

    const answers = await fire(100, '{}');
    expect(answers.map((a) => a.status)).toEqual(Array(100).fill(202));
    expect(new Set(answers.map((a) => a.body.run_id))).toEqual(new Set([run!.run_id]));
    expect(answers.filter((a) => a.body.resumed === true)).toHaveLength(1);
    const rows = await db.pool.query('SELECT status FROM jobs.recoverable_runs WHERE job_name = $1', [JOB]);
    expect(rows.rows).toEqual([{ status: 'Running' }]);
    // The resumed run kept the params of its first trigger.
    const resumed = await api.run(JOB, run!.run_id);
    expect(resumed).toMatchObject({ status: 'Running', params: { batch_size: 1, throttle_ms: 100 } });
  });
});
