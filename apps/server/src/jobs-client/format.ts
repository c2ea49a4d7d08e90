import { ACTIVE_STATUSES } from '@oxicloud/recoverable/run-status';
import type {
  ApiCancelled,
  ApiFindingsPage,
  ApiJob,
  ApiJobOutcome,
  ApiOutcomeEnvelope,
  ApiRunDetail,
  ApiRunProgress,
  ApiRunStarted,
  ApiRunSummary,
} from './api-types.js';

/** Column alignment of {@link renderTable}. */
export type Align = 'left' | 'right';

/**
 * Renders rows under headers in aligned columns (two spaces apart, the last
 * column unpadded), one line each, ending in a newline.
 */
export function renderTable(
  headers: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  align: readonly Align[] = [],
): string {
  const widths = headers.map((header, i) =>
    Math.max(width(header), ...rows.map((row) => width(row[i] ?? ''))),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => {
        const pad = ' '.repeat(Math.max(0, (widths[i] ?? 0) - width(cell)));
        if (align[i] === 'right') return pad + cell;
        return i === cells.length - 1 ? cell : cell + pad;
      })
      .join('  ')
      .trimEnd();
  return `${[line(headers), ...rows.map(line)].join('\n')}\n`;
}

function width(text: string): number {
  return [...text].length;
}

/** `1,234,567`. */
export function formatCount(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '-';
}

/** `850ms`, `12s`, `3m 04s`, `2h 05m`, `3d 4h`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, '0')}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h ${String(minutes % 60).padStart(2, '0')}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

/** `just now`, `12s ago`, `3m ago`, `in 2h`, `4d ago`; `-` for a missing or bad time. */
export function relativeTime(iso: string | null | undefined, nowMs: number): string {
  if (!iso) return '-';
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return '-';
  const delta = at - nowMs;
  const abs = Math.abs(delta);
  if (abs < 5_000) return 'just now';
  const text =
    abs < 60_000
      ? `${Math.floor(abs / 1000)}s`
      : abs < 3_600_000
        ? `${Math.floor(abs / 60_000)}m`
        : abs < 86_400_000
          ? `${Math.floor(abs / 3_600_000)}h`
          : `${Math.floor(abs / 86_400_000)}d`;
  return delta > 0 ? `in ${text}` : `${text} ago`;
}

/** How often a job fires: `every 1h`, `every 30m`, `on demand`. */
export function formatInterval(intervalMs: number | null): string {
  if (intervalMs === null || intervalMs === undefined) return 'on demand';
  const units: Array<[number, string]> = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'm'],
    [1000, 's'],
  ];
  for (const [size, unit] of units) {
    if (intervalMs >= size && intervalMs % size === 0) return `every ${intervalMs / size}${unit}`;
  }
  return `every ${formatDuration(intervalMs)}`;
}

/** A run status as a word: `running`, `cancelling`, `paused`, `completed`, `failed`. */
export function statusWord(status: string): string {
  switch (status) {
    case 'Running':
      return 'running';
    case 'CancelRequested':
      return 'cancelling';
    case 'Paused':
      return 'paused';
    case 'Completed':
      return 'completed';
    case 'Failed':
      return 'failed';
    default:
      return status.toLowerCase();
  }
}

/** `120,000/1,000,000 (12.0%)`, or `120,000` when the total is unknown. */
export function formatProgress(progress: ApiRunProgress | undefined): string {
  if (!progress) return '-';
  if (progress.total === null || progress.total === undefined) return formatCount(progress.processed);
  return `${formatCount(progress.processed)}/${formatCount(progress.total)} (${formatPercent(progress.fraction)})`;
}

/** `12.0%`; `-` when unknown. */
export function formatPercent(fraction: number | null | undefined): string {
  return typeof fraction === 'number' && Number.isFinite(fraction) ? `${(fraction * 100).toFixed(1)}%` : '-';
}

/** `95,001/s`; `-` when unknown. */
export function formatRate(rate: number | null | undefined): string {
  return typeof rate === 'number' && Number.isFinite(rate) ? `${formatCount(rate)}/s` : '-';
}

