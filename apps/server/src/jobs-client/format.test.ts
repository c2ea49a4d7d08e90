import { describe, expect, it } from 'vitest';
import type { ApiFindingsPage, ApiJob, ApiRunDetail, ApiRunListEntry } from './api-types.js';
import {
  describeOutcome,
  formatCancelAnswer,
  formatDuration,
  formatFindings,
  formatInterval,
  formatJobs,
  formatProgressLine,
  formatRun,
  formatRunEnd,
  formatRuns,
  formatTriggerAnswer,
  relativeTime,
  renderTable,
  statusWord,
} from './format.js';

const NOW = Date.parse('2030-01-01T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString();

/** A run as `GET …/runs/{id}` answers it; active and wall time from start to completion (or NOW) unless given. */
function run(overrides: Partial<ApiRunDetail> = {}): ApiRunDetail {
  const merged: Omit<ApiRunDetail, 'active_ms' | 'wall_ms'> & Partial<ApiRunDetail> = {
    run_id: '0190a3c2-0000-7000-8000-000000000001',
    job_name: 'files_consistency',
    status: 'Running',
    started_at: ago(125_000),
    last_progress_at: ago(1_000),
    completed_at: null,
    cursor_hex: '01ab',
    stats: { count: 3, scanned_count: 120_000, total_estimate: 1_000_000 },
    params: { force: false, deep: false },
    error_message: null,
    pause_reason: null,
    pauses: [],
    owner_node: 'web-1:4127:9f03ac',
    attempt: 2,
    lease_until: ago(-20_000),
    progress: {
      processed: 120_000,
      total: 1_000_000,
      fraction: 0.12,
      rate_per_second: 95_000.5,
      eta_seconds: 9.3,
    },
    ...overrides,
  };
  const wall =
    (merged.completed_at === null ? NOW : Date.parse(merged.completed_at)) - Date.parse(merged.started_at);
  return { active_ms: wall, wall_ms: wall, ...merged };
}

/** The same run as a listing shows it (`GET …/runs`, `latest_run`). */
function entry(overrides: Partial<ApiRunDetail> = {}): ApiRunListEntry {
  const { params, pauses, ...rest } = run(overrides);
  return { ...rest, params_summary: params, pauses: pauses.slice(-1), truncated: false };
}

describe('renderTable', () => {
  it('aligns columns two spaces apart, right-aligns where asked, leaves no trailing spaces', () => {
    const text = renderTable(
      ['NAME', 'N', 'NOTE'],
      [
        ['a', '1', 'x'],
        ['longer_name', '1,000', ''],
      ],
      ['left', 'right', 'left'],
    );
    expect(text).toBe(
      ['NAME             N  NOTE', 'a                1  x', 'longer_name  1,000'].join('\n') + '\n',
    );
  });
});

describe('times and words', () => {
  it.each([
    [ago(2_000), 'just now'],
    [ago(42_000), '42s ago'],
    [ago(3 * 60_000 + 5_000), '3m ago'],
    [ago(5 * 3_600_000), '5h ago'],
    [ago(3 * 86_400_000), '3d ago'],
    [new Date(NOW + 23 * 60_000).toISOString(), 'in 23m'],
    [null, '-'],
    ['not a date', '-'],
  ])('relativeTime(%s) = %s', (iso, expected) => {
    expect(relativeTime(iso, NOW)).toBe(expected);
  });

  it.each([
    [850, '850ms'],
    [12_400, '12s'],
    [184_000, '3m 04s'],
    [7_500_000, '2h 05m'],
    [100 * 3_600_000, '4d 4h'],
    [-1, '-'],
  ])('formatDuration(%d) = %s', (ms, expected) => {
    expect(formatDuration(ms)).toBe(expected);
  });

  it('names intervals and statuses', () => {
    expect(formatInterval(null)).toBe('on demand');
    expect(formatInterval(3_600_000)).toBe('every 1h');
    expect(formatInterval(30 * 60_000)).toBe('every 30m');
    expect(formatInterval(86_400_000 * 7)).toBe('every 7d');
    expect(formatInterval(1500)).toBe('every 1s');
    expect(statusWord('CancelRequested')).toBe('cancelling');
    expect(statusWord('Completed')).toBe('completed');
  });

  it('describes outcomes', () => {
    expect(describeOutcome({ kind: 'ok', count: 1234, extra: {} })).toBe('ok, count 1,234');
    expect(describeOutcome({ kind: 'ok', count: 7, extra: { forced: true } })).toBe(
      'ok, count 7 {"forced":true}',
    );
    expect(describeOutcome({ kind: 'err', message: 'boom' })).toBe('err: boom');
    expect(
      describeOutcome({
        kind: 'ok',
        count: 3,
        extra: {
          per_check: {
            drives_consistency: { outcome: { kind: 'ok', count: 6, extra: { completed: true } } },
            files_consistency: { outcome: { kind: 'ok', count: 2, extra: { paused: true } } },
            storage_consistency: { outcome: { kind: 'err', message: 'disk gone' } },
          },
        },
      }),
    ).toBe(
      'ok, count 3; drives_consistency ok 6, files_consistency paused 2, storage_consistency err: disk gone',
    );
    expect(describeOutcome({ kind: 'ok', count: 0, extra: { skipped: 'already_running' } })).toBe(
      'skipped: a run is already in flight',
    );
  });
});

describe('formatJobs', () => {
  const periodic: ApiJob = {
    name: 'trash_cleanup',
    kind: 'periodic',
    interval_ms: 3_600_000,
    timeout_ms: null,
    next_run_at: new Date(NOW + 23 * 60_000).toISOString(),
    running: false,
    running_since: null,
    last_outcome: {
      at: ago(600_000),
      outcome: { kind: 'ok', count: 12, extra: {} },
      elapsed_ms: 5,
      source: 'tick',
    },
    supports_deep: false,
    check: null,
    finding_kinds: [],
    latest_run: null,
    overdue: null,
  };

  it('shows kind, schedule, state, next, last and latest run of each job', () => {
    const failing: ApiJob = {
      ...periodic,
      name: 'dedup_gc',
      next_run_at: null,
      interval_ms: null,
      running: true,
      running_since: ago(65_000),
      last_outcome: {
        at: ago(7_200_000),
        outcome: { kind: 'err', message: 'disk on fire' },
        cause: 'timeout',
      },
    };
    const lines = formatJobs([periodic, failing], NOW).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+KIND\s+SCHEDULE\s+STATE\s+NEXT RUN\s+LAST RUN\s+LATEST RUN$/);
    expect(lines[1]).toMatch(
      /^trash_cleanup\s+periodic\s+every 1h\s+idle\s+in 23m\s+ok 10m ago, count 12\s+-$/,
    );
    expect(lines[2]).toMatch(
      /^dedup_gc\s+periodic\s+on demand\s+running 1m 05s\s+-\s+err 2h ago \(timeout\): disk on fire\s+-$/,
    );
    // aligned: every row's second column starts at the same offset
    const offsets = lines.map((l) => l.search(/ {2}\S/));
    expect(new Set(offsets).size).toBe(1);
  });

  it('says when a job is overdue, and since when', () => {
    const overdue: ApiJob = {
      ...periodic,
      overdue: { deep: false, max_age_ms: 3_600_000, last_success_at: null, overdue_since: ago(7_200_000) },
    };
    const lines = formatJobs([overdue, periodic], NOW).trimEnd().split('\n');
    expect(lines[1]).toMatch(/^trash_cleanup\s+periodic\s+every 1h\s+idle, overdue 2h ago\s+in 23m/);
    expect(lines[2]).not.toMatch(/overdue/);
  });

  it('adds the latest run of recoverable jobs', () => {
    const recoverable: ApiJob = {
      ...periodic,
      name: 'files_consistency',
      kind: 'recoverable',
      interval_ms: null,
      next_run_at: null,
      last_outcome: null,
      latest_run: entry(),
    };
    const done: ApiJob = {
      ...recoverable,
      name: 'drives_consistency',
      latest_run: entry({ status: 'Completed', completed_at: ago(300_000) }),
    };
    const text = formatJobs([periodic, recoverable, done], NOW);
    expect(text).toContain('LATEST RUN');
    expect(text).toMatch(
      /files_consistency\s+recoverable\s+on demand\s+idle\s+-\s+-\s+running 120,000\/1,000,000 \(12\.0%\)/,
    );
    expect(text).toMatch(/drives_consistency .* completed 5m ago/);
    expect(text).toMatch(/trash_cleanup\s+periodic .* -\n/);
  });

  it('shows a run cancelled to Paused as paused in LAST RUN, not ok', () => {
    const cancelled: ApiJob = {
      ...periodic,
      name: 'files_consistency',
      kind: 'recoverable',
      interval_ms: null,
      next_run_at: null,
      last_outcome: {
        at: ago(120_000),
        outcome: { kind: 'ok', count: 40, extra: { paused: true, cursor_hex: '0a0b', run_id: 'r1' } },
        elapsed_ms: 9_000,
      },
      latest_run: entry({ status: 'Paused', completed_at: null, last_progress_at: ago(120_000) }),
    };
    const lines = formatJobs([periodic, cancelled], NOW).trimEnd().split('\n');
    expect(lines[2]).toMatch(
      /^files_consistency\s+recoverable\s+on demand\s+idle\s+-\s+paused 2m ago, count 40\s+paused 120,000\/1,000,000 \(12\.0%\)$/,
    );
    expect(lines[2]).not.toMatch(/\bok\b/);
  });

  it("reads an older server's answers, which lack fields the API has now (the client does not validate)", () => {
    const oldListing = JSON.parse(
      JSON.stringify([
        {
          name: 'trash_cleanup',
          interval_ms: 3_600_000,
          next_run_at: null,
          running: false,
          last_outcome: null,
        },
      ]),
    ) as ApiJob[];
    const lines = formatJobs(oldListing, NOW).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+KIND\s+SCHEDULE\s+STATE\s+NEXT RUN\s+LAST RUN$/);
    expect(lines[1]).toMatch(/^trash_cleanup\s+-\s+every 1h\s+idle\s+-\s+never$/);
    const {
      active_ms: _active,
      wall_ms: _wall,
      ...oldRun
    } = run({ status: 'Completed', completed_at: ago(0) });
    expect(formatRunEnd(oldRun as ApiRunDetail, NOW)).toMatch(/completed in 2m 05s: /);
  });

  it('says so when nothing is registered', () => {
    expect(formatJobs([], NOW)).toBe('no jobs are registered\n');
  });
});

