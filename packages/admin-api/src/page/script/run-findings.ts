/**
 * The findings tab of the drawer: the findings of the run picked
 * (`GET /api/admin/jobs/{name}/runs/{id}/findings`), counted by kind and
 * severity, filterable by severity, {@link FINDINGS_PAGE} more at a time.
 * Reloaded while the run is active or when it changed status.
 */
import type { FindingsPageJson } from '../../routes/wire-types.ts';
import { api, describe } from './api.ts';
import { byId as $, h } from './dom.ts';
import { renderKeyed } from './drawer-parts.ts';
import { severityBadge as badgeSeverity, fmt, shortId } from './format.ts';
import { ACTIVE } from './job-status.ts';
import { idEnd } from './labels.ts';
import { type Drawer, state } from './page-state.ts';

/** How many findings the tab shows at first, and how many more "Show more" adds. */
export const FINDINGS_PAGE = 100;

export async function refreshFindings(force: boolean): Promise<void> {
  const d = state.drawer;
  if (!d || d.tab !== 'findings') return;
  const run = d.run;
  $('findings-title').textContent = run ? `Findings of run ${shortId(run.run_id)}` : 'Findings';
  if (!d.runId) {
    $('findings').replaceChildren(h('p', { class: 'empty', text: 'No run yet: start one with Run.' }));
    return;
  }
  const active = run ? ACTIVE.has(run.status) : false;
  const status = run ? run.status : null;
  if (!force && !active && d.findings && d.findings.run_id === d.runId && d.findingsStatus === status) return;
  const query = new URLSearchParams({ limit: String(d.limit), offset: '0' });
  if (d.severity) query.set('severity', d.severity);
  try {
    const result = await api<FindingsPageJson>(
      `/${encodeURIComponent(d.name)}/runs/${encodeURIComponent(d.runId)}/findings?${query}`,
    );
    if (state.drawer !== d) return;
    d.findings = result;
    d.findingsStatus = status;
    d.findingsError = '';
  } catch (error) {
    if (state.drawer !== d) return;
    d.findingsError = `Could not load the findings: ${describe(error)}`;
  }
  renderFindings(d);
}

function renderFindings(d: Drawer): void {
  const f = d.findings;
  const key = JSON.stringify([d.findingsError, d.severity, f]);
  d.findingsKey = renderKeyed($('findings'), key, d.findingsKey, () => {
    const out: Array<Node | string> = [];
    if (d.findingsError) out.push(h('p', { class: 'message error', role: 'alert', text: d.findingsError }));
    if (!f) return out;
    const th = (text: string) => h('th', { scope: 'col', text });
    const counts = Array.isArray(f.counts) ? f.counts : [];
    const countBody = h('tbody');
    for (const c of counts) {
      countBody.append(
        h(
          'tr',
          null,
          h('td', { class: 'mono', text: c.kind }),
          h('td', null, badgeSeverity(c.severity)),
          h('td', { text: fmt(c.count) }),
        ),
      );
    }
    out.push(
      h(
        'table',
        { class: 'counts', id: 'findings-counts' },
        h('caption', { text: 'All findings of this run, by kind and severity.' }),
        h('thead', null, h('tr', null, th('Kind'), th('Severity'), th('Count'))),
        countBody.childElementCount
          ? countBody
          : h('tbody', null, h('tr', null, h('td', { colspan: '3', class: 'empty', text: 'none' }))),
      ),
    );
    const list = Array.isArray(f.findings) ? f.findings : [];
    out.push(
      h('p', {
        class: 'findings-total',
        'data-total': String(f.total),
        text: `Showing ${fmt(list.length)} of ${fmt(f.total)}${d.severity ? ` ${d.severity}` : ''} findings.`,
      }),
    );
    if (list.length) {
      const body = h('tbody');
      for (const item of list) {
        body.append(
          h(
            'tr',
            { 'data-severity': item.severity },
            h('td', null, badgeSeverity(item.severity)),
            h('td', { class: 'mono', text: item.kind }),
            h('td', { class: 'resource', title: item.resource_id, text: idEnd(item.resource_id) }),
            h('td', { class: 'detail' }, h('code', null, JSON.stringify(item.detail))),
          ),
        );
      }
      out.push(
        h(
          'table',
          { class: 'findings', id: 'findings-table' },
          h('thead', null, h('tr', null, th('Severity'), th('Kind'), th('Resource'), th('Detail'))),
          body,
        ),
      );
    }
    if (list.length < (f.total || 0)) {
      const more = h('button', { type: 'button', 'data-focus': 'more' }, `Show ${FINDINGS_PAGE} more`);
      more.addEventListener('click', () => {
        d.limit += FINDINGS_PAGE;
        void refreshFindings(true);
      });
      out.push(more);
    }
    return out;
  });
}

/** Wires the severity filter. */
export function startRunFindings(): void {
  $('severity').addEventListener('change', () => {
    if (!state.drawer) return;
    state.drawer.severity = $<HTMLSelectElement>('severity').value;
    state.drawer.limit = FINDINGS_PAGE;
    void refreshFindings(true);
  });
}