/** `9s`, `3m 04s`; `-` when unknown. */
export function formatEta(seconds: number | null | undefined): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '-';
  if (seconds <= 0) return '0s';
  return seconds < 1 ? '<1s' : formatDuration(seconds * 1000);
}

/** `ok, count 7 {"forced":false}` / `err: boom` / `skipped: already running`. */
export function describeOutcome(outcome: ApiJobOutcome): string {
  if (outcome.kind === 'err') return `err: ${outcome.message}`;
  const extra = outcome.extra ?? {};
  if (extra['skipped'] === 'already_running') {
    return typeof extra['node'] === 'string'
      ? `skipped: already running on node ${extra['node']}`
      : 'skipped: a run is already in flight';
  }
  const perCheck = extra['per_check'];
  if (perCheck !== null && typeof perCheck === 'object' && !Array.isArray(perCheck)) {
    return `ok, count ${formatCount(outcome.count)}; ${describePerCheck(perCheck as Record<string, unknown>)}`;
  }
  const extraText = Object.keys(extra).length > 0 ? ` ${compactJson(extra, 200)}` : '';
  return `ok, count ${formatCount(outcome.count)}${extraText}`;
}

/** `drives_consistency ok 6, files_consistency err: boom`: the children of a batch outcome. */
function describePerCheck(perCheck: Readonly<Record<string, unknown>>): string {
  const parts = Object.entries(perCheck).map(([name, entry]) => {
    const outcome = (entry as { outcome?: ApiJobOutcome } | null)?.outcome;
    if (!outcome) return `${name} ?`;
    if (outcome.kind === 'err') return `${name} err: ${truncate(outcome.message, 80)}`;
    const extra = outcome.extra ?? {};
    const state =
      extra['paused'] === true ? 'paused' : extra['skipped'] ? `skipped (${String(extra['skipped'])})` : 'ok';
    return `${name} ${state} ${formatCount(outcome.count)}`;
  });
  return parts.length > 0 ? parts.join(', ') : 'no checks ran';
}

/** JSON on one line, cut at `max` characters. */
export function compactJson(value: unknown, max: number): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function lastRunCell(job: ApiJob, nowMs: number): string {
  const last = job.last_outcome;
  if (!last) return job.kind === 'recoverable' ? '-' : 'never';
  const when = relativeTime(last.at, nowMs);
  if (last.outcome.kind === 'err') {
    const cause = last.cause && last.cause !== 'handler' ? ` (${last.cause})` : '';
    return `err ${when}${cause}: ${truncate(last.outcome.message, 60)}`;
  }
  if (last.outcome.extra?.['skipped'] === 'already_running') return `skipped ${when}`;
  // A run cancelled (or out of time) stopped with its cursor saved: not failed, not done either.
  if (last.outcome.extra?.['paused'] === true)
    return `paused ${when}, count ${formatCount(last.outcome.count)}`;
  return `ok ${when}, count ${formatCount(last.outcome.count)}`;
}

function latestRunCell(run: ApiRunSummary | null | undefined, nowMs: number): string {
  if (!run) return '-';
  const word = statusWord(run.status);
  if (ACTIVE_STATUSES.includes(run.status)) {
    return `${word} ${formatProgress(run.progress)}`;
  }
  return `${word} ${relativeTime(run.completed_at ?? run.last_progress_at, nowMs)}`;
}

/** The `jobs list` table. */
export function formatJobs(jobs: readonly ApiJob[], nowMs: number): string {
  if (jobs.length === 0) return 'no jobs are registered\n';
  const showLatest = jobs.some((job) => job.latest_run !== undefined);
  const headers = ['NAME', 'KIND', 'SCHEDULE', 'STATE', 'NEXT RUN', 'LAST RUN'];
  if (showLatest) headers.push('LATEST RUN');
  const rows = jobs.map((job) => {
    const state = job.running
      ? `running${job.running_since ? ` ${formatDuration(nowMs - Date.parse(job.running_since))}` : ''}`
      : 'idle';
    const overdue = job.overdue
      ? `, overdue${job.overdue.deep ? ' (deep)' : ''} ${relativeTime(job.overdue.overdue_since, nowMs)}`
      : '';
    const row = [
      job.name,
      job.kind ?? '-',
      formatInterval(job.interval_ms),
      `${state}${overdue}`,
      relativeTime(job.next_run_at, nowMs),
      lastRunCell(job, nowMs),
    ];
    if (showLatest) row.push(latestRunCell(job.latest_run, nowMs));
    return row;
  });
  return renderTable(headers, rows);
}

