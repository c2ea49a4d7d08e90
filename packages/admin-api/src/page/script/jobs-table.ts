/**
 * The jobs table of the `/admin/jobs` page: a row per registered job with its
 * cadence, last run, status (and "Overdue") and Run / Run deep. A row opens
 * the job's drawer (click, Enter or Space; the arrows move between rows).
 * Rows are kept across polls and updated in place, and a status change is
 * announced. The address's route is applied once the first listing is in.
 */
import type { Route } from './address.ts';
import { byId as $, h } from './dom.ts';
import { openDrawer } from './drawer.ts';
import { cadence, relative, timeEl } from './format.ts';
import { announce, trigger } from './job-actions.ts';
import { badge, jobStatus, lastRunAt, overdueBadge, statusText } from './job-status.ts';
import { state } from './page-state.ts';

interface Row {
  readonly tr: HTMLTableRowElement;
  readonly cadenceCell: HTMLTableCellElement;
  readonly lastCell: HTMLTableCellElement;
  readonly statusCell: HTMLTableCellElement;
  readonly run: HTMLButtonElement;
  readonly deep: HTMLButtonElement;
  key: string;
}

const rows = new Map<string, Row>();
/** Each job's status at the last render, to announce changes. */
const statuses = new Map<string, string | null>();
let highlight: string | null = null;
let pendingRoute: Route | null = null;

function createRow(name: string): Row {
  const tr = h('tr', { tabindex: '0', 'data-job': name });
  const nameCell = h('th', { scope: 'row' }, name);
  const cadenceCell = h('td');
  const lastCell = h('td');
  const statusCell = h('td');
  const hiddenName = () => h('span', { class: 'visually-hidden', text: ` ${name}` });
  const run = h('button', { type: 'button', 'data-action': 'run' }, 'Run', hiddenName());
  const deep = h('button', { type: 'button', 'data-action': 'deep', hidden: true }, 'Run deep', hiddenName());
  run.addEventListener('click', (event) => {
    event.stopPropagation();
    void trigger(name, false, run);
  });
  deep.addEventListener('click', (event) => {
    event.stopPropagation();
    void trigger(name, true, deep);
  });
  const actions = h('td', null, h('div', { class: 'actions' }, run, deep));
  tr.append(nameCell, cadenceCell, lastCell, statusCell, actions);
  tr.addEventListener('click', (event) => {
    if (event.target instanceof Element && event.target.closest('button')) return;
    openDrawer(name, tr);
  });
  tr.addEventListener('keydown', (event) => {
    if (event.target !== tr) return;
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      openDrawer(name, tr);
    } else if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const next = event.key === 'ArrowDown' ? tr.nextElementSibling : tr.previousElementSibling;
      if (next instanceof HTMLElement) next.focus();
    }
  });
  return { tr, cadenceCell, lastCell, statusCell, run, deep, key: '' };
}

export function renderJobs(): void {
  const body = $('jobs-body');
  $('jobs-empty').hidden = state.jobs.length > 0;
  if (state.jobs.length === 0) $('jobs-empty').textContent = 'No jobs are registered.';
  const seen = new Set<string>();
  const changes: string[] = [];
  state.jobs.forEach((job, index) => {
    seen.add(job.name);
    let row = rows.get(job.name);
    if (!row) {
      row = createRow(job.name);
      rows.set(job.name, row);
    }
    if (body.children[index] !== row.tr) body.insertBefore(row.tr, body.children[index] ?? null);
    const status = jobStatus(job);
    const last = lastRunAt(job);
    const overdue = job.overdue ?? null;
    const key = [cadence(job), relative(last), status, overdue ? overdue.overdue_since : ''].join('|');
    if (key !== row.key) {
      row.key = key;
      row.cadenceCell.textContent = cadence(job);
      row.lastCell.replaceChildren(timeEl(last));
      row.statusCell.replaceChildren(badge(status));
      if (overdue) row.statusCell.append(' ', overdueBadge(overdue));
    }
    row.tr.setAttribute('data-overdue', overdue ? 'true' : 'false');
    row.tr.setAttribute('data-status', status || 'none');
    row.deep.hidden = job.supports_deep !== true;
    const previous = statuses.get(job.name);
    if (previous !== undefined && previous !== status && status) {
      changes.push(`${job.name}: ${statusText(status) ?? status}`);
    }
    statuses.set(job.name, status);
    row.tr.classList.toggle('highlight', highlight === job.name);
  });
  for (const [name, row] of rows) {
    if (!seen.has(name)) {
      row.tr.remove();
      rows.delete(name);
    }
  }
  if (changes.length) announce(changes.join('; '));
}

/** Empties the table (on sign-out): its rows and the statuses seen. */
export function clearJobsTable(): void {
  rows.clear();
  statuses.clear();
  $('jobs-body').replaceChildren();
}

/** Keeps the address's route until {@link applyPendingRoute} finds its rows. */
export function setPendingRoute(route: Route): void {
  pendingRoute = route;
}

/** Highlights the row and opens the drawer the address names (once, after the first listing). */
export function applyPendingRoute(): void {
  const route = pendingRoute;
  if (!route) return;
  pendingRoute = null;
  const highlighted = route.highlight ? rows.get(route.highlight) : undefined;
  if (route.highlight && highlighted) {
    highlight = route.highlight;
    highlighted.tr.classList.add('highlight');
    highlighted.tr.scrollIntoView({ block: 'center' });
    if (!route.name) highlighted.tr.focus();
  }
  if (route.name) {
    const row = rows.get(route.name);
    if (!row) {
      $('error').textContent =
        `No job named ${route.name} (from the address); the table lists the registered jobs.`;
      return;
    }
    openDrawer(route.name, row.tr, { runId: route.runId, tab: route.tab });
  }
}
