import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  createOxiCloudDatabase,
  readOnlyOxiCloudRole,
  type TestDatabase,
  type TestRole,
} from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLines } from './cli-process.js';
import { type CliProcess, freePort, killHard, scratchDir, serverEnv, startServer } from './fault-support.js';
import { parseSamples, type Sample, sampleValue } from './prometheus-text.js';
import { type SmtpListener, smtpEnv, startSmtpListener } from './smtp-listener.js';
import { waitUntil } from './wait-until.js';

const PROMTOOL = '/usr/bin/promtool';
const STALLED = '[OxiCloud] Queue storage.tree_etag_dirty is not draining';

/**
 * Issue 32 (fact sheet §12 item 26): OxiCloud's queues as metrics with an
 * overdue-style alert. The server runs beside OxiCloud (sidecar mode) as the
 * README's read-only role; `storage.tree_etag_dirty` holds rows no drainer
 * takes. With a 1 s threshold and a 1 s check, /metrics shows both queues,
 * a real SMTP listener receives one `queue_stalled` mail however long the
 * queue stays stuck, and once the rows are drained the stall ends.
 */
describe("OxiCloud's queues on /metrics and the queue_stalled mail, beside OxiCloud", () => {
  let db: TestDatabase;
  let role: TestRole;
  let smtp: SmtpListener;
  let dir: ReturnType<typeof scratchDir>;
  let server: CliProcess;
  let metricsUrl: string;
  let stuck: number[];

  const scrape = async (): Promise<{ text: string; samples: Sample[] }> => {
    const res = await fetch(metricsUrl);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    return { text, samples: parseSamples(text) };
  };
  const queueValue = (samples: Sample[], name: string, queue: string) =>
    sampleValue(samples, `oxicloud_queue_${name}`, { queue });
  const events = (event: string) => jsonLines(server.stdout()).filter((l) => l['event'] === event);
  const queueMails = () => smtp.subjects.filter((s) => s.startsWith('[OxiCloud] Queue'));

  beforeAll(async () => {
    db = await createOxiCloudDatabase({ max: 2 });
    await db.pool.query(
      `INSERT INTO auth.users (username, email, role) VALUES ('ops', 'ops@example.org', 'admin')`,
    );
    role = await readOnlyOxiCloudRole(db, 'oxijobs');
    // Three forced bumps (fact sheet §4) that no flusher takes: OxiCloud is not running.
    const { rows } = await db.pool.query<{ id: string }>(
      `INSERT INTO storage.tree_etag_dirty (lpath) SELECT 'r'::ltree FROM generate_series(1, 3) RETURNING id`,
    );
    stuck = rows.map((r) => Number(r.id));
    smtp = await startSmtpListener();
    dir = scratchDir('queues');
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    server = await startServer(
      serverEnv({
        databaseUrl: role.url,
        dataDir: dir.path,
        httpPort: await freePort(),
        extra: {
          OXICLOUD_METRICS_ADDR: `127.0.0.1:${metricsPort}`,
          OXIJOBS_QUEUE_STALL_SECONDS: '1',
          OXIJOBS_QUEUE_CHECK_INTERVAL_SECONDS: '1',
          ...smtpEnv(smtp),
        },
      }),
    );
  }, 120_000);

  afterAll(async () => {
    if (server) await killHard(server);
    await smtp?.close();
    await role?.drop();
    await db?.drop();
    dir?.remove();
  });

  it('shows both queues, mails one stall of the stuck queue, and ends it when the queue drains', async () => {
    expect(events('database.sidecar')).toHaveLength(1);
    expect(String(events('queues.watching')[0]?.['msg'])).toMatch(
      /queue_stalled mail when a queue's oldest row stays 1 s .*checked every 1 s/,
    );
    await waitUntil('the queue_stalled mail', async () => (queueMails().length > 0 ? true : undefined));

    const first = await scrape();
    expect(existsSync(PROMTOOL), `${PROMTOOL} is missing: run scripts/setup-system.sh`).toBe(true);
    const check = spawnSync(PROMTOOL, ['check', 'metrics'], { input: first.text, encoding: 'utf8' });
    expect(check.status, `${check.stdout}${check.stderr}`).toBe(0);
    expect(queueValue(first.samples, 'backlog_rows', 'tree_etag_dirty')).toBe(3);
    expect(queueValue(first.samples, 'stalled', 'tree_etag_dirty')).toBe(1);
    expect(queueValue(first.samples, 'oldest_row_age_seconds', 'tree_etag_dirty')).toBeGreaterThanOrEqual(1);
    expect(queueValue(first.samples, 'backlog_rows', 'search_index_dirty')).toBe(0);
    expect(queueValue(first.samples, 'stalled', 'search_index_dirty')).toBe(0);
    expect(queueValue(first.samples, 'oldest_row_age_seconds', 'search_index_dirty')).toBe(0);

    // Still stuck two checks past the threshold: still one mail, one stall line.
    await waitUntil('two more checks of the stuck queue', async () => {
      const { samples } = await scrape();
      return (queueValue(samples, 'oldest_row_age_seconds', 'tree_etag_dirty') ?? 0) >= 3 ? true : undefined;
    });
    expect(queueMails()).toEqual([STALLED]);
    expect(events('queue.stalled')).toEqual([
      expect.objectContaining({ queue: 'tree_etag_dirty', rows: 3, oldest_id: stuck[0], stall_ms: 1000 }),
    ]);

    // OxiCloud's flusher takes the rows: the stall ends, and nothing more is mailed.
    await db.pool.query('DELETE FROM storage.tree_etag_dirty');
    await waitUntil('the queue.draining line', async () =>
      events('queue.draining').length > 0 ? true : undefined,
    );
    expect(events('queue.draining')[0]).toMatchObject({
      queue: 'tree_etag_dirty',
      stalled_oldest_id: stuck[0],
      oldest_id: null,
      rows: 0,
    });
    const drained = await scrape();
    expect(queueValue(drained.samples, 'backlog_rows', 'tree_etag_dirty')).toBe(0);
    expect(queueValue(drained.samples, 'stalled', 'tree_etag_dirty')).toBe(0);
    expect(queueValue(drained.samples, 'oldest_row_age_seconds', 'tree_etag_dirty')).toBe(0);
    expect(queueMails()).toEqual([STALLED]);
    expect(server.child.exitCode).toBeNull();
  });
});