/** `3m 4s active, 12m 10s wall` when the server reports active time, else the wall time. */
function formatTimes(run: ApiRunSummary, nowMs: number): string {
  const wall = formatDuration(runDurationMs(run, nowMs));
  return typeof run.active_ms === 'number' ? `${formatDuration(run.active_ms)} active, ${wall} wall` : wall;
}

function runDurationMs(run: ApiRunSummary, nowMs: number): number {
  if (typeof run.wall_ms === 'number' && run.completed_at != null) return run.wall_ms;
  const start = Date.parse(run.started_at);
  const end =
    run.completed_at != null
      ? Date.parse(run.completed_at)
      : run.status === 'Running' || run.status === 'CancelRequested'
        ? nowMs
        : Date.parse(run.last_progress_at ?? run.started_at);
  return end - start;
}

/** The `jobs runs` table. */
export function formatRuns(runs: readonly ApiRunSummary[], nowMs: number): string {
  if (runs.length === 0) return 'no runs\n';
  const rows = runs.map((run) => [
    run.run_id,
    statusWord(run.status),
    relativeTime(run.started_at, nowMs),
    formatDuration(runDurationMs(run, nowMs)),
    formatProgress(run.progress),
    typeof run.stats?.['count'] === 'number' ? formatCount(run.stats['count']) : '-',
    run.error_message ? truncate(run.error_message, 60) : '',
  ]);
  return renderTable(['RUN ID', 'STATUS', 'STARTED', 'DURATION', 'PROGRESS', 'COUNT', 'ERROR'], rows, [
    'left',
    'left',
    'left',
    'right',
    'right',
    'right',
    'left',
  ]);
}

/** The `jobs run` details (`GET …/runs/{id}`), one `key  value` line each. */
export function formatRun(run: ApiRunDetail, nowMs: number): string {
  const at = (iso: string | null | undefined): string => (iso ? `${iso} (${relativeTime(iso, nowMs)})` : '-');
  const progress = run.progress;
  const lines: Array<[string, string]> = [
    ['run', run.run_id],
    ['job', run.job_name],
    ['status', statusWord(run.status)],
    ['started', at(run.started_at)],
    ['updated', at(run.last_progress_at)],
    ['completed', at(run.completed_at)],
    ['duration', formatTimes(run, nowMs)],
    [
      'progress',
      progress
        ? `${formatProgress(progress)}, ${formatRate(progress.rate_per_second)}, ETA ${formatEta(progress.eta_seconds)}`
        : '-',
    ],
    ['cursor', run.cursor_hex ?? '-'],
    ['node', run.owner_node ?? '-'],
    ['attempt', typeof run.attempt === 'number' ? String(run.attempt) : '-'],
    ['lease', run.lease_until ? at(run.lease_until) : '- (not executing)'],
    ['params', run.params ? compactJson(run.params, 400) : '-'],
    ['stats', run.stats ? compactJson(run.stats, 400) : '-'],
    ['error', run.error_message ?? '-'],
    ['paused', (run.pauses ?? []).map((p) => `${p.at} ${p.reason}`).join('; ') || '-'],
  ];
  const keyWidth = Math.max(...lines.map(([key]) => key.length));
  return `${lines.map(([key, value]) => `${key.padEnd(keyWidth)}  ${value}`).join('\n')}\n`;
}

