/**
 * The script of the `/admin/jobs` page: one ES module, no framework, bundled
 * by the build (build/page-bundle.ts) and served at
 * `/admin/jobs/assets/admin-jobs.js`.
 *
 * Rules it keeps: every datum comes from `/api/admin/jobs*` (and
 * `/api/admin/nodes`, `/api/admin/findings*`, `/api/admin/repairs*`) with the token
 * from `sessionStorage`; data is written with `textContent` (the `h()`
 * helper), never as HTML; a 401/403 signs the operator out with a message.
 * The shapes it reads are the admin API's own (`wire-types.ts`).
 */
import { SEVERITIES, severityRank } from '@oxicloud/consistency/severity';
import type {
  CancelResultJson,
  ErrorBodyJson,
  FindingsPageJson,
  JobSummaryJson,
  OutcomeEnvelopeJson,
  RunListEntryJson,
  RunStatusJson,
  RunSummaryJson,
  RunTriggeredJson,
  TriggerAcceptedJson,
} from '../../routes/wire-types.ts';
import { refreshNodes, refreshPeriodicRuns } from './cluster.ts';
import { byId as $, h } from './dom.ts';
import { fieldMeanings } from './field-meanings.ts';
import { loadFindings, startFindingsView } from './findings-view.ts';
import {
  cadence,
  duration,
  fmt,
  json,
  progressBar,
  progressText,
  relative,
  shortId,
  timeEl,
} from './format.ts';
import { refreshHealth, startHealthView } from './health-view.ts';
import { showRepairPlan, startRepairView } from './repair-view.ts';

const API_ROOT = '/api/admin';
const API = `${API_ROOT}/jobs`;
const PAGE = '/admin/jobs';
const TOKEN_KEY = 'oxicloud.admin.token';
const POLL_MS = 5000;
const FINDINGS_PAGE = 100;
const RUNS_LIMIT = 20;

type Tab = 'overview' | 'findings';
/** A run as the page holds it: a listing entry, or the whole run once fetched. */
type AnyRun = RunListEntryJson | RunSummaryJson;

/** Statuses the page polls a run's details for. */
const ACTIVE: ReadonlySet<string> = new Set<RunStatusJson>(['Running', 'CancelRequested']);

const STATUS_TEXT: Readonly<Record<RunStatusJson | 'ok' | 'err', string>> = {
  ok: 'ok',
  err: 'err',
  Running: 'Running',
  Paused: 'Paused',
  CancelRequested: 'Cancel requested',
  Completed: 'Completed',
  Failed: 'Failed',
};

function statusText(status: string): string | undefined {
  return Object.hasOwn(STATUS_TEXT, status) ? STATUS_TEXT[status as keyof typeof STATUS_TEXT] : undefined;
}

function badge(status: string | null | undefined): HTMLElement {
  if (!status) return h('span', { class: 'badge none', text: '—' });
  const known = statusText(status);
  return h('span', { class: `badge ${known ? status : 'none'}`, 'data-status': status }, known ?? status);
}

/** A severity badge, coloured by its rank in `SEVERITIES` (`sev-0` = worst). */
function badgeSeverity(severity: string): HTMLElement {
  const rank = severityRank(severity);
  const known = rank < SEVERITIES.length;
  return h('span', {
    class: `badge ${known ? `sev-${rank}` : 'none'}`,
    'data-severity': severity,
    text: severity,
  });
}

/** "Overdue": no success within 1.5 × the expected cadence (the title says since when). */
function overdueBadge(overdue: NonNullable<JobSummaryJson['overdue']>): HTMLElement {
  const last = overdue.last_success_at ? `last success ${overdue.last_success_at}` : 'never succeeded';
  return h('span', {
    class: 'badge overdue',
    title: `${overdue.deep ? 'deep run ' : ''}overdue since ${overdue.overdue_since} (${last})`,
    text: overdue.deep ? 'Overdue (deep)' : 'Overdue',
  });
}

function isRecoverable(job: JobSummaryJson | undefined): boolean {
  return job?.kind === 'recoverable';
}

/** The status the table shows: recoverable jobs follow their latest run, others their last outcome. */
function jobStatus(job: JobSummaryJson): string | null {
  if (isRecoverable(job) && job.latest_run) return job.latest_run.status;
  if (job.running) return 'Running';
  if (job.last_outcome?.outcome) return job.last_outcome.outcome.kind;
  return null;
}

