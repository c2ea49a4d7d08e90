import { type AlertResult, type QueueStalledEvent, renderQueueStalled } from '@oxicloud/alerts';
import { CapturingLogger } from '@oxicloud/test-support';
import { describe, expect, it } from 'vitest';
import {
  QUEUE_CHECK_INTERVAL_ENV,
  QUEUE_STALL_ENV,
  queueMonitorConfigFromEnv,
} from '../config/queue-config.js';
import { ServerError } from '../server-error.js';
import { QueueMonitor } from './queue-monitor.js';
import { type QueueBacklog, QueueStallTracker } from './queue-stall.js';

const tree = (rows: number, oldestId: number | null): QueueBacklog => ({
  queue: 'tree_etag_dirty',
  table: 'storage.tree_etag_dirty',
  drainer: "OxiCloud's TreeEtagFlushService",
  rows,
  exact: true,
  oldestId,
});
const search = (rows: number, oldestId: number | null): QueueBacklog => ({
  ...tree(rows, oldestId),
  queue: 'search_index_dirty',
  table: 'storage.search_index_dirty',
  drainer: "OxiCloud's ContentIndexWorker",
});
const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds));

describe('QueueStallTracker: the lowest id as the stall signal of a table with no timestamp', () => {
  it('counts from the first reading that saw the oldest row, resets when it moves or the queue empties', () => {
    const t = new QueueStallTracker(10_000);
    expect(t.observe([tree(3, 7)], at(0))[0]).toMatchObject({
      headSince: at(0),
      headAgeMs: 0,
      stalled: false,
    });
    expect(t.observe([tree(5, 7)], at(9))[0]).toMatchObject({ headAgeMs: 9_000, stalled: false });
    expect(t.observe([tree(5, 7)], at(10))[0]).toMatchObject({ headSince: at(0), stalled: true });
    // The drainer took rows: a new oldest row, a new clock.
    expect(t.observe([tree(2, 9)], at(11))[0]).toMatchObject({
      headSince: at(11),
      headAgeMs: 0,
      stalled: false,
    });
    expect(t.observe([tree(0, null)], at(30))[0]).toMatchObject({
      headSince: null,
      headAgeMs: 0,
      stalled: false,
    });
    // The same id again after an empty queue starts a clock of its own.
    expect(t.observe([tree(1, 9)], at(31))[0]).toMatchObject({ headSince: at(31), stalled: false });
  });

  it('keeps each queue apart, never stalls without a threshold, and an older reading changes nothing', () => {
    const t = new QueueStallTracker(10_000);
    t.observe([tree(1, 1), search(1, 5)], at(0));
    const [a, b] = t.observe([tree(1, 1), search(1, 6)], at(20));
    expect(a).toMatchObject({ queue: 'tree_etag_dirty', stalled: true });
    expect(b).toMatchObject({ queue: 'search_index_dirty', headSince: at(20), stalled: false });
    // A reading taken before the last one (two reads overlapped) is judged, not remembered.
    expect(t.observe([tree(1, 2)], at(10))[0]).toMatchObject({ headSince: at(10), stalled: false });
    expect(t.observe([tree(1, 1)], at(21))[0]).toMatchObject({ headSince: at(0), stalled: true });

    const off = new QueueStallTracker(null);
    off.observe([tree(1, 1)], at(0));
    expect(off.observe([tree(1, 1)], at(3_600))[0]).toMatchObject({ headAgeMs: 3_600_000, stalled: false });
  });
});

/** A monitor on a scripted reader, a clock the test moves and an alerts port that records. */
function harness(results: AlertResult[] = []) {
  let now = at(0);
  let backlog: readonly QueueBacklog[] = [tree(0, null), search(0, null)];
  let failure: Error | null = null;
  const mails: QueueStalledEvent[] = [];
  const logger = new CapturingLogger();
  const monitor = new QueueMonitor({
    reader: {
      read: async () => {
        if (failure !== null) throw failure;
        return backlog;
      },
    },
    alerts: {
      queueStalled: async (event) => {
        mails.push(event);
        return results.shift() ?? 'sent';
      },
    },
    logger,
    stallMs: 60_000,
    checkIntervalMs: 0,
    now: () => now,
  });
  return {
    monitor,
    mails,
    logger,
    /** Sets the clock and the queues, then runs one check. */
    async checkAt(seconds: number, queues: readonly QueueBacklog[] = backlog) {
      now = at(seconds);
      backlog = queues;
      await monitor.check();
    },
    fail(error: Error | null) {
      failure = error;
    },
  };
}