describe('runs and findings', () => {
  it('formats the runs table with status words, durations and progress', () => {
    const text = formatRuns(
      [
        entry(),
        entry({ run_id: 'r2', status: 'Failed', completed_at: ago(60_000), error_message: 'db gone\nretry' }),
      ],
      NOW,
    );
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^RUN ID\s+STATUS\s+STARTED\s+DURATION\s+PROGRESS\s+COUNT\s+ERROR$/);
    expect(lines[1]).toMatch(/running\s+2m ago\s+2m 05s\s+120,000\/1,000,000 \(12\.0%\)\s+3$/);
    expect(lines[2]).toMatch(/^r2\s+failed\s+2m ago\s+1m 05s .* db gone retry$/);
    expect(formatRuns([], NOW)).toBe('no runs\n');
  });

  it('formats one run as key/value lines', () => {
    const text = formatRun(run(), NOW);
    expect(text).toContain('status     running\n');
    expect(text).toContain('progress   120,000/1,000,000 (12.0%), 95,001/s, ETA 9s\n');
    expect(text).toContain('cursor     01ab\n');
    expect(text).toContain('params     {"force":false,"deep":false}\n');
    expect(text).toContain('completed  -\n');
    expect(text).toContain('node       web-1:4127:9f03ac\n');
    expect(text).toContain('attempt    2\n');
    expect(text).toMatch(/lease {6}\S+ \(in 20s\)\n/);
    expect(formatRun(run({ lease_until: null }), NOW)).toContain('lease      - (not executing)\n');
  });

  it('formats findings with counts and a paging hint', () => {
    const page: ApiFindingsPage = {
      run_id: 'r1',
      total: 7,
      counts: [
        { kind: 'missing_blob', severity: 'DataLoss', count: 2 },
        { kind: 'orphan_blob', severity: 'Reclaimable', count: 5 },
      ],
      findings: [
        {
          id: 'f1',
          kind: 'missing_blob',
          severity: 'DataLoss',
          resource_id: 'file-1',
          detail: { blob_hash: 'abc' },
          found_at: ago(30_000),
        },
      ],
    };
    const text = formatFindings(page, 0, NOW);
    expect(text).toMatch(/^run r1: 7 findings\n/);
    expect(text).toMatch(/DataLoss\s+missing_blob\s+2\n/);
    expect(text).toMatch(/Reclaimable\s+orphan_blob\s+5\n/);
    expect(text).toMatch(/DataLoss\s+missing_blob\s+file-1\s+30s ago\s+\{"blob_hash":"abc"\}\n/);
    expect(text).toContain('showing 1-1 of 7; use --offset and --limit for more');
    expect(formatFindings({ run_id: 'r1', total: 0, counts: [], findings: [] }, 0, NOW)).toBe(
      'run r1: 0 findings\n',
    );
  });
});