function lastRunAt(job: JobSummaryJson): string | null {
  const run = isRecoverable(job) ? job.latest_run : null;
  if (run) {
    return ACTIVE.has(run.status)
      ? run.started_at
      : run.completed_at || run.last_progress_at || run.started_at;
  }
  if (job.running && job.running_since) return job.running_since;
  return job.last_outcome ? job.last_outcome.at : null;
}

/* ---------- API client ---------- */

class ApiError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

interface Row {
  readonly tr: HTMLTableRowElement;
  readonly cadenceCell: HTMLTableCellElement;
  readonly lastCell: HTMLTableCellElement;
  readonly statusCell: HTMLTableCellElement;
  readonly run: HTMLButtonElement;
  readonly deep: HTMLButtonElement;
  key: string;
}

interface Drawer {
  readonly name: string;
  readonly opener: HTMLElement | null;
  tab: Tab;
  runId: string | null;
  explicitRun: boolean;
  runs: RunListEntryJson[] | null;
  run: AnyRun | null;
  runsKey: string;
  runDetailKey: string;
  findings: FindingsPageJson | null;
  findingsKey: string;
  findingsStatus: string | null;
  severity: string;
  limit: number;
  findingsError: string;
  runsError: string;
}

interface Route {
  readonly name: string | null;
  readonly runId: string | null;
  readonly tab: Tab;
  readonly highlight: string | null;
}

const state: {
  generation: number;
  jobs: JobSummaryJson[];
  rows: Map<string, Row>;
  statuses: Map<string, string | null>;
  timer: ReturnType<typeof setTimeout> | undefined;
  refreshing: Promise<void> | null;
  highlight: string | null;
  pendingRoute: Route | null;
  drawer: Drawer | null;
} = {
  generation: 0,
  jobs: [],
  rows: new Map(),
  statuses: new Map(),
  timer: undefined,
  refreshing: null,
  highlight: null,
  pendingRoute: null,
  drawer: null,
};