/** The `jobs findings` output: counts per kind, then the page of findings. */
export function formatFindings(page: ApiFindingsPage, offset: number, nowMs: number): string {
  const out: string[] = [];
  const total = page.total;
  out.push(`run ${page.run_id}: ${formatCount(total)} finding${total === 1 ? '' : 's'}\n`);
  if (page.counts.length > 0) {
    out.push(
      renderTable(
        ['SEVERITY', 'KIND', 'COUNT'],
        page.counts.map((c) => [c.severity, c.kind, formatCount(c.count)]),
        ['left', 'left', 'right'],
      ),
    );
  }
  if (page.findings.length > 0) {
    out.push('\n');
    out.push(
      renderTable(
        ['SEVERITY', 'KIND', 'RESOURCE', 'FOUND', 'DETAIL'],
        page.findings.map((f) => [
          f.severity,
          f.kind,
          f.resource_id,
          relativeTime(f.found_at, nowMs),
          f.detail === undefined || f.detail === null ? '' : compactJson(f.detail, 100),
        ]),
      ),
    );
    const first = offset + 1;
    const last = offset + page.findings.length;
    if (first > 1 || last < total) {
      out.push(`showing ${first}-${last} of ${formatCount(total)}; use --offset and --limit for more\n`);
    }
  } else if (offset > 0 && total > 0) {
    out.push(`no findings at --offset ${offset} (there are ${formatCount(total)})\n`);
  }
  return out.join('');
}

/** One line about a trigger's answer. */
export function formatTriggerAnswer(name: string, body: ApiOutcomeEnvelope | ApiRunStarted): string {
  if ('run_id' in body && typeof body.run_id === 'string') {
    const verb = body.already_running
      ? `run ${body.run_id} is already ${statusWord(body.status)}`
      : body.resumed
        ? `resumed run ${body.run_id}`
        : `started run ${body.run_id}`;
    return `${name}: ${verb}; follow it with \`oxijobs jobs run ${name} ${body.run_id} --follow\`\n`;
  }
  const envelope = body as ApiOutcomeEnvelope;
  if ('outcome' in envelope && envelope.outcome) return `${name}: ${describeOutcome(envelope.outcome)}\n`;
  if ('accepted' in envelope && envelope.accepted)
    return `${name}: accepted; it runs in the background (\`oxijobs jobs list\` shows its outcome)\n`;
  return `${name}: ${compactJson(body, 400)}\n`;
}

/** One line about a cancel's answer. */
export function formatCancelAnswer(name: string, body: ApiCancelled): string {
  if (body.status === 'Paused') {
    return `${name}: run ${body.run_id} is already paused; \`oxijobs jobs trigger ${name}\` resumes it\n`;
  }
  return `${name}: cancel requested for run ${body.run_id}; it pauses at its next batch boundary\n`;
}

/** One plain progress line of a followed run (CI logs). */
export function formatProgressLine(run: ApiRunSummary): string {
  const p = run.progress;
  const parts = [run.job_name, statusWord(run.status), formatProgress(p)];
  if (p) parts.push(formatRate(p.rate_per_second), `ETA ${formatEta(p.eta_seconds)}`);
  if (run.owner_node) parts.push(`node ${run.owner_node} (attempt ${run.attempt})`);
  return `${parts.join('  ')}\n`;
}

/** The closing line of a followed run. */
export function formatRunEnd(run: ApiRunSummary, nowMs: number): string {
  const took =
    typeof run.active_ms === 'number'
      ? `${formatDuration(run.active_ms)} (wall ${formatDuration(runDurationMs(run, nowMs))})`
      : formatDuration(runDurationMs(run, nowMs));
  const processed = run.progress ? `${formatCount(run.progress.processed)} processed` : '';
  const count = typeof run.stats?.['count'] === 'number' ? `, count ${formatCount(run.stats['count'])}` : '';
  switch (run.status) {
    case 'Completed':
      return `${run.job_name}: run ${run.run_id} completed in ${took}: ${processed}${count}\n`;
    case 'Failed':
      return `${run.job_name}: run ${run.run_id} failed after ${took}: ${run.error_message ?? 'no message'}\n`;
    case 'Paused':
      return (
        `${run.job_name}: run ${run.run_id} paused after ${took} (${processed}${count}` +
        `${run.pause_reason ? `; ${run.pause_reason}` : ''}); ` +
        `\`oxijobs jobs trigger ${run.job_name}\` resumes it\n`
      );
    default:
      return `${run.job_name}: run ${run.run_id} is ${statusWord(run.status)}\n`;
  }
}

function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