describe('answers and follow lines', () => {
  it('formats trigger and cancel answers', () => {
    expect(
      formatTriggerAnswer('trash_cleanup', { ok: true, outcome: { kind: 'ok', count: 3, extra: {} } }),
    ).toBe('trash_cleanup: ok, count 3\n');
    const started = {
      ok: true,
      run_id: 'r1',
      status: 'Running',
      resumed: false,
      already_running: false,
    } as const;
    expect(formatTriggerAnswer('x', { ...started, resumed: true })).toContain(
      'x: resumed run r1; follow it with `oxijobs jobs run x r1 --follow`',
    );
    expect(formatTriggerAnswer('x', { ...started, already_running: true })).toMatch(
      /^x: run r1 is already running;/,
    );
    expect(formatTriggerAnswer('x', started)).toMatch(/^x: started run r1;/);
    expect(formatTriggerAnswer('b', { ok: true, accepted: true })).toMatch(
      /^b: accepted; it runs in the background/,
    );
    expect(formatCancelAnswer('x', { run_id: 'r1', status: 'CancelRequested' })).toBe(
      'x: cancel requested for run r1; it pauses at its next batch boundary\n',
    );
    expect(formatCancelAnswer('x', { run_id: 'r1', status: 'Paused' })).toMatch(/already paused/);
  });

  it('formats progress and closing lines', () => {
    expect(formatProgressLine(run())).toBe(
      'files_consistency  running  120,000/1,000,000 (12.0%)  95,001/s  ETA 9s  node web-1:4127:9f03ac (attempt 2)\n',
    );
    // An older server's run has no owner: the line leaves the node out.
    expect(formatProgressLine(run({ owner_node: null }))).toBe(
      'files_consistency  running  120,000/1,000,000 (12.0%)  95,001/s  ETA 9s\n',
    );
    expect(
      formatRunEnd(
        run({
          status: 'Completed',
          completed_at: ago(0),
          progress: { ...run().progress, processed: 1_000_000 },
        }),
        NOW,
      ),
    ).toBe(
      'files_consistency: run 0190a3c2-0000-7000-8000-000000000001 completed in 2m 05s (wall 2m 05s): 1,000,000 processed, count 3\n',
    );
    expect(formatRunEnd(run({ status: 'Failed', error_message: 'boom' }), NOW)).toMatch(
      /failed after .*: boom\n$/,
    );
    expect(formatRunEnd(run({ status: 'Paused' }), NOW)).toMatch(
      /paused after .*`oxijobs jobs trigger files_consistency` resumes it\n$/,
    );
  });

  it('reports active time apart from wall time, and why a run paused', () => {
    const finished = run({
      status: 'Completed',
      completed_at: ago(0),
      active_ms: 34_000,
      wall_ms: 214_000,
      pauses: [{ at: ago(100_000), reason: 'server restart mid-run' }],
      error_message: null,
    });
    expect(formatRunEnd(finished, NOW)).toMatch(/completed in 34s \(wall 3m 34s\)/);
    const details = formatRun(finished, NOW);
    expect(details).toMatch(/duration +34s active, 3m 34s wall/);
    expect(details).toMatch(/paused +\S+ server restart mid-run/);
    expect(details).toMatch(/error +-/);
    expect(
      formatRunEnd(run({ status: 'Paused', pause_reason: 'database unreachable', active_ms: 1_000 }), NOW),
    ).toMatch(/paused after 1s .*; database unreachable\); `oxijobs jobs trigger/);
  });
});