function token(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

function errorOf(body: unknown): ErrorBodyJson['error'] | null {
  if (body === null || typeof body !== 'object' || !('error' in body)) return null;
  const error = (body as ErrorBodyJson).error;
  return error && typeof error === 'object' ? error : null;
}

/** The one request of the page: `base` (default the jobs API) + `path`, an optional JSON `body`. */
async function api<T>(
  path: string,
  options?: { method: 'GET' | 'POST'; base?: string; body?: unknown },
): Promise<T> {
  const current = token();
  if (!current) throw new ApiError(401, 'UNAUTHENTICATED', 'not signed in');
  const generation = state.generation;
  // A `base` is whole; paths under /api/admin/ are whole (the nodes route); the rest are below /api/admin/jobs.
  const url =
    options?.base !== undefined ? options.base + path : path.startsWith(`${API_ROOT}/`) ? path : API + path;
  let response: Response;
  try {
    response = await fetch(url, {
      method: options?.method ?? 'GET',
      headers: {
        authorization: `Bearer ${current}`,
        accept: 'application/json',
        ...(options?.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      cache: 'no-store',
      ...(options?.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
  } catch (error) {
    throw new ApiError(0, 'NETWORK', `could not reach the server (${describe(error)})`);
  }
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const err = errorOf(body);
  const code = err ? err.code : `HTTP_${response.status}`;
  if (response.status === 401 || response.status === 403) {
    if (generation === state.generation) authFailed(response.status, err);
    throw new ApiError(response.status, code, err ? err.message : response.statusText);
  }
  if (!response.ok) {
    throw new ApiError(response.status, code, err ? err.message : response.statusText || 'request failed');
  }
  if (generation !== state.generation) throw new ApiError(0, 'STALE', 'signed out meanwhile');
  return body as T;
}

function describe(error: unknown): string {
  if (error instanceof ApiError) {
    return error.status ? `${error.code} (${error.status}): ${error.message}` : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/** Whether `error` signed the operator out (the sign-in view already says why). */
function isAuthError(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 401 || error.status === 403);
}

/* ---------- sign in / out ---------- */

function showSignIn(message: string, kind?: 'error' | 'info'): void {
  stopPolling();
  closeDrawer(false);
  state.generation += 1;
  state.jobs = [];
  state.rows.clear();
  state.statuses.clear();
  $('jobs-body').replaceChildren();
  $('jobs-view').hidden = true;
  $('sign-out').hidden = true;
  $('signin-view').hidden = false;
  $('signin-message').textContent = message || '';
  $('signin-message').className = `message ${kind || 'error'}`;
  $<HTMLInputElement>('token').value = '';
  $('token').focus();
}

function authFailed(status: number, err: ErrorBodyJson['error'] | null): void {
  sessionStorage.removeItem(TOKEN_KEY);
  const detail = err ? ` (${err.code}: ${err.message})` : '';
  showSignIn(
    status === 403
      ? `This token is valid but its user is not an admin${detail}. Sign in with an admin token.`
      : `The token was not accepted${detail}. It may have expired: mint a new one with pnpm oxijobs token --user admin.`,
  );
}

async function showJobs(focusHeading: boolean): Promise<void> {
  void loadFindings();
  const repairPlan = new URLSearchParams(location.search).get('repair');
  if (repairPlan) void showRepairPlan(repairPlan);
  $('signin-view').hidden = true;
  $('jobs-view').hidden = false;
  $('sign-out').hidden = false;
  $('jobs-empty').hidden = state.jobs.length > 0;
  if (focusHeading) $('jobs-title').focus();
  await tick();
}

/** The findings views' requests: below `/api/admin/findings`. */
function findingsApi<T>(path: string, init?: { method: 'POST'; body: unknown }): Promise<T> {
  return api<T>(path, {
    method: init?.method ?? 'GET',
    base: '/api/admin/findings',
    ...(init ? { body: init.body } : {}),
  });
}

startHealthView(findingsApi);
startFindingsView(findingsApi);

startRepairView((path, init) =>
  api(path, { method: init?.method ?? 'GET', ...(init ? { body: init.body } : {}) }),
);

$('signin-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const value = $<HTMLInputElement>('token').value.trim();
  if (!value) {
    $('signin-message').textContent = 'Enter a token first.';
    $('token').focus();
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, value);
  state.generation += 1;
  $('signin-message').textContent = '';
  await showJobs(true);
});

$('sign-out').addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY);
  history.replaceState(null, '', PAGE);
  showSignIn('Signed out.', 'info');
});

/* ---------- polling ---------- */

function stopPolling(): void {
  clearTimeout(state.timer);
  state.timer = undefined;
}

function schedule(): void {
  stopPolling();
  if (token() && document.visibilityState === 'visible') state.timer = setTimeout(tick, POLL_MS);
}

async function tick(): Promise<void> {
  stopPolling();
  if (!token() || document.visibilityState !== 'visible') return;
  await refresh();
  schedule();
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') void tick();
  else stopPolling();
});

function refresh(): Promise<void> {
  if (!state.refreshing) {
    state.refreshing = (async () => {
      try {
        const jobs = await api<JobSummaryJson[]>('');
        state.jobs = Array.isArray(jobs) ? jobs : [];
        $('error').textContent = '';
        renderJobs();
        $('updated').textContent = `Updated ${new Date().toLocaleTimeString()}`;
        applyPendingRoute();
        void refreshHealth();
        if (state.drawer) await refreshDrawer(false);
        await refreshNodes(api);
      } catch (error) {
        if (!isAuthError(error) && !(error instanceof ApiError && error.code === 'STALE')) {
          $('error').textContent = `Could not load the jobs: ${describe(error)}. Retrying every 5 s.`;
        }
      } finally {
        state.refreshing = null;
      }
    })();
  }
  return state.refreshing;
}

function announce(message: string): void {
  $('notice').textContent = message;
}

/* ---------- the jobs table ---------- */

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

function renderJobs(): void {
  const body = $('jobs-body');
  $('jobs-empty').hidden = state.jobs.length > 0;
  if (state.jobs.length === 0) $('jobs-empty').textContent = 'No jobs are registered.';
  const seen = new Set<string>();
  const changes: string[] = [];
  state.jobs.forEach((job, index) => {
    seen.add(job.name);
    let row = state.rows.get(job.name);
    if (!row) {
      row = createRow(job.name);
      state.rows.set(job.name, row);
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
    const previous = state.statuses.get(job.name);
    if (previous !== undefined && previous !== status && status) {
      changes.push(`${job.name}: ${statusText(status) ?? status}`);
    }
    state.statuses.set(job.name, status);
    row.tr.classList.toggle('highlight', state.highlight === job.name);
  });
  for (const [name, row] of state.rows) {
    if (!seen.has(name)) {
      row.tr.remove();
      state.rows.delete(name);
    }
  }
  if (changes.length) announce(changes.join('; '));
}

type TriggerAnswer = RunTriggeredJson | OutcomeEnvelopeJson | TriggerAcceptedJson;

async function trigger(name: string, deep: boolean, button?: HTMLButtonElement): Promise<void> {
  const job = state.jobs.find((j) => j.name === name);
  const query = new URLSearchParams();
  if (!isRecoverable(job)) query.set('wait', 'false');
  if (deep) query.set('deep', 'true');
  const qs = query.toString();
  if (button) button.disabled = true;
  try {
    const result = await api<TriggerAnswer | null>(
      `/${encodeURIComponent(name)}/trigger${qs ? `?${qs}` : ''}`,
      { method: 'POST' },
    );
    if (result && 'run_id' in result) {
      const what = result.already_running ? 'already running' : result.resumed ? 'resumed' : 'started';
      announce(`${name}: run ${shortId(result.run_id)} ${what}${deep ? ' (deep)' : ''}.`);
      if (state.drawer && state.drawer.name === name) state.drawer.runId = result.run_id;
    } else if (result && 'outcome' in result) {
      const o = result.outcome;
      const skipped = o.kind === 'ok' ? o.extra['skipped'] : undefined;
      announce(
        `${name}: ${
          o.kind === 'ok'
            ? skipped
              ? `skipped (${String(skipped)})`
              : `ok, count ${fmt(o.count)}`
            : `failed: ${o.message}`
        }`,
      );
    } else {
      announce(`${name}: started${deep ? ' (deep)' : ''}.`);
    }
    await refresh();
  } catch (error) {
    if (!isAuthError(error)) announce(`${name}: could not start: ${describe(error)}`);
  } finally {
    if (button) button.disabled = false;
  }
}

async function cancel(name: string, button?: HTMLButtonElement): Promise<void> {
  if (button) button.disabled = true;
  try {
    const result = await api<CancelResultJson | null>(`/${encodeURIComponent(name)}/cancel`, {
      method: 'POST',
    });
    announce(
      `${name}: run ${shortId(result?.run_id)} ${
        result?.status === 'Paused' ? 'is paused.' : 'cancel requested; it pauses at its next batch boundary.'
      }`,
    );
    await refresh();
  } catch (error) {
    if (!isAuthError(error)) announce(`${name}: could not cancel: ${describe(error)}`);
  } finally {
    if (button) button.disabled = false;
  }
}

/* ---------- routes: /admin/jobs/<name>[/runs/<id>[/findings]], ?highlight=<name> ---------- */

function parseRoute(): Route {
  const rest = location.pathname.startsWith(PAGE) ? location.pathname.slice(PAGE.length) : '';
  const parts = rest
    .split('/')
    .filter(Boolean)
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  const params = new URLSearchParams(location.search);
  return {
    name: parts[0] || null,
    runId: parts[1] === 'runs' && parts[2] ? parts[2] : null,
    tab: parts[3] === 'findings' || params.get('tab') === 'findings' ? 'findings' : 'overview',
    highlight: params.get('highlight'),
  };
}

function applyPendingRoute(): void {
  const route = state.pendingRoute;
  if (!route) return;
  state.pendingRoute = null;
  const highlighted = route.highlight ? state.rows.get(route.highlight) : undefined;
  if (route.highlight && highlighted) {
    state.highlight = route.highlight;
    highlighted.tr.classList.add('highlight');
    highlighted.tr.scrollIntoView({ block: 'center' });
    if (!route.name) highlighted.tr.focus();
  }
  if (route.name) {
    const row = state.rows.get(route.name);
    if (!row) {
      $('error').textContent =
        `No job named ${route.name} (from the address); the table lists the registered jobs.`;
      return;
    }
    openDrawer(route.name, row.tr, { runId: route.runId, tab: route.tab });
  }
}

function syncUrl(): void {
  const d = state.drawer;
  let path = PAGE;
  if (d) {
    path += `/${encodeURIComponent(d.name)}`;
    if (d.runId && (d.explicitRun || d.tab === 'findings')) {
      path += `/runs/${encodeURIComponent(d.runId)}${d.tab === 'findings' ? '/findings' : ''}`;
    }
  }
  const params = new URLSearchParams(location.search);
  params.delete('tab');
  const search = params.toString();
  history.replaceState(null, '', path + (search ? `?${search}` : ''));
}

/* ---------- the drawer ---------- */

const dialog = $<HTMLDialogElement>('drawer');

function openDrawer(
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

function closeDrawer(restoreFocus: boolean): void {
  const d = state.drawer;
  state.drawer = null;
  if (dialog.open) dialog.close();
  if (d) {
    syncUrl();
    if (restoreFocus && d.opener?.isConnected) d.opener.focus();
  }
}

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

const TABS: readonly Tab[] = ['overview', 'findings'];

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

$('severity').addEventListener('change', () => {
  if (!state.drawer) return;
  state.drawer.severity = $<HTMLSelectElement>('severity').value;
  state.drawer.limit = FINDINGS_PAGE;
  void refreshFindings(true);
});

function renderOutcome(job: JobSummaryJson): void {
  const last = job.last_outcome;
  if (!last) {
    const text = isRecoverable(job)
      ? 'No outcome recorded since the server started; the runs below show every run of this job.'
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
      badge(outcome.kind),
      ' ',
      timeEl(last.at),
      last.elapsed_ms !== undefined ? ` · took ${duration(last.elapsed_ms / 1000)}` : '',
      last.source ? ` · ${last.source}` : '',
    ),
    json(last),
    explained.childElementCount ? explained : '',
  );
}

/** Re-renders a part only when its data changed; keeps focus on the same control by data-focus key. */
function renderKeyed(
  container: HTMLElement,
  key: string,
  previousKey: string,
  build: () => Array<Node | string>,
) {
  if (key === previousKey) return previousKey;
  const active = document.activeElement;
  const hadFocus = Boolean(active && active !== container && container.contains(active));
  const focusKey = hadFocus && active ? active.getAttribute('data-focus') : null;
  container.replaceChildren(...build());
  if (hadFocus) {
    const again = focusKey
      ? container.querySelector<HTMLElement>(`[data-focus="${CSS.escape(focusKey)}"]`)
      : null;
    if (again) again.focus();
    else if (dialog.open) $('drawer-title').focus();
  }
  return key;
}

async function refreshDrawer(force: boolean): Promise<void> {
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
  const base = `/${encodeURIComponent(d.name)}/runs`;
  try {
    const runs = await api<RunListEntryJson[]>(`${base}?limit=${RUNS_LIMIT}`);
    if (state.drawer !== d) return;
    d.runs = Array.isArray(runs) ? runs : [];
    d.runsError = '';
  } catch (error) {
    if (state.drawer !== d) return;
    d.runsError = `Could not load the runs: ${describe(error)}`;
  }
  if (!d.runId && d.runs?.[0]) d.runId = d.runs[0].run_id;
  const listed = d.runs ? d.runs.find((r) => r.run_id === d.runId) : undefined;
  if (d.runId && (force || !listed || ACTIVE.has(listed.status) || (d.run && ACTIVE.has(d.run.status)))) {
    try {
      const run = await api<RunSummaryJson>(`${base}/${encodeURIComponent(d.runId)}`);
      if (state.drawer !== d) return;
      d.run = run;
    } catch (error) {
      if (state.drawer !== d) return;
      d.run = listed ?? null;
      if (!listed) d.runsError = `Could not load run ${d.runId}: ${describe(error)}`;
    }
  } else {
    d.run = listed ?? d.run;
  }
  renderRuns(d);
  renderRunDetail(d);
  if (d.tab === 'findings') await refreshFindings(force);
}

function renderRuns(d: Drawer): void {
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
      pick.addEventListener('click', () => selectRun(run.run_id));
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
  renderRuns(d);
  renderRunDetail(d);
  void refreshDrawer(true);
}

function renderRunDetail(d: Drawer): void {
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

async function refreshFindings(force: boolean): Promise<void> {
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
            h('td', { class: 'resource', text: item.resource_id }),
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

/* ---------- start ---------- */

state.pendingRoute = parseRoute();
if (token()) void showJobs(false);
else showSignIn('');
