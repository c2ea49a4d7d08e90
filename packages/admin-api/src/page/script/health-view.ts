/**
 * The health view of the `/admin/jobs` page (`GET /api/admin/findings/health`):
 * per consistency check a card with the last completed run, open findings by
 * severity, new and fixed by that run and an SVG trend of the last runs.
 * Reloaded with each jobs refresh and after a decision on a finding. Data is
 * written with `textContent` only.
 */
import { SEVERITIES } from '@oxicloud/consistency/severity';
import type { FindingsHealthJson } from '../../routes/wire-types.ts';
import { byId as $, h } from './dom.ts';
import { fmt, severityBadge, timeEl } from './format.ts';

const SVG_NS = 'http://www.w3.org/2000/svg';

/** The page's one request function (its auth handling included), on `/api/admin/findings`. */
type Request = <T>(path: string, init?: { method: 'POST'; body: unknown }) => Promise<T>;
let call: Request = () => Promise.reject(new Error('not started'));

/** An SVG trend of the last runs: a bar per run (findings reported), new above in red, fixed in green. */
function trendSvg(trend: FindingsHealthJson['checks'][number]['trend']): SVGSVGElement {
  const width = 240;
  const height = 48;
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(height));
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('role', 'img');
  const max = Math.max(1, ...trend.map((t) => Math.max(t.reported, t.new + t.fixed)));
  const slot = width / Math.max(trend.length, 1);
  const label = trend.map((t) => `${t.reported} reported, ${t.new} new, ${t.fixed} fixed`).join('; ');
  const title = document.createElementNS(SVG_NS, 'title');
  title.textContent = trend.length === 0 ? 'no completed runs yet' : `last ${trend.length} runs: ${label}`;
  svg.append(title);
  svg.setAttribute('aria-label', title.textContent);
  trend.forEach((t, i) => {
    const rect = (cls: string, value: number, x: number, w: number) => {
      const hgt = Math.max(value > 0 ? 1 : 0, Math.round((value / max) * (height - 2)));
      const r = document.createElementNS(SVG_NS, 'rect');
      r.setAttribute('class', cls);
      r.setAttribute('x', String(x));
      r.setAttribute('y', String(height - hgt));
      r.setAttribute('width', String(w));
      r.setAttribute('height', String(hgt));
      svg.append(r);
    };
    const x = i * slot + 1;
    const w = Math.max(2, slot - 2);
    rect('trend-bar', t.reported, x, w * 0.5);
    rect('trend-new', t.new, x + w * 0.5, w * 0.25);
    rect('trend-fixed', t.fixed, x + w * 0.75, w * 0.25);
  });
  return svg;
}

/** What the trend's bars are, in their colours. */
function trendLegend(): HTMLElement {
  const key = (cls: string, text: string) => h('span', null, h('i', { class: cls }), text);
  return h(
    'p',
    { class: 'legend meta' },
    key('trend-bar', 'reported'),
    key('trend-new', 'new'),
    key('trend-fixed', 'fixed'),
  );
}

/** Reloads the health cards (called with each jobs refresh). */
export async function refreshHealth(): Promise<void> {
  try {
    const health = await call<FindingsHealthJson>('/health');
    $('health-error').textContent = '';
    $('health').replaceChildren(
      h(
        'div',
        { class: 'health-grid' },
        health.checks.map((c) => {
          const legend = trendLegend();
          const open = SEVERITIES.map((s) => [s, c.open_by_severity[s] ?? 0] as const).filter(
            ([, n]) => n > 0,
          );
          return h(
            'article',
            { class: 'health-card', 'data-check': c.check },
            h('h3', { text: c.check }),
            h(
              'p',
              { class: 'meta' },
              c.last_completed_run
                ? ['last completed ', timeEl(c.last_completed_run.completed_at)]
                : 'no completed run yet',
            ),
            h(
              'div',
              { class: 'counts' },
              open.length > 0
                ? open.map(([s, n]) => severityBadge(s, `${fmt(n)} ${s}`))
                : c.last_completed_run
                  ? h('span', { class: 'badge ok', text: 'nothing open' })
                  : h('span', { class: 'badge none', text: 'not checked yet' }),
              c.accepted > 0 ? h('span', { class: 'badge', text: `${fmt(c.accepted)} accepted` }) : null,
            ),
            c.last_completed_run &&
              h('p', {
                class: 'meta',
                text:
                  `${fmt(c.new_since_previous)} new, ${fmt(c.fixed_since_previous)} fixed since the previous run` +
                  // Open findings leave without a run when repaired, accepted or marked false positive.
                  (open.length === 0 && c.new_since_previous > 0
                    ? ' (none open now: repaired or decided since)'
                    : ''),
              }),
            c.trend.length > 0 ? [trendSvg(c.trend), legend] : null,
          );
        }),
      ),
    );
  } catch (error) {
    $('health-error').textContent = `Could not load the health view: ${(error as Error).message}`;
  }
}

/** Wires the view; `request` is the page's request function on `/api/admin/findings`. */
export function startHealthView(request: Request): void {
  call = request;
}
