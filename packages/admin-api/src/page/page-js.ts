/**
 * The script of the `/admin/jobs` page (one ES module of plain JS, no
 * framework, no build step), served at `/admin/jobs/assets/admin-jobs.js`.
 * Kept as a string so tsup bundles it; it must contain no backtick and no
 * dollar-brace (checked by the page tests).
 *
 * Rules it keeps: every datum comes from `/api/admin/jobs*` with the token
 * from `sessionStorage`; data is written with `textContent` (the `h()`
 * helper), never as HTML; a 401/403 signs the operator out with a message.
 */
export const ADMIN_PAGE_JS = String.raw`
const API = '/api/admin/jobs';
const PAGE = '/admin/jobs';
const TOKEN_KEY = 'oxicloud.admin.token';
const POLL_MS = 5000;
const ACTIVE = new Set(['Running', 'CancelRequested']);
const FINDINGS_PAGE = 100;
const RUNS_LIMIT = 20;
const numberFormat = new Intl.NumberFormat('en');

/* What the fields of a last outcome mean: job-specific first, then the recoverable bridge's. */
const COMMON_FIELDS = {
  kind: 'ok: the run finished without error; err: it failed (see message).',
  count: 'The job\'s primary number (what it counts is listed below).',
  message: 'Why the run failed.',
  completed: 'true: the run scanned everything; false: it stopped early.',
  paused: 'true: the run stopped at a batch boundary with its cursor saved; Run resumes it.',
  cursor_hex: 'Where a paused run resumes (the stored cursor, hex).',
  skipped: 'Why nothing ran: already_running = a run of this job was in flight.',
  run_id: 'The recoverable run this outcome belongs to.',
  at: 'When the run ended.',
  cause: 'Why it failed: handler (threw or returned err), timeout, panicked.',
  elapsed_ms: 'How long the run took, in milliseconds.',
  source: 'What started it: tick (the schedule) or trigger (an operator).',
};
const JOB_FIELDS = {
  trash_cleanup: {
    count: 'Rows purged: trashed folders (with their subtree) plus trashed files.',
    folders: 'Trashed folders purged.', files: 'Trashed files purged.', batches: 'Delete batches run.',
    retention_days: 'Days an item stays in the trash before it is purged.', cutoff: 'Items trashed before this were purged.',
  },
  storage_reconcile: {
    count: 'Rows corrected: drives plus users whose used bytes had drifted.',
    drives_corrected: 'Drives whose used_bytes was rewritten.', users_corrected: 'Users whose storage_used_bytes was rewritten.',
    largest: 'The 10 largest corrections (before, after, delta in bytes).',
  },
  dedup_gc: {
    count: 'Blobs deleted.', blobs_deleted: 'Unreferenced blobs deleted (bytes and row).', bytes_freed: 'Bytes freed on the blob backend.',
    blobs_kept: 'Candidates kept because they gained a reference meanwhile.', grace_seconds: 'How long a blob must stay orphaned before it is deleted.',
    forced: 'true: run with force (grace 0).',
  },
  grant_cleanup: {
    count: 'Expired grants deleted.', grace_seconds: 'How long after expiry a grant is kept.', forced: 'true: run with force (grace 0).',
    cutoff: 'Grants that expired before this were deleted.',
  },
  consistency_batch: {
    count: 'Checks that completed their whole scan.', per_check: 'Each check\'s own outcome, by job name.',
    checks: 'The checks run, in order.', completed: 'Checks that scanned everything.', paused: 'Checks that stopped with their cursor saved.',
    failed: 'Checks that failed (the batch itself still reports ok).', skipped: 'Checks not started (aborted, or already running).',
    deep: 'true: bytes were re-hashed and mime types sniffed.', force: 'true: grace windows were 0.',
  },
};
for (const name of ['drives_consistency', 'folders_consistency', 'files_consistency', 'storage_consistency']) {
  JOB_FIELDS[name] = { count: 'Findings recorded by the run.' };
}
JOB_FIELDS.storage_migration = { count: 'Blobs copied to the target backend.' };
JOB_FIELDS.reextract_audio = { count: 'Audio files whose tags were written.' };
JOB_FIELDS.reextract_image = { count: 'Images and videos whose capture date was written.' };

/* ---------- small helpers ---------- */

const $ = (id) => document.getElementById(id);

/** Builds an element; strings become text nodes (never HTML). */
function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [key, value] of Object.entries(props)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') el.className = value;
      else if (key === 'text') el.textContent = String(value);
      else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
      else if (key === 'value' || key === 'max') el[key] = value;
      else el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

function fmt(n) {
  return typeof n === 'number' && Number.isFinite(n) ? numberFormat.format(n) : '—';
}

function shortId(id) {
  return typeof id === 'string' ? id.slice(0, 8) : '—';
}

function cadence(job) {
  const ms = job.interval_ms;
  if (ms === null || ms === undefined) return 'on demand';
  if (ms % 3600000 === 0) return 'every ' + ms / 3600000 + ' h';
  if (ms % 60000 === 0) return 'every ' + ms / 60000 + ' min';
  if (ms % 1000 === 0) return 'every ' + ms / 1000 + ' s';
  return 'every ' + ms + ' ms';
}

function relative(iso) {
  if (!iso) return 'never';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '—';
  const s = Math.max(0, Math.round((Date.now() - t) / 1000));
  if (s < 5) return 'just now';
  if (s < 60) return s + ' s ago';
  if (s < 3600) return Math.floor(s / 60) + ' min ago';
  if (s < 172800) return Math.floor(s / 3600) + ' h ago';
  return Math.floor(s / 86400) + ' d ago';
}

function duration(seconds) {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return s + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
  return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
}

function timeEl(iso) {
  if (!iso) return h('span', { text: 'never' });
  const date = new Date(iso);
  return h('time', { datetime: iso, title: Number.isNaN(date.getTime()) ? iso : date.toLocaleString() }, relative(iso));
}

function json(value) {
  return h('pre', { class: 'json' }, JSON.stringify(value, null, 2));
}

const STATUS_TEXT = { ok: 'ok', err: 'err', Running: 'Running', Paused: 'Paused', CancelRequested: 'Cancel requested', Completed: 'Completed', Failed: 'Failed' };

function badge(status) {
  if (!status) return h('span', { class: 'badge none', text: '—' });
  const known = Object.hasOwn(STATUS_TEXT, status);
  return h('span', { class: 'badge ' + (known ? status : 'none'), 'data-status': status }, known ? STATUS_TEXT[status] : status);
}

/** "Overdue": no success within 1.5 × the expected cadence (the title says since when). */
function overdueBadge(overdue) {
  const last = overdue.last_success_at ? 'last success ' + overdue.last_success_at : 'never succeeded';
  return h('span', {
    class: 'badge overdue',
    title: (overdue.deep ? 'deep run ' : '') + 'overdue since ' + overdue.overdue_since + ' (' + last + ')',
    text: overdue.deep ? 'Overdue (deep)' : 'Overdue',
  });
}

function isRecoverable(job) {
  return job && job.kind === 'recoverable';
}

/** The status the table shows: recoverable jobs follow their latest run, others their last outcome. */
function jobStatus(job) {
  if (isRecoverable(job) && job.latest_run) return job.latest_run.status;
  if (job.running) return 'Running';
  if (job.last_outcome && job.last_outcome.outcome) return job.last_outcome.outcome.kind;
  return null;
}

function lastRunAt(job) {
  const run = isRecoverable(job) ? job.latest_run : null;
  if (run) return ACTIVE.has(run.status) ? run.started_at : run.completed_at || run.last_progress_at || run.started_at;
  if (job.running && job.running_since) return job.running_since;
  return job.last_outcome ? job.last_outcome.at : null;
}

/* ---------- API client ---------- */

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const state = {
  generation: 0,
  jobs: [],
  rows: new Map(),
  statuses: new Map(),
  timer: 0,
  refreshing: null,
  highlight: null,
  pendingRoute: null,
  drawer: null,
};

function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

async function api(path, options) {
  const current = token();
  if (!current) throw new ApiError(401, 'UNAUTHENTICATED', 'not signed in');
  const generation = state.generation;
  let response;
  try {
    response = await fetch(API + path, {
      method: (options && options.method) || 'GET',
      headers: { authorization: 'Bearer ' + current, accept: 'application/json' },
      cache: 'no-store',
    });
  } catch (error) {
    throw new ApiError(0, 'NETWORK', 'could not reach the server (' + error.message + ')');
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const err = body && typeof body === 'object' && body.error ? body.error : null;
  if (response.status === 401 || response.status === 403) {
    if (generation === state.generation) authFailed(response.status, err);
    throw new ApiError(response.status, err ? err.code : 'HTTP_' + response.status, err ? err.message : response.statusText);
  }
  if (!response.ok) {
    throw new ApiError(response.status, err ? err.code : 'HTTP_' + response.status, err ? err.message : response.statusText || 'request failed');
  }
  if (generation !== state.generation) throw new ApiError(0, 'STALE', 'signed out meanwhile');
  return body;
}

function describe(error) {
  if (error instanceof ApiError) return error.status ? error.code + ' (' + error.status + '): ' + error.message : error.message;
  return String(error && error.message ? error.message : error);
}

/* ---------- sign in / out ---------- */

function showSignIn(message, kind) {
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
  $('signin-message').className = 'message ' + (kind || 'error');
  $('token').value = '';
  $('token').focus();
}

function authFailed(status, err) {
  sessionStorage.removeItem(TOKEN_KEY);
  const detail = err ? ' (' + err.code + ': ' + err.message + ')' : '';
  showSignIn(status === 403
    ? 'This token is valid but its user is not an admin' + detail + '. Sign in with an admin token.'
    : 'The token was not accepted' + detail + '. It may have expired: mint a new one with pnpm oxijobs token --user admin.');
}

async function showJobs(focusHeading) {
  $('signin-view').hidden = true;
  $('jobs-view').hidden = false;
  $('sign-out').hidden = false;
  $('jobs-empty').hidden = state.jobs.length > 0;
  if (focusHeading) $('jobs-title').focus();
  await tick();
}

$('signin-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const value = $('token').value.trim();
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

function stopPolling() {
  clearTimeout(state.timer);
  state.timer = 0;
}

function schedule() {
  stopPolling();
  if (token() && document.visibilityState === 'visible') state.timer = setTimeout(tick, POLL_MS);
}

async function tick() {
  stopPolling();
  if (!token() || document.visibilityState !== 'visible') return;
  await refresh();
  schedule();
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') tick();
  else stopPolling();
});

function refresh() {
  if (!state.refreshing) {
    state.refreshing = (async () => {
      try {
        const jobs = await api('');
        state.jobs = Array.isArray(jobs) ? jobs : [];
        $('error').textContent = '';
        renderJobs();
        $('updated').textContent = 'Updated ' + new Date().toLocaleTimeString();
        applyPendingRoute();
        if (state.drawer) await refreshDrawer(false);
      } catch (error) {
        if (!(error instanceof ApiError) || (error.status !== 401 && error.status !== 403 && error.code !== 'STALE')) {
          $('error').textContent = 'Could not load the jobs: ' + describe(error) + '. Retrying every 5 s.';
        }
      } finally {
        state.refreshing = null;
      }
    })();
  }
  return state.refreshing;
}

function announce(message) {
  $('notice').textContent = message;
}

/* ---------- the jobs table ---------- */

function createRow(name) {
  const tr = h('tr', { tabindex: '0', 'data-job': name });
  const nameCell = h('th', { scope: 'row' }, name);
  const cadenceCell = h('td');
  const lastCell = h('td');
  const statusCell = h('td');
  const run = h('button', { type: 'button', 'data-action': 'run' }, 'Run', h('span', { class: 'visually-hidden', text: ' ' + name }));
  const deep = h('button', { type: 'button', 'data-action': 'deep', hidden: true }, 'Run deep', h('span', { class: 'visually-hidden', text: ' ' + name }));
  run.addEventListener('click', (event) => { event.stopPropagation(); trigger(name, false, run); });
  deep.addEventListener('click', (event) => { event.stopPropagation(); trigger(name, true, deep); });
  const actions = h('td', null, h('div', { class: 'actions' }, run, deep));
  tr.append(nameCell, cadenceCell, lastCell, statusCell, actions);
  tr.addEventListener('click', (event) => {
    if (event.target.closest('button')) return;
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
      if (next) next.focus();
    }
  });
  return { tr, cadenceCell, lastCell, statusCell, run, deep, key: '' };
}

function renderJobs() {
  const body = $('jobs-body');
  $('jobs-empty').hidden = state.jobs.length > 0;
  if (state.jobs.length === 0) $('jobs-empty').textContent = 'No jobs are registered.';
  const seen = new Set();
  const changes = [];
  state.jobs.forEach((job, index) => {
    seen.add(job.name);
    let row = state.rows.get(job.name);
    if (!row) {
      row = createRow(job.name);
      state.rows.set(job.name, row);
    }
    if (body.children[index] !== row.tr) body.insertBefore(row.tr, body.children[index] || null);
    const status = jobStatus(job);
    const last = lastRunAt(job);
    const overdue = job.overdue || null;
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
    if (previous !== undefined && previous !== status && status) changes.push(job.name + ': ' + (STATUS_TEXT[status] || status));
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

async function trigger(name, deep, button) {
  const job = state.jobs.find((j) => j.name === name);
  const recoverable = isRecoverable(job);
  const query = new URLSearchParams();
  if (!recoverable) query.set('wait', 'false');
  if (deep) query.set('deep', 'true');
  const qs = query.toString();
  if (button) button.disabled = true;
  try {
    const result = await api('/' + encodeURIComponent(name) + '/trigger' + (qs ? '?' + qs : ''), { method: 'POST' });
    if (result && result.run_id) {
      const what = result.already_running ? 'already running' : result.resumed ? 'resumed' : 'started';
      announce(name + ': run ' + shortId(result.run_id) + ' ' + what + (deep ? ' (deep)' : '') + '.');
      if (state.drawer && state.drawer.name === name) state.drawer.runId = result.run_id;
    } else if (result && result.outcome) {
      const o = result.outcome;
      announce(name + ': ' + (o.kind === 'ok' ? (o.extra && o.extra.skipped ? 'skipped (' + o.extra.skipped + ')' : 'ok, count ' + fmt(o.count)) : 'failed: ' + o.message));
    } else {
      announce(name + ': started' + (deep ? ' (deep)' : '') + '.');
    }
    await refresh();
  } catch (error) {
    if (error.status !== 401 && error.status !== 403) announce(name + ': could not start: ' + describe(error));
  } finally {
    if (button) button.disabled = false;
  }
}

async function cancel(name, button) {
  if (button) button.disabled = true;
  try {
    const result = await api('/' + encodeURIComponent(name) + '/cancel', { method: 'POST' });
    announce(name + ': run ' + shortId(result && result.run_id) + ' ' + (result && result.status === 'Paused' ? 'is paused.' : 'cancel requested; it pauses at its next batch boundary.'));
    await refresh();
  } catch (error) {
    if (error.status !== 401 && error.status !== 403) announce(name + ': could not cancel: ' + describe(error));
  } finally {
    if (button) button.disabled = false;
  }
}

/* ---------- routes: /admin/jobs/<name>[/runs/<id>[/findings]], ?highlight=<name> ---------- */

function parseRoute() {
  const rest = location.pathname.startsWith(PAGE) ? location.pathname.slice(PAGE.length) : '';
  const parts = rest.split('/').filter(Boolean).map((p) => { try { return decodeURIComponent(p); } catch { return p; } });
  const params = new URLSearchParams(location.search);
  return {
    name: parts[0] || null,
    runId: parts[1] === 'runs' && parts[2] ? parts[2] : null,
    tab: parts[3] === 'findings' || params.get('tab') === 'findings' ? 'findings' : 'overview',
    highlight: params.get('highlight'),
  };
}

function applyPendingRoute() {
  const route = state.pendingRoute;
  if (!route) return;
  state.pendingRoute = null;
  if (route.highlight && state.rows.has(route.highlight)) {
    state.highlight = route.highlight;
    const row = state.rows.get(route.highlight);
    row.tr.classList.add('highlight');
    row.tr.scrollIntoView({ block: 'center' });
    if (!route.name) row.tr.focus();
  }
  if (route.name) {
    const row = state.rows.get(route.name);
    if (!row) {
      $('error').textContent = 'No job named ' + route.name + ' (from the address); the table lists the registered jobs.';
      return;
    }
    openDrawer(route.name, row.tr, { runId: route.runId, tab: route.tab });
  }
}

function syncUrl() {
  const d = state.drawer;
  let path = PAGE;
  if (d) {
    path += '/' + encodeURIComponent(d.name);
    if (d.runId && (d.explicitRun || d.tab === 'findings')) path += '/runs/' + encodeURIComponent(d.runId) + (d.tab === 'findings' ? '/findings' : '');
  }
  const params = new URLSearchParams(location.search);
  params.delete('tab');
  const search = params.toString();
  history.replaceState(null, '', path + (search ? '?' + search : ''));
}

/* ---------- the drawer ---------- */

const dialog = $('drawer');

function openDrawer(name, opener, options) {
  const job = state.jobs.find((j) => j.name === name);
  if (!job) return;
  state.drawer = {
    name,
    opener,
    tab: (options && options.tab) || 'overview',
    runId: (options && options.runId) || null,
    explicitRun: Boolean(options && options.runId),
    runs: null,
    run: null,
    runsKey: '',
    findings: null,
    findingsKey: '',
    severity: '',
    limit: FINDINGS_PAGE,
    findingsError: '',
    runsError: '',
  };
  $('severity').value = '';
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
  refreshDrawer(true);
}

function closeDrawer(restoreFocus) {
  const d = state.drawer;
  state.drawer = null;
  if (dialog.open) dialog.close();
  if (d) {
    syncUrl();
    if (restoreFocus !== false && d.opener && d.opener.isConnected) d.opener.focus();
  }
}

$('drawer-close').addEventListener('click', () => closeDrawer(true));
dialog.addEventListener('cancel', (event) => {
  event.preventDefault();
  closeDrawer(true);
});
dialog.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && event.target.tagName !== 'SELECT') {
    event.preventDefault();
    closeDrawer(true);
  }
});
dialog.addEventListener('click', (event) => {
  if (event.target === dialog) closeDrawer(true);
});

function currentJob() {
  return state.drawer ? state.jobs.find((j) => j.name === state.drawer.name) : undefined;
}

function renderDrawerHead() {
  const job = currentJob();
  if (!job) return;
  const parts = [isRecoverable(job) ? 'recoverable' : 'periodic', cadence(job)];
  if (job.next_run_at) parts.push('next ' + new Date(job.next_run_at).toLocaleString());
  if (job.timeout_ms) parts.push('timeout ' + duration(job.timeout_ms / 1000));
  $('drawer-meta').textContent = parts.join(' · ');
  const actions = $('drawer-actions');
  if (!actions.firstChild || actions.getAttribute('data-job') !== job.name) {
    actions.setAttribute('data-job', job.name);
    const run = h('button', { type: 'button', class: 'primary' }, 'Run now');
    run.addEventListener('click', () => trigger(job.name, false, run));
    const deep = h('button', { type: 'button', hidden: job.supports_deep !== true }, 'Run deep');
    deep.addEventListener('click', () => trigger(job.name, true, deep));
    actions.replaceChildren(run, deep, h('span', null, ' '), badge(jobStatus(job)));
  } else {
    actions.lastChild.replaceWith(badge(jobStatus(job)));
  }
  $('tab-findings').hidden = !isRecoverable(job);
  $('runs-section').hidden = !isRecoverable(job);
}

function selectTab(tab, focus) {
  const d = state.drawer;
  if (!d) return;
  const job = currentJob();
  if (tab === 'findings' && !isRecoverable(job)) tab = 'overview';
  d.tab = tab;
  for (const name of ['overview', 'findings']) {
    const selected = name === tab;
    const button = $('tab-' + name);
    button.setAttribute('aria-selected', String(selected));
    button.tabIndex = selected ? 0 : -1;
    $('panel-' + name).hidden = !selected;
    if (selected && focus) button.focus();
  }
  syncUrl();
}

for (const name of ['overview', 'findings']) {
  $('tab-' + name).addEventListener('click', () => {
    selectTab(name, false);
    if (name === 'findings') refreshFindings(true);
  });
}
$('drawer-tabs').addEventListener('keydown', (event) => {
  if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft' && event.key !== 'Home' && event.key !== 'End') return;
  const tabs = [...$('drawer-tabs').querySelectorAll('[role="tab"]')].filter((t) => !t.hidden);
  const index = tabs.indexOf(document.activeElement);
  let next = index;
  if (event.key === 'ArrowRight') next = (index + 1) % tabs.length;
  if (event.key === 'ArrowLeft') next = (index - 1 + tabs.length) % tabs.length;
  if (event.key === 'Home') next = 0;
  if (event.key === 'End') next = tabs.length - 1;
  event.preventDefault();
  const name = tabs[next].id.slice(4);
  selectTab(name, true);
  if (name === 'findings') refreshFindings(true);
});

$('severity').addEventListener('change', () => {
  if (!state.drawer) return;
  state.drawer.severity = $('severity').value;
  state.drawer.limit = FINDINGS_PAGE;
  refreshFindings(true);
});

function renderOutcome(job) {
  const last = job.last_outcome;
  if (!last) {
    const text = isRecoverable(job)
      ? 'No outcome recorded since the server started; the runs below show every run of this job.'
      : 'No run has finished since the server started.';
    $('outcome').replaceChildren(h('p', { class: 'empty', text }));
    return;
  }
  const fields = Object.assign({}, COMMON_FIELDS, JOB_FIELDS[job.name] || {});
  const outcome = last.outcome || {};
  const keys = ['kind', 'count', 'message'].filter((k) => k in outcome).concat(Object.keys(outcome.extra || {}));
  const explained = h('dl', { class: 'fields', 'aria-label': 'What the fields mean' });
  for (const key of keys) {
    if (!fields[key]) continue;
    explained.append(h('dt', null, key), h('dd', null, fields[key]));
  }
  $('outcome').replaceChildren(
    h('p', null, badge(outcome.kind), ' ', timeEl(last.at), last.elapsed_ms !== undefined ? ' · took ' + duration(last.elapsed_ms / 1000) : '', last.source ? ' · ' + last.source : ''),
    json(last),
    explained.childElementCount ? explained : '',
  );
}

/** Re-renders a part only when its data changed; keeps focus on the same control by data-focus key. */
function renderKeyed(container, key, previousKey, build) {
  if (key === previousKey) return previousKey;
  const active = document.activeElement;
  const hadFocus = Boolean(active && active !== container && container.contains(active));
  const focusKey = hadFocus ? active.getAttribute('data-focus') : null;
  container.replaceChildren(...build());
  if (hadFocus) {
    const again = focusKey ? container.querySelector('[data-focus="' + CSS.escape(focusKey) + '"]') : null;
    if (again) again.focus();
    else if (dialog.open) $('drawer-title').focus();
  }
  return key;
}

async function refreshDrawer(force) {
  const d = state.drawer;
  if (!d) return;
  const job = currentJob();
  if (!job) return;
  renderDrawerHead();
  renderOutcome(job);
  if (!isRecoverable(job)) return;
  const base = '/' + encodeURIComponent(d.name) + '/runs';
  try {
    const runs = await api(base + '?limit=' + RUNS_LIMIT);
    if (state.drawer !== d) return;
    d.runs = Array.isArray(runs) ? runs : [];
    d.runsError = '';
  } catch (error) {
    if (state.drawer !== d) return;
    d.runsError = 'Could not load the runs: ' + describe(error);
  }
  if (!d.runId && d.runs && d.runs[0]) d.runId = d.runs[0].run_id;
  const listed = d.runs ? d.runs.find((r) => r.run_id === d.runId) : undefined;
  if (d.runId && (force || !listed || ACTIVE.has(listed.status) || (d.run && ACTIVE.has(d.run.status)))) {
    try {
      const run = await api(base + '/' + encodeURIComponent(d.runId));
      if (state.drawer !== d) return;
      d.run = run;
    } catch (error) {
      if (state.drawer !== d) return;
      d.run = listed || null;
      if (!listed) d.runsError = 'Could not load run ' + d.runId + ': ' + describe(error);
    }
  } else {
    d.run = listed || d.run;
  }
  renderRuns();
  renderRunDetail();
  if (d.tab === 'findings') await refreshFindings(force);
}

function progressText(p) {
  if (!p) return '';
  const hasTotal = typeof p.total === 'number';
  // The total is the job's estimate: a scan may pass it (rows added meanwhile, extra phases).
  const parts = [hasTotal && p.processed > p.total
    ? fmt(p.processed) + ' processed (estimated ' + fmt(p.total) + ')'
    : fmt(p.processed) + (hasTotal ? ' / ' + fmt(p.total) : '') + ' processed'];
  if (typeof p.fraction === 'number') parts.push(Math.floor(p.fraction * 100) + '%');
  if (typeof p.rate_per_second === 'number') parts.push(fmt(Math.round(p.rate_per_second)) + '/s');
  if (typeof p.eta_seconds === 'number') parts.push('ETA ' + duration(p.eta_seconds));
  return parts.join(' · ');
}

function progressBar(p, label) {
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

function renderRuns() {
  const d = state.drawer;
  const runs = d.runs || [];
  const key = JSON.stringify([d.runsError, d.runId, runs.map((r) => [r.run_id, r.status, r.progress && r.progress.processed])]);
  d.runsKey = renderKeyed($('runs'), key, d.runsKey, () => {
    const out = [];
    if (d.runsError) out.push(h('p', { class: 'message error', role: 'alert', text: d.runsError }));
    if (runs.length === 0) {
      out.push(h('p', { class: 'empty', text: 'No runs yet. Run starts one.' }));
      return out;
    }
    const body = h('tbody');
    for (const run of runs) {
      const selected = run.run_id === d.runId;
      const pick = h('button', { type: 'button', class: 'link', 'data-focus': 'run:' + run.run_id, 'aria-pressed': String(selected) },
        shortId(run.run_id), h('span', { class: 'visually-hidden', text: ' show details' }));
      pick.addEventListener('click', () => selectRun(run.run_id));
      body.append(h('tr', { 'aria-current': selected ? 'true' : null, 'data-run': run.run_id },
        h('td', { class: 'mono' }, pick),
        h('td', null, timeEl(run.started_at)),
        h('td', null, badge(run.status)),
        h('td', { class: 'progress-text' }, run.progress ? fmt(run.progress.processed) + (typeof run.progress.total === 'number' ? ' / ' + fmt(run.progress.total) : '') : '—'),
      ));
    }
    out.push(h('table', { class: 'runs' },
      h('caption', { text: 'Newest first. Pick a run to see its details and findings.' }),
      h('thead', null, h('tr', null, h('th', { scope: 'col', text: 'Run' }), h('th', { scope: 'col', text: 'Started' }), h('th', { scope: 'col', text: 'Status' }), h('th', { scope: 'col', text: 'Processed' }))),
      body));
    return out;
  });
}

function selectRun(runId) {
  const d = state.drawer;
  if (!d) return;
  d.runId = runId;
  d.explicitRun = true;
  d.run = d.runs ? d.runs.find((r) => r.run_id === runId) || null : null;
  d.findings = null;
  d.findingsKey = '';
  d.limit = FINDINGS_PAGE;
  syncUrl();
  renderRuns();
  renderRunDetail();
  refreshDrawer(true);
}

function renderRunDetail() {
  const d = state.drawer;
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
      button.addEventListener('click', () => cancel(run.job_name, button));
      actions.append(button);
    }
    if (run.status === 'Paused') {
      const button = h('button', { type: 'button', class: 'primary', 'data-focus': 'resume' }, 'Resume');
      button.addEventListener('click', () => trigger(run.job_name, false, button));
      actions.append(button);
    }
    const fields = h('dl', { class: 'fields' });
    const add = (label, value) => fields.append(h('dt', null, label), h('dd', { class: 'value' }, value));
    add('run_id', h('span', { class: 'mono', text: run.run_id }));
    add('started', timeEl(run.started_at));
    add('last progress', timeEl(run.last_progress_at));
    add('completed', run.completed_at ? timeEl(run.completed_at) : '—');
    add('cursor', h('span', { class: 'mono', text: run.cursor_hex || '— (start)' }));
    if (typeof run.active_ms === 'number') add('time', duration(run.active_ms / 1000) + ' active · ' + duration((run.wall_ms || 0) / 1000) + ' wall');
    if (run.error_message) add('error', h('span', { class: 'message error', text: run.error_message }));
    (run.pauses || []).forEach((p) => add('paused', h('span', null, timeEl(p.at), ' ' + p.reason)));
    return [
      h('h3', { class: 'run-title' }, 'Run ', h('span', { class: 'mono', text: shortId(run.run_id) }), ' ', badge(run.status)),
      h('div', { class: 'progress-line' }, progressBar(p, 'Progress of run ' + shortId(run.run_id)), h('span', { class: 'progress-text', 'data-progress': String(p ? p.processed : '') }, progressText(p))),
      actions.childElementCount ? actions : '',
      fields,
      h('h3', { text: 'Stats' }), json(run.stats || {}),
      h('h3', { text: run.params ? 'Params' : 'Params (summary)' }), json(run.params || run.params_summary || {}),
    ];
  });
}

async function refreshFindings(force) {
  const d = state.drawer;
  if (!d || d.tab !== 'findings') return;
  const run = d.run;
  $('findings-title').textContent = run ? 'Findings of run ' + shortId(run.run_id) : 'Findings';
  if (!d.runId) {
    $('findings').replaceChildren(h('p', { class: 'empty', text: 'No run yet: start one with Run.' }));
    return;
  }
  const active = run && ACTIVE.has(run.status);
  if (!force && !active && d.findings && d.findings.run_id === d.runId && d.findingsStatus === (run && run.status)) return;
  const query = new URLSearchParams({ limit: String(d.limit), offset: '0' });
  if (d.severity) query.set('severity', d.severity);
  try {
    const result = await api('/' + encodeURIComponent(d.name) + '/runs/' + encodeURIComponent(d.runId) + '/findings?' + query);
    if (state.drawer !== d) return;
    d.findings = result;
    d.findingsStatus = run && run.status;
    d.findingsError = '';
  } catch (error) {
    if (state.drawer !== d) return;
    d.findingsError = 'Could not load the findings: ' + describe(error);
  }
  renderFindings();
}

function renderFindings() {
  const d = state.drawer;
  const f = d.findings;
  const key = JSON.stringify([d.findingsError, d.severity, f]);
  d.findingsKey = renderKeyed($('findings'), key, d.findingsKey, () => {
    const out = [];
    if (d.findingsError) out.push(h('p', { class: 'message error', role: 'alert', text: d.findingsError }));
    if (!f) return out;
    const counts = Array.isArray(f.counts) ? f.counts : [];
    const countBody = h('tbody');
    for (const c of counts) {
      countBody.append(h('tr', null, h('td', { class: 'mono', text: c.kind }), h('td', null, badgeSeverity(c.severity)), h('td', { text: fmt(c.count) })));
    }
    out.push(h('table', { class: 'counts', id: 'findings-counts' },
      h('caption', { text: 'All findings of this run, by kind and severity.' }),
      h('thead', null, h('tr', null, h('th', { scope: 'col', text: 'Kind' }), h('th', { scope: 'col', text: 'Severity' }), h('th', { scope: 'col', text: 'Count' }))),
      countBody.childElementCount ? countBody : h('tbody', null, h('tr', null, h('td', { colspan: '3', class: 'empty', text: 'none' })))));
    const list = Array.isArray(f.findings) ? f.findings : [];
    out.push(h('p', { class: 'findings-total', 'data-total': String(f.total), text: 'Showing ' + fmt(list.length) + ' of ' + fmt(f.total) + (d.severity ? ' ' + d.severity : '') + ' findings.' }));
    if (list.length) {
      const body = h('tbody');
      for (const item of list) {
        body.append(h('tr', { 'data-severity': item.severity },
          h('td', null, badgeSeverity(item.severity)),
          h('td', { class: 'mono', text: item.kind }),
          h('td', { class: 'resource', text: item.resource_id }),
          h('td', { class: 'detail' }, h('code', null, JSON.stringify(item.detail)))));
      }
      out.push(h('table', { class: 'findings', id: 'findings-table' },
        h('thead', null, h('tr', null, h('th', { scope: 'col', text: 'Severity' }), h('th', { scope: 'col', text: 'Kind' }), h('th', { scope: 'col', text: 'Resource' }), h('th', { scope: 'col', text: 'Detail' }))),
        body));
    }
    if (list.length < (f.total || 0)) {
      const more = h('button', { type: 'button', 'data-focus': 'more' }, 'Show ' + FINDINGS_PAGE + ' more');
      more.addEventListener('click', () => {
        d.limit += FINDINGS_PAGE;
        refreshFindings(true);
      });
      out.push(more);
    }
    return out;
  });
}

const SEVERITIES = new Set(['DataLoss', 'Reclaimable', 'Regenerable', 'Drift']);
function badgeSeverity(severity) {
  return h('span', { class: 'badge ' + (SEVERITIES.has(severity) ? 'sev-' + severity : 'none'), 'data-severity': severity, text: severity });
}

/* ---------- start ---------- */

state.pendingRoute = parseRoute();
if (token()) showJobs(false);
else showSignIn('');
`;
