/**
 * The drawer of the `/admin/jobs` page: one job in a modal dialog, opened
 * from its row or from the address. Its head says the job's kind, cadence,
 * next run and timeout, with Run now, Run deep and the status; the overview
 * tab has the last outcome with what its fields mean, a periodic job's runs
 * from every node and a recoverable job's runs (`runs-view.ts`); the
 * findings tab has the findings of the run picked (`run-findings.ts`). It
 * follows the page's poll.
 */
import type { JobSummaryJson } from '../../routes/wire-types.ts';
import { syncUrl } from './address.ts';
import { api } from './api.ts';
import { refreshPeriodicRuns } from './cluster.ts';
import { byId as $, h } from './dom.ts';
import { dialog } from './drawer-parts.ts';
import { fieldMeanings } from './field-meanings.ts';
import { cadence, duration, json, timeEl } from './format.ts';
import { trigger } from './job-actions.ts';
import { badge, isRecoverable, jobStatus } from './job-status.ts';
import { outcomeStatus } from './labels.ts';
import { state, type Tab } from './page-state.ts';
import { FINDINGS_PAGE, refreshFindings } from './run-findings.ts';
import { loadRuns, renderRunDetail, renderRuns } from './runs-view.ts';

const TABS: readonly Tab[] = ['overview', 'findings'];

export function openDrawer(
  name: string,
  opener: HTMLElement | null,
  options?: { runId: string | null; tab: Tab },
): void {
  const job = state.jobs.find((j) => j.name === name);
  if (!job) return;
  state.drawer = {
    name,
    opener,
    tab: options?.tab ?? 'overview',
    runId: options?.runId ?? null,
    explicitRun: Boolean(options?.runId),
    runs: null,
    run: null,
    runsKey: '',
    runDetailKey: '',
    findings: null,
    findingsKey: '',
    findingsStatus: null,
    severity: '',
    limit: FINDINGS_PAGE,
    findingsError: '',
    runsError: '',
  };
  $<HTMLSelectElement>('severity').value = '';
  $('drawer-title').textContent = name;
  $('outcome').replaceChildren();
  $('runs').replaceChildren();
  $('run-detail').replaceChildren();
  $('run-detail').hidden = true;
  $('findings').replaceChildren();
  renderDrawerHead();
  selectTab(state.drawer.tab, false);
  if (!dialog.open) dialog.showModal();
  $('drawer-title').focus();
  syncUrl();
  void refreshDrawer(true);
}

export function closeDrawer(restoreFocus: boolean): void {
  const d = state.drawer;
  state.drawer = null;
  if (dialog.open) dialog.close();
  if (d) {
    syncUrl();
    if (restoreFocus && d.opener?.isConnected) d.opener.focus();
  }
}

function currentJob(): JobSummaryJson | undefined {
  const d = state.drawer;
  return d ? state.jobs.find((j) => j.name === d.name) : undefined;
}

function renderDrawerHead(): void {
  const job = currentJob();
  if (!job) return;
  const parts = [isRecoverable(job) ? 'recoverable' : 'periodic', cadence(job)];
  if (job.next_run_at) parts.push(`next ${new Date(job.next_run_at).toLocaleString()}`);
  if (job.timeout_ms) parts.push(`timeout ${duration(job.timeout_ms / 1000)}`);
  $('drawer-meta').textContent = parts.join(' · ');
  const actions = $('drawer-actions');
  if (!actions.firstChild || actions.getAttribute('data-job') !== job.name) {
    actions.setAttribute('data-job', job.name);
    const run = h('button', { type: 'button', class: 'primary' }, 'Run now');
    run.addEventListener('click', () => void trigger(job.name, false, run));
    const deep = h('button', { type: 'button', hidden: job.supports_deep !== true }, 'Run deep');
    deep.addEventListener('click', () => void trigger(job.name, true, deep));
    actions.replaceChildren(run, deep, h('span', null, ' '), badge(jobStatus(job)));
  } else {
    actions.lastChild?.replaceWith(badge(jobStatus(job)));
  }
  $('tab-findings').hidden = !isRecoverable(job);
  $('runs-section').hidden = !isRecoverable(job);
}

