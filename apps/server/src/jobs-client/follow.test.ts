import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from './admin-client.js';
import type { ApiJob, ApiRunDetail, ApiRunListEntry, ApiRunStatus } from './api-types.js';
import { type CliIo, sleep } from './cli-io.js';
import { runCommand, triggerCommand } from './commands.js';
import { followRun } from './follow.js';

/**
 * A scripted admin API on a real port: each route answers from a queue of
 * responses (the last one repeats), so a test plays a run's life through
 * real HTTP polls.
 */
class ScriptedApi {
  readonly requests: string[] = [];
  readonly bodies: string[] = [];
  #routes = new Map<string, Array<{ status: number; body: unknown }>>();
  server: Server = createServer((req, res) => void this.#answer(req, res));

  script(route: string, ...answers: Array<{ status: number; body: unknown }>): void {
    this.#routes.set(route, answers);
  }

  async #answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of req) body += chunk;
    const route = `${req.method} ${req.url}`;
    if (route === 'GET /healthz') {
      // The client's identity check, once per client: answered as the engine, not scripted.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ service: 'oxijobs', status: 'ok', database: { ok: true, latency_ms: 1 } }));
      return;
    }
    this.requests.push(route);
    this.bodies.push(body);
    const queue = this.#routes.get(route);
    const next = queue && (queue.length > 1 ? queue.shift()! : queue[0]);
    if (!next) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'NOT_FOUND', message: `no script for ${route}` } }));
      return;
    }
    if (next.status === 0) {
      res.socket?.destroy(); // a dropped connection
      return;
    }
    res.writeHead(next.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(next.body));
  }
}

/** A run as `GET …/runs/{id}` answers it: started 10 s ago, no pauses. */
function run(status: ApiRunStatus, processed: number, extra: Partial<ApiRunDetail> = {}): ApiRunDetail {
  return {
    run_id: 'r1',
    job_name: 'files_consistency',
    status,
    started_at: new Date(Date.now() - 10_000).toISOString(),
    last_progress_at: new Date().toISOString(),
    completed_at: status === 'Completed' ? new Date().toISOString() : null,
    cursor_hex: null,
    stats: { count: 2, scanned_count: processed, total_estimate: 100 },
    params: {},
    error_message: status === 'Failed' ? 'the database went away' : null,
    pause_reason: status === 'Paused' ? 'cancelled by an admin' : null,
    pauses: status === 'Paused' ? [{ at: new Date().toISOString(), reason: 'cancelled by an admin' }] : [],
    active_ms: 10_000,
    wall_ms: 10_000,
    owner_node: null,
    attempt: 1,
    lease_until: null,
    progress: {
      processed,
      total: 100,
      fraction: processed / 100,
      rate_per_second: 50,
      eta_seconds: (100 - processed) / 50,
    },
    ...extra,
  };
}

/** The same run as the jobs listing shows it (`latest_run`). */
function entry(status: ApiRunStatus, processed: number, extra: Partial<ApiRunDetail> = {}): ApiRunListEntry {
  const { params, pauses, ...rest } = run(status, processed, extra);
  return { ...rest, params_summary: params, pauses: pauses.slice(-1), truncated: false };
}

function captureIo(signal?: AbortSignal): CliIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: {
      write: (t: string) => {
        out += t;
      },
    },
    stderr: {
      write: (t: string) => {
        err += t;
      },
    },
    now: () => Date.now(),
    sleep,
    ...(signal ? { signal } : {}),
    out: () => out,
    err: () => err,
  };
}

const ok = (body: unknown) => ({ status: 200, body });
const RUN = 'GET /api/admin/jobs/files_consistency/runs/r1';
const follow = { intervalMs: 20, tty: false, plainEveryMs: 0 };

