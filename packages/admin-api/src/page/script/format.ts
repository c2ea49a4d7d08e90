import { SEVERITIES, severityRank } from '@oxicloud/consistency/severity';
import type { JobSummaryJson, RunProgressJson } from '../../routes/wire-types.ts';
import { h } from './dom.ts';

const numberFormat = new Intl.NumberFormat('en');

/** A number in the page's format; anything else as a dash. */
export function fmt(n: unknown): string {
  return typeof n === 'number' && Number.isFinite(n) ? numberFormat.format(n) : '—';
}

/** The first 8 characters of a run id. */
export function shortId(id: unknown): string {
  return typeof id === 'string' ? id.slice(0, 8) : '—';
}

/** A severity badge, coloured by its rank in `SEVERITIES` (`sev-0` = worst, red). */
export function severityBadge(severity: string, text = severity): HTMLElement {
  const rank = severityRank(severity);
  return h('span', {
    class: `badge ${rank < SEVERITIES.length ? `sev-${rank}` : 'none'}`,
    'data-severity': severity,
    text,
  });
}

/** "every 6 h", "on demand", … */
export function cadence(job: Pick<JobSummaryJson, 'interval_ms'>): string {
  const ms = job.interval_ms;
  if (ms === null || ms === undefined) return 'on demand';
  if (ms % 3600000 === 0) return `every ${ms / 3600000} h`;
  if (ms % 60000 === 0) return `every ${ms / 60000} min`;
  if (ms % 1000 === 0) return `every ${ms / 1000} s`;
  return `every ${ms} ms`;
}

/** "just now", "3 min ago", … for an ISO time; "never" without one. */
export function relative(iso: string | null | undefined): string {
  if (!iso) return 'never';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '—';
  const s = Math.max(0, Math.round((Date.now() - t) / 1000));
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 172800) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

/** "42 s", "3 min 5 s", "2 h 10 min". */
export function duration(seconds: unknown): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** A `<time>` with the relative time as text and the local time as title. */
export function timeEl(iso: string | null | undefined): HTMLElement {
  if (!iso) return h('span', { text: 'never' });
  const date = new Date(iso);
  return h(
    'time',
    { datetime: iso, title: Number.isNaN(date.getTime()) ? iso : date.toLocaleString() },
    relative(iso),
  );
}

/** A value as indented JSON in a `<pre>`. */
export function json(value: unknown): HTMLElement {
  return h('pre', { class: 'json' }, JSON.stringify(value, null, 2));
}

/** "1,200 / 5,000 processed · 24% · 300/s · ETA 13 s". */
export function progressText(p: RunProgressJson | null | undefined): string {
  if (!p) return '';
  const hasTotal = typeof p.total === 'number';
  // The total is the job's estimate: a scan may pass it (rows added meanwhile, extra phases).
  const parts = [
    hasTotal && p.total !== null && p.processed > p.total
      ? `${fmt(p.processed)} processed (estimated ${fmt(p.total)})`
      : `${fmt(p.processed)}${hasTotal ? ` / ${fmt(p.total)}` : ''} processed`,
  ];
  if (typeof p.fraction === 'number') parts.push(`${Math.floor(p.fraction * 100)}%`);
  if (typeof p.rate_per_second === 'number') parts.push(`${fmt(Math.round(p.rate_per_second))}/s`);
  if (typeof p.eta_seconds === 'number') parts.push(`ETA ${duration(p.eta_seconds)}`);
  return parts.join(' · ');
}

/** A `<progress>` of the run (indeterminate without a total or fraction). */
export function progressBar(p: RunProgressJson | null | undefined, label: string): HTMLProgressElement {
  const bar = h('progress', { 'aria-label': label });
  if (p && typeof p.total === 'number' && p.total > 0) {
    bar.max = p.total;
    bar.value = Math.min(p.processed || 0, p.total);
  } else if (p && typeof p.fraction === 'number') {
    bar.max = 1;
    bar.value = p.fraction;
  }
  return bar;
}
