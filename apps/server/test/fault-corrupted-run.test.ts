import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ComposedServer } from '../src/index.js';
import {
  adminToken,
  composeInProcess,
  type RunJson,
  scratchDir,
  seedOxiCloud,
  sleep,
} from './fault-support.js';

const CONSISTENCY_JOBS = [
  'drives_consistency',
  'folders_consistency',
  'files_consistency',
  'storage_consistency',
];

/** What a hand-edited or half-written row can hold, and what the error message must name. */
const CORRUPTIONS: Array<{ label: string; set: string; names: RegExp }> = [
  { label: "cursor = '\\x00ff'", set: "cursor = '\\x00ff'::bytea", names: /cursor/i },
  {
    label: "cursor = '\\x01ff' (a known phase, a truncated key)",
    set: "cursor = '\\x01ff'::bytea",
    names: /cursor/i,
  },
  {
    label: 'cursor = 40 random bytes',
    set: "cursor = decode('deadbeef' || repeat('ab', 36), 'hex')",
    names: /cursor/i,
  },
  { label: 'params = "garbage"', set: `params = '"garbage"'::jsonb`, names: /params must be a JSON object/ },
  {
    label: 'params.batch_size = "lots"',
    set: `params = '{"batch_size": "lots"}'::jsonb`,
    names: /batch_size/,
  },
  { label: 'stats = []', set: `stats = '[]'::jsonb`, names: /stats must be a JSON object/ },
];

/**
 * Issue 8: a corrupted cursor or params row of a Paused run. Resuming it fails
 * the run with a message naming what was wrong (never a crash, never a silent
 * restart from scratch), and the engine keeps serving: another job completes,
 * and the same job starts fresh afterwards. In-process (`composeServer`) over
 * the real admin routes and a real database with a small generated dataset.
 */
describe('a corrupted cursor or params row', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof scratchDir>;
  let server: ComposedServer;
  let auth: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    dir = scratchDir('fault-corrupt');
    await seedOxiCloud(db.pool, dir.path, {
      users: 3,
      filesPerDrive: 40,
      foldersPerDrive: { min: 3, max: 6 },
      seed: 3,
      faults: ['missing_chunk_row'],
    });
    ({ server } = await composeInProcess({ pool: db.pool, dataDir: dir.path }));
    auth = { authorization: `Bearer ${await adminToken(db.pool)}` };
  });

  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    dir?.remove();
  });

  async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
    const res = await server.app.fetch(
      new Request(`http://x/api/admin/jobs/${path}`, {
        method,
        headers: body === undefined ? auth : { ...auth, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    return { status: res.status, json: (await res.json()) as T };
  }

  async function settle(job: string, runId: string): Promise<RunJson> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { json } = await api<RunJson>('GET', `${job}/runs/${runId}`);
      if (json.status === 'Completed' || json.status === 'Failed' || json.status === 'Paused') return json;
      if (Date.now() > deadline) throw new Error(`run ${runId} did not settle: ${JSON.stringify(json)}`);
      await sleep(20);
    }
  }

  /** A real Paused run of `job` (started with a throttle, cancelled mid-run), then the row corrupted. */
  async function corruptedPausedRun(job: string, set: string): Promise<string> {
    const started = await api<{ run_id: string }>('POST', `${job}/trigger`, {
      batch_size: 1,
      throttle_ms: 200,
    });
    expect(started.status).toBe(202);
    await sleep(50);
    const cancel = await api<{ status: string }>('POST', `${job}/cancel`);
    expect(cancel.status, JSON.stringify(cancel.json)).toBe(200);
    const paused = await settle(job, started.json.run_id);
    expect(paused.status, JSON.stringify(paused)).toBe('Paused');
    const updated = await db.pool.query(
      `UPDATE jobs.recoverable_runs SET ${set}, status = 'Paused' WHERE id = $1`,
      [started.json.run_id],
    );
    expect(updated.rowCount).toBe(1);
    return started.json.run_id;
  }

  for (const job of CONSISTENCY_JOBS) {
    for (const corruption of CORRUPTIONS) {
      it(`${job} with ${corruption.label}: the resume fails naming it; the engine keeps serving`, async () => {
        const runId = await corruptedPausedRun(job, corruption.set);
        const resumed = await api<{ run_id: string; resumed: boolean }>('POST', `${job}/trigger`);
        expect(resumed.status).toBe(202);
        expect(resumed.json).toMatchObject({ run_id: runId, resumed: true });
        const failed = await settle(job, runId);
        expect(failed.status, JSON.stringify(failed)).toBe('Failed');
        expect(failed.error_message ?? '').toMatch(corruption.names);
        expect(failed.error_message ?? '').toContain(job);

        // Another job still runs to completion on the same engine …
        const other = job === 'drives_consistency' ? 'folders_consistency' : 'drives_consistency';
        const next = await api<{ run_id: string }>('POST', `${other}/trigger`);
        expect(next.status).toBe(202);
        expect((await settle(other, next.json.run_id)).status).toBe('Completed');
        // … and the failed job starts afresh (a Failed run is never resumed).
        const fresh = await api<{ run_id: string; resumed: boolean }>('POST', `${job}/trigger`);
        expect(fresh.json.resumed).toBe(false);
        expect(fresh.json.run_id).not.toBe(runId);
        expect((await settle(job, fresh.json.run_id)).status).toBe('Completed');
      });
    }
  }
});