describe('following runs over HTTP', () => {
  let api: ScriptedApi;
  let client: AdminClient;

  beforeAll(async () => {
    api = new ScriptedApi();
    await new Promise<void>((resolve) => api.server.listen(0, '127.0.0.1', resolve));
    const port = (api.server.address() as AddressInfo).port;
    client = new AdminClient({ baseUrl: `http://127.0.0.1:${port}`, token: 't', timeoutMs: 2000 });
  });
  afterEach(() => {
    api.requests.length = 0;
    api.bodies.length = 0;
  });
  afterAll(async () => {
    api.server.closeAllConnections();
    await new Promise((resolve) => api.server.close(resolve));
  });

  it('trigger --follow: starts the run, prints plain progress lines, exits 0 on Completed', async () => {
    const listed: ApiJob = {
      name: 'files_consistency',
      kind: 'recoverable',
      interval_ms: null,
      timeout_ms: null,
      next_run_at: null,
      running: false,
      running_since: null,
      last_outcome: null,
      supports_deep: true,
      check: { order: 30, count_meaning: 'files' },
      finding_kinds: [],
      latest_run: null,
      overdue: null,
    };
    api.script('GET /api/admin/jobs', ok([listed])); // --params/--deep: the client checks the job takes them
    api.script('POST /api/admin/jobs/files_consistency/trigger?deep=true', {
      status: 202,
      body: { ok: true, run_id: 'r1', status: 'Running', resumed: false, already_running: false },
    });
    api.script(RUN, ok(run('Running', 10)), ok(run('Running', 60)), ok(run('Completed', 100)));
    const io = captureIo();
    const code = await triggerCommand({ client, io, json: false }, 'files_consistency', {
      deep: true,
      params: { batch_size: 5 },
      follow: true,
      followOptions: follow,
    });
    expect(code).toBe(0);
    expect(api.bodies[1]).toBe('{"batch_size":5}');
    const lines = io.out().trimEnd().split('\n');
    expect(lines[0]).toBe('files_consistency: started run r1');
    expect(lines[1]).toBe('files_consistency  running  10/100 (10.0%)  50/s  ETA 1s');
    expect(lines[2]).toBe('files_consistency  running  60/100 (60.0%)  50/s  ETA <1s');
    expect(lines[3]).toBe('files_consistency  completed  100/100 (100.0%)  50/s  ETA 0s');
    expect(lines[4]).toMatch(
      /^files_consistency: run r1 completed in 10s \(wall 10s\): 100 processed, count 2$/,
    );
    expect(api.requests.filter((r) => r === RUN)).toHaveLength(3);
  });

  it('exits 3 when the run lands Paused and 1 when it Failed; --json prints the last RunSummary only', async () => {
    api.script(RUN, ok(run('CancelRequested', 30)), ok(run('Paused', 35)));
    const paused = captureIo();
    expect(await followRun(client, 'files_consistency', 'r1', paused, { ...follow, json: false })).toBe(3);
    expect(paused.out()).toMatch(
      /cancelling .*\n.*paused .*\nfiles_consistency: run r1 paused after .*resumes it\n$/,
    );

    api.script(RUN, ok(run('Running', 30)), ok(run('Failed', 35)));
    const failed = captureIo();
    expect(
      await runCommand({ client, io: failed, json: true }, 'files_consistency', 'r1', {
        follow: true,
        followOptions: follow,
      }),
    ).toBe(1);
    expect(JSON.parse(failed.out())).toMatchObject({
      status: 'Failed',
      error_message: 'the database went away',
    });
  });

  it('waits out a dropped connection or a 503, and gives up on other errors with the API message', async () => {
    api.script(
      RUN,
      ok(run('Running', 10)),
      { status: 0, body: null },
      { status: 503, body: { error: { code: 'SHUTTING_DOWN', message: 'the server is stopping' } } },
      ok(run('Completed', 100)),
    );
    const io = captureIo();
    expect(await followRun(client, 'files_consistency', 'r1', io, { ...follow, json: false })).toBe(0);
    expect(io.out()).toMatch(/not reachable .*; retrying\n/);
    expect(io.out()).toContain('the server answers again');

    api.script(RUN, { status: 404, body: { error: { code: 'RUN_NOT_FOUND', message: 'no run r1' } } });
    await expect(
      followRun(client, 'files_consistency', 'r1', captureIo(), { ...follow, json: false }),
    ).rejects.toThrow('RUN_NOT_FOUND: no run r1');

    api.script(RUN, { status: 0, body: null });
    await expect(
      followRun(client, 'files_consistency', 'r1', captureIo(), {
        ...follow,
        json: false,
        unreachableForMs: 100,
      }),
    ).rejects.toThrow(/not reachable/);
  });

  it('stops following on Ctrl-C with exit 130, leaving the run alone', async () => {
    api.script(RUN, ok(run('Running', 10)));
    const controller = new AbortController();
    const io = captureIo(controller.signal);
    setTimeout(() => controller.abort(), 100);
    expect(await followRun(client, 'files_consistency', 'r1', io, { ...follow, json: false })).toBe(130);
    expect(io.err()).toBe(
      'oxijobs: stopped following; the run goes on (`oxijobs jobs run files_consistency r1 --follow` follows it again)\n',
    );
    expect(api.requests.every((r) => r.startsWith('GET'))).toBe(true);
  });

  it('draws cli-progress bars on a terminal', async () => {
    api.script(RUN, ok(run('Running', 40)), ok(run('Completed', 100)));
    const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 120 });
    let drawn = '';
    stream.on('data', (chunk: Buffer) => {
      drawn += chunk.toString();
    });
    const io = { ...captureIo(), stdout: stream };
    expect(
      await followRun(client, 'files_consistency', 'r1', io, {
        ...follow,
        intervalMs: 400,
        tty: true,
        json: false,
      }),
    ).toBe(0);
    expect(drawn).toMatch(/files_consistency \|[█░]+\| +40\.0% {2}40\/100 {2}50\/s {2}ETA 1s {2}running/);
    expect(drawn).toMatch(/100\.0% {2}100\/100 .* completed/);
    expect(drawn).toContain('files_consistency: run r1 completed');
  });

  it('consistency_batch --follow: wait=false, shows each check as it runs, exits by the batch outcome', async () => {
    const DRIVES = { order: 10, count_meaning: 'drives' };
    const FILES = { order: 30, count_meaning: 'files' };
    const job = (name: string, extra: Partial<ApiJob>): ApiJob => ({
      name,
      kind: 'recoverable',
      interval_ms: null,
      timeout_ms: null,
      next_run_at: null,
      running: false,
      running_since: null,
      last_outcome: null,
      supports_deep: false,
      check: null,
      finding_kinds: [],
      latest_run: null,
      overdue: null,
      ...extra,
    });
    const old = entry('Completed', 100, { run_id: 'old', job_name: 'drives_consistency' });
    const before = [
      job('consistency_batch', {
        kind: 'periodic',
        last_outcome: { at: '2030-01-01T00:00:00.000Z', outcome: { kind: 'ok', count: 1, extra: {} } },
      }),
      job('files_consistency', { check: FILES }),
      job('drives_consistency', { latest_run: old, check: DRIVES }),
      // Not a check by its declaration, whatever its name says: the batch does not drive it.
      job('legacy_consistency', { kind: 'periodic' }),
    ];
    const during = [
      { ...before[0]!, running: true },
      job('files_consistency', { latest_run: entry('Running', 50), check: FILES }),
      job('drives_consistency', {
        latest_run: entry('Completed', 100, { run_id: 'd2', job_name: 'drives_consistency' }),
        check: DRIVES,
      }),
      before[3]!,
    ];
    const after = [
      {
        ...before[0]!,
        last_outcome: {
          at: '2030-01-02T00:00:00.000Z',
          outcome: { kind: 'ok' as const, count: 3, extra: {} },
        },
      },
      job('files_consistency', { latest_run: entry('Completed', 100), check: FILES }),
      during[2]!,
      before[3]!,
    ];
    api.script(
      'GET /api/admin/jobs',
      ok(before),
      ok([{ ...before[0]!, running: true }, ...before.slice(1)]),
      ok(during),
      ok(after),
    );
    api.script('POST /api/admin/jobs/consistency_batch/trigger?wait=false', {
      status: 202,
      body: { ok: true, accepted: true },
    });
    const io = captureIo();
    expect(
      await triggerCommand({ client, io, json: false }, 'consistency_batch', {
        follow: true,
        followOptions: follow,
      }),
    ).toBe(0);
    const out = io.out();
    expect(out).toMatch(/^consistency_batch: accepted; following its checks\n/);
    expect(out).toContain('drives_consistency  completed  100/100');
    expect(out).toContain('files_consistency  running  50/100 (50.0%)');
    expect(out).toMatch(/ {2}files_consistency: run r1 completed/);
    expect(out).not.toContain('run old');
    expect(out).not.toContain('legacy_consistency');
    expect(out).toMatch(/consistency_batch: ok, count 3\n$/);

    api.script(
      'GET /api/admin/jobs',
      ok(before),
      ok([
        {
          ...after[0]!,
          last_outcome: { at: '2030-01-03T00:00:00.000Z', outcome: { kind: 'err', message: 'x' } },
        },
      ]),
    );
    const json = captureIo();
    expect(
      await triggerCommand({ client, io: json, json: true }, 'consistency_batch', {
        follow: true,
        followOptions: follow,
      }),
    ).toBe(1);
    expect(JSON.parse(json.out())).toMatchObject({
      name: 'consistency_batch',
      last_outcome: { outcome: { kind: 'err' } },
    });
  });
});