function selectTab(wanted: Tab, focus: boolean): void {
  const d = state.drawer;
  if (!d) return;
  const tab = wanted === 'findings' && !isRecoverable(currentJob()) ? 'overview' : wanted;
  d.tab = tab;
  for (const name of TABS) {
    const selected = name === tab;
    const button = $(`tab-${name}`);
    button.setAttribute('aria-selected', String(selected));
    button.tabIndex = selected ? 0 : -1;
    $(`panel-${name}`).hidden = !selected;
    if (selected && focus) button.focus();
  }
  syncUrl();
}

function renderOutcome(job: JobSummaryJson): void {
  const last = job.last_outcome;
  if (!last) {
    const text = isRecoverable(job)
      ? 'No run of this job has ended yet; the runs below show every run of it.'
      : 'No run has finished since the server started.';
    $('outcome').replaceChildren(h('p', { class: 'empty', text }));
    return;
  }
  const fields = fieldMeanings(job, state.jobs);
  const outcome = last.outcome;
  const keys = ['kind', 'count', 'message']
    .filter((k) => k in outcome)
    .concat(Object.keys(outcome.kind === 'ok' ? outcome.extra : {}));
  const explained = h('dl', { class: 'fields', 'aria-label': 'What the fields mean' });
  for (const key of keys) {
    const meaning = fields[key];
    if (!meaning) continue;
    explained.append(h('dt', null, key), h('dd', null, meaning));
  }
  $('outcome').replaceChildren(
    h(
      'p',
      null,
      badge(outcomeStatus(outcome)),
      ' ',
      timeEl(last.at),
      last.elapsed_ms !== undefined ? ` · took ${duration(last.elapsed_ms / 1000)}` : '',
      last.source ? ` · ${last.source}` : '',
    ),
    json(last),
    explained.childElementCount ? explained : '',
  );
}

/** Reloads the open drawer's parts (`force`: the run's details and findings even when they look settled). */
export async function refreshDrawer(force: boolean): Promise<void> {
  const d = state.drawer;
  if (!d) return;
  const job = currentJob();
  if (!job) return;
  renderDrawerHead();
  renderOutcome(job);
  if (!isRecoverable(job)) {
    await refreshPeriodicRuns(api, d.name);
    return;
  }
  await refreshPeriodicRuns(api, null);
  if (!(await loadRuns(d, force))) return;
  renderRuns(d, selectRun);
  renderRunDetail(d);
  if (d.tab === 'findings') await refreshFindings(force);
}

function selectRun(runId: string): void {
  const d = state.drawer;
  if (!d) return;
  d.runId = runId;
  d.explicitRun = true;
  d.run = d.runs ? (d.runs.find((r) => r.run_id === runId) ?? null) : null;
  d.findings = null;
  d.findingsKey = '';
  d.limit = FINDINGS_PAGE;
  syncUrl();
  renderRuns(d, selectRun);
  renderRunDetail(d);
  void refreshDrawer(true);
}

/** Wires the drawer's close controls (button, Escape, a click beside it) and its tabs. */
export function startDrawer(): void {
  $('drawer-close').addEventListener('click', () => closeDrawer(true));
  dialog.addEventListener('cancel', (event) => {
    event.preventDefault();
    closeDrawer(true);
  });
  dialog.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && !(event.target instanceof HTMLSelectElement)) {
      event.preventDefault();
      closeDrawer(true);
    }
  });
  dialog.addEventListener('click', (event) => {
    if (event.target === dialog) closeDrawer(true);
  });
  for (const name of TABS) {
    $(`tab-${name}`).addEventListener('click', () => {
      selectTab(name, false);
      if (name === 'findings') void refreshFindings(true);
    });
  }
  $('drawer-tabs').addEventListener('keydown', (event) => {
    if (!['ArrowRight', 'ArrowLeft', 'Home', 'End'].includes(event.key)) return;
    const tabs = [...$('drawer-tabs').querySelectorAll<HTMLElement>('[role="tab"]')].filter((t) => !t.hidden);
    const index = tabs.indexOf(document.activeElement as HTMLElement);
    let next = index;
    if (event.key === 'ArrowRight') next = (index + 1) % tabs.length;
    if (event.key === 'ArrowLeft') next = (index - 1 + tabs.length) % tabs.length;
    if (event.key === 'Home') next = 0;
    if (event.key === 'End') next = tabs.length - 1;
    event.preventDefault();
    const name: Tab = tabs[next]?.id.slice(4) === 'findings' ? 'findings' : 'overview';
    selectTab(name, true);
    if (name === 'findings') void refreshFindings(true);
  });
}