describe('QueueMonitor', () => {
  it('mails a stall once however long it lasts, logs when it drains, and mails the next stall', async () => {
    const h = harness();
    await h.checkAt(0, [tree(4, 100), search(0, null)]);
    await h.checkAt(59);
    expect(h.mails).toHaveLength(0);
    await h.checkAt(60);
    await h.checkAt(120, [tree(9, 100), search(0, null)]);
    await h.checkAt(600);
    expect(h.mails).toEqual([
      {
        table: 'storage.tree_etag_dirty',
        drainer: "OxiCloud's TreeEtagFlushService",
        rows: 4,
        exact: true,
        oldestId: 100,
        headSince: at(0),
        stallMs: 60_000,
      },
    ]);
    expect(h.logger.events('queue.stalled')).toHaveLength(1);
    expect(h.logger.events('queue.stalled')[0]?.fields).toMatchObject({
      queue: 'tree_etag_dirty',
      oldest_id: 100,
      rows: 4,
    });

    // The drainer is back: the oldest row moves, the stall ends.
    await h.checkAt(601, [tree(2, 150), search(0, null)]);
    expect(h.logger.events('queue.draining')).toHaveLength(1);
    expect(h.logger.events('queue.draining')[0]?.fields).toMatchObject({
      queue: 'tree_etag_dirty',
      stalled_oldest_id: 100,
      oldest_id: 150,
    });
    // It stops again: a new stall, a new mail.
    await h.checkAt(661);
    expect(h.mails.map((m) => m.oldestId)).toEqual([100, 150]);
    // Emptied: draining, and nothing more.
    await h.checkAt(700, [tree(0, null), search(0, null)]);
    await h.checkAt(900);
    expect(h.logger.events('queue.draining')).toHaveLength(2);
    expect(h.mails).toHaveLength(2);
  });

  it('tries again at the next check when the mail was not sent; a read failure is logged and the check resolves', async () => {
    const h = harness(['failed', 'no_recipients', 'sent']);
    await h.checkAt(0, [tree(0, null), search(3, 40)]);
    for (const s of [60, 61, 62, 63]) await h.checkAt(s);
    expect(h.mails.map((m) => m.table)).toEqual([
      'storage.search_index_dirty',
      'storage.search_index_dirty',
      'storage.search_index_dirty',
    ]);
    h.fail(new Error('relation "storage.search_index_dirty" does not exist'));
    await expect(h.checkAt(64)).resolves.toBeUndefined();
    expect(h.logger.events('queue.check_failed')[0]?.fields['error']).toMatch(/does not exist/);
    // The failure forgot nothing: still the same stall, not mailed again.
    h.fail(null);
    await h.checkAt(65);
    expect(h.mails).toHaveLength(3);
  });

  it("renders the monitor's event as a mail that names the queue, its backlog, its oldest row and its drainer", async () => {
    const h = harness();
    await h.checkAt(0, [{ ...tree(12_345, 7), exact: false, drainer: 'flusher <b>' }, search(0, null)]);
    await h.checkAt(3_600);
    const mail = renderQueueStalled(h.mails[0] as QueueStalledEvent);
    expect(mail.subject).toBe('[OxiCloud] Queue storage.tree_etag_dirty is not draining');
    expect(mail.text).toContain('Backlog: about 12345 rows');
    expect(mail.text).toContain(`Oldest row: id 7, at the head of the queue since ${at(0).toISOString()}`);
    expect(mail.text).toContain('Threshold: the oldest row may stay at the head for 60 s');
    expect(mail.text).toContain('Drained by: flusher <b>');
    expect(mail.html).toContain('flusher &lt;b&gt;');
    expect(mail.html).not.toContain('<b>');
  });
});

describe('queueMonitorConfigFromEnv', () => {
  it('alerts after 1 h beside OxiCloud, not at all on a database of its own unless set; checks every 60 s', () => {
    expect(queueMonitorConfigFromEnv({}, { besideOxiCloud: true })).toMatchObject({
      stallMs: 3_600_000,
      checkIntervalMs: 60_000,
      summary: expect.stringMatching(/queue_stalled mail when a queue's oldest row stays 3600 s/),
    });
    expect(queueMonitorConfigFromEnv({}, { besideOxiCloud: false })).toMatchObject({
      stallMs: null,
      checkIntervalMs: 60_000,
      summary: expect.stringMatching(/no OxiCloud drains them \(OXIJOBS_QUEUE_STALL_SECONDS sets one\)/),
    });
    const env = { [QUEUE_STALL_ENV]: '120', [QUEUE_CHECK_INTERVAL_ENV]: ' 5 ' };
    expect(queueMonitorConfigFromEnv(env, { besideOxiCloud: false })).toMatchObject({
      stallMs: 120_000,
      checkIntervalMs: 5_000,
    });
    expect(queueMonitorConfigFromEnv({ [QUEUE_STALL_ENV]: '0' }, { besideOxiCloud: true })).toMatchObject({
      stallMs: null,
      summary: expect.stringMatching(/no stall alert \(OXIJOBS_QUEUE_STALL_SECONDS=0\)/),
    });
  });

  it('refuses a bad value naming each variable, the value and what is allowed', () => {
    let error: unknown;
    try {
      queueMonitorConfigFromEnv(
        { [QUEUE_STALL_ENV]: '1h', [QUEUE_CHECK_INTERVAL_ENV]: '86401' },
        { besideOxiCloud: true },
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).code).toBe('BAD_CONFIG');
    expect((error as ServerError).message).toBe(
      'invalid configuration:\n' +
        '  - OXIJOBS_QUEUE_STALL_SECONDS="1h" is not allowed: expected a whole number of seconds from 0 to 604800 (0 = off); unset it for the default\n' +
        '  - OXIJOBS_QUEUE_CHECK_INTERVAL_SECONDS="86401" is not allowed: expected a whole number of seconds from 0 to 86400 (0 = off); unset it for the default',
    );
  });
});
