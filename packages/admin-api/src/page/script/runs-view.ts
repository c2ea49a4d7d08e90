/**
 * The runs of a recoverable job in the drawer: its newest runs
 * (`GET /api/admin/jobs/{name}/runs`), one of them picked (the newest unless
 * the operator or the address picked one), and the picked run's details
 * (`GET …/runs/{id}`: progress, cursor, node, time, pauses, stats, params)
 * with Cancel or Resume.
 */
import type { RunListEntryJson, RunSummaryJson } from '../../routes/wire-types.ts';
import { api, describe } from './api.ts';
import { byId as $, h } from './dom.ts';
import { renderKeyed } from './drawer-parts.ts';
import { duration, fmt, json, progressBar, progressText, shortId, timeEl } from './format.ts';
import { cancel, trigger } from './job-actions.ts';
import { ACTIVE, badge } from './job-status.ts';
import { type Drawer, state } from './page-state.ts';

const RUNS_LIMIT = 20;

/**
 * Loads the job's newest runs and the picked run into `d`; the run's details
 * are fetched when forced, not listed, or active. False when the drawer was
 * closed or opened on another job meanwhile (nothing more to render).
 */
export async function loadRuns(d: Drawer, force: boolean): Promise<boolean> {
  const base = `/${encodeURIComponent(d.name)}/runs`;
  try {
    const runs = await api<RunListEntryJson[]>(`${base}?limit=${RUNS_LIMIT}`);
    if (state.drawer !== d) return false;
    d.runs = Array.isArray(runs) ? runs : [];
    d.runsError = '';
  } catch (error) {
    if (state.drawer !== d) return false;
    d.runsError = `Could not load the runs: ${describe(error)}`;
  }
  if (!d.runId && d.runs?.[0]) d.runId = d.runs[0].run_id;
  const listed = d.runs ? d.runs.find((r) => r.run_id === d.runId) : undefined;
  if (d.runId && (force || !listed || ACTIVE.has(listed.status) || (d.run && ACTIVE.has(d.run.status)))) {
    try {
      const run = await api<RunSummaryJson>(`${base}/${encodeURIComponent(d.runId)}`);
      if (state.drawer !== d) return false;
      d.run = run;
    } catch (error) {
      if (state.drawer !== d) return false;
      d.run = listed ?? null;
      if (!listed) d.runsError = `Could not load run ${d.runId}: ${describe(error)}`;
    }
  } else {
    d.run = listed ?? d.run;
  }
  return true;
}

/** Renders the runs table; picking a run calls `onSelect` with its id. */
export function renderRuns(d: Drawer, onSelect: (runId: string) => void): void {
  const runs = d.runs ?? [];
  const key = JSON.stringify([
    d.runsError,
    d.runId,
    runs.map((r) => [r.run_id, r.status, r.progress?.processed]),
  ]);
  d.runsKey = renderKeyed($('runs'), key, d.runsKey, () => {
    const out: Array<Node | string> = [];
    if (d.runsError) out.push(h('p', { class: 'message error', role: 'alert', text: d.runsError }));
    if (runs.length === 0) {
      out.push(h('p', { class: 'empty', text: 'No runs yet. Run starts one.' }));
      return out;
    }
    const body = h('tbody');
    for (const run of runs) {
      const selected = run.run_id === d.runId;
      const pick = h(
        'button',
        {
          type: 'button',
          class: 'link',
          'data-focus': `run:${run.run_id}`,
          'aria-pressed': String(selected),
        },
        shortId(run.run_id),
        h('span', { class: 'visually-hidden', text: ' show details' }),
      );
      pick.addEventListener('click', () => onSelect(run.run_id));
      const p = run.progress;
      body.append(
        h(
          'tr',
          { 'aria-current': selected ? 'true' : null, 'data-run': run.run_id },
          h('td', { class: 'mono' }, pick),
          h('td', null, timeEl(run.started_at)),
          h('td', null, badge(run.status)),
          h(
            'td',
            { class: 'progress-text' },
            p ? fmt(p.processed) + (typeof p.total === 'number' ? ` / ${fmt(p.total)}` : '') : '—',
          ),
        ),
      );
    }
    const th = (text: string) => h('th', { scope: 'col', text });
    out.push(
      h(
        'table',
        { class: 'runs' },
        h('caption', { text: 'Newest first. Pick a run to see its details and findings.' }),
        h('thead', null, h('tr', null, th('Run'), th('Started'), th('Status'), th('Processed'))),
        body,
      ),
    );
    return out;
  });
}

/** Renders the picked run's details (hidden without one). */
export function renderRunDetail(d: Drawer): void {
  const box = $('run-detail');
  const run = d.run;
  if (!run) {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  box.hidden = false;
  const key = JSON.stringify(run);
  d.runDetailKey = renderKeyed(box, key, d.runDetailKey, () => {
    const p = run.progress;
    const actions = h('div', { class: 'actions' });
    if (run.status === 'Running') {
      const button = h('button', { type: 'button', 'data-focus': 'cancel' }, 'Cancel');
      button.addEventListener('click', () => void cancel(run.job_name, button));
      actions.append(button);
    }
    if (run.status === 'Paused') {
      const button = h('button', { type: 'button', class: 'primary', 'data-focus': 'resume' }, 'Resume');
      button.addEventListener('click', () => void trigger(run.job_name, false, button));
      actions.append(button);
    }
    const fields = h('dl', { class: 'fields' });
    const add = (label: string, value: Node | string) =>
      fields.append(h('dt', null, label), h('dd', { class: 'value' }, value));
    add('run_id', h('span', { class: 'mono', text: run.run_id }));
    add('started', timeEl(run.started_at));
    add('last progress', timeEl(run.last_progress_at));
    add('completed', run.completed_at ? timeEl(run.completed_at) : '—');
    add('cursor', h('span', { class: 'mono', text: run.cursor_hex || '— (start)' }));
    add(
      'node',
      h('span', {
        class: 'mono',
        text: `${run.owner_node ?? '— (unknown)'} · attempt ${run.attempt}`,
        title: run.lease_until ? `lease until ${run.lease_until}` : 'no lease: the run is not executing',
      }),
    );
    if (typeof run.active_ms === 'number') {
      add('time', `${duration(run.active_ms / 1000)} active · ${duration((run.wall_ms || 0) / 1000)} wall`);
    }
    if (run.error_message) add('error', h('span', { class: 'message error', text: run.error_message }));
    for (const pause of run.pauses ?? [])
      add('paused', h('span', null, timeEl(pause.at), ` ${pause.reason}`));
    const params = 'params' in run ? run.params : null;
    const summary = 'params_summary' in run ? run.params_summary : null;
    return [
      h(
        'h3',
        { class: 'run-title' },
        'Run ',
        h('span', { class: 'mono', text: shortId(run.run_id) }),
        ' ',
        badge(run.status),
      ),
      h(
        'div',
        { class: 'progress-line' },
        progressBar(p, `Progress of run ${shortId(run.run_id)}`),
        h('span', { class: 'progress-text', 'data-progress': String(p ? p.processed : '') }, progressText(p)),
      ),
      actions.childElementCount ? actions : '',
      fields,
      h('h3', { text: 'Stats' }),
      json(run.stats || {}),
      h('h3', { text: params ? 'Params' : 'Params (summary)' }),
      json(params || summary || {}),
    ];
  });
}
