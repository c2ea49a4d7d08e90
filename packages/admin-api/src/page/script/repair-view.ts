/**
 * The repair panel of the `/admin/jobs` page (`/api/admin/repairs`): plan the
 * repair of selected findings (or of the findings filter), read the plan line
 * by line (action, resource, before → after, the rows it changes beyond the
 * resource, "needs a person" with why), choose where a line offers a choice
 * (the plan and its hash change), apply with the hash shown (a stale hash is
 * refused with 409: the panel says so and reloads the plan), then follow the
 * `repair` run and show each line's outcome and its re-verification.
 * The plan shown is in the address (`/admin/jobs?repair=<plan id>`), so a
 * reload or a shared link opens it again. Data is written with `textContent`
 * only.
 */
import type {
  RepairAppliedJson,
  RepairLineJson,
  RepairPlanJson,
  RunSummaryJson,
} from '../../routes/wire-types.ts';
import { byId as $, h } from './dom.ts';
import { progressBar, progressText, shortId, timeEl } from './format.ts';
import { userLabel } from './labels.ts';
import {
  derivedRowText,
  derivedText,
  idTail,
  lineOutcome,
  lineWhat,
  needsChoice,
  planLines,
  planRequest,
  planTally,
  stateText,
  type Tone,
} from './repair-lines.ts';

/** The page's request function; paths are whole (`/api/admin/repairs…`, `/api/admin/jobs…`). */
type Request = <T>(path: string, init?: { method: 'POST'; body: unknown }) => Promise<T>;
/** What a plan covers: selected finding ids, or the findings filter. */
export type RepairSelection = Parameters<typeof planRequest>[0];

const REPAIRS = '/api/admin/repairs';
const REPAIR_RUNS = '/api/admin/jobs/repair/runs';
/** How often the panel reads the plan and its run while the run is active. */
const FOLLOW_MS = 1000;
/** Run statuses the panel keeps following. */
const ACTIVE = new Set(['Running', 'CancelRequested']);
/** Derived rows listed per line (the count says how many in all). */
const DERIVED_SHOWN = 50;

let call: Request = () => Promise.reject(new Error('not started'));
/** The plan shown, its run, and a counter that drops answers for a plan no longer shown. */
const shown: { plan: RepairPlanJson | null; run: RunSummaryJson | null; key: string; generation: number } = {
  plan: null,
  run: null,
  key: '',
  generation: 0,
};
let timer: ReturnType<typeof setTimeout> | undefined;

const TONE_CLASS: Readonly<Record<Tone, string>> = { ok: 'ok', err: 'err', amber: 'Paused', none: 'none' };

function message(text: string, kind: 'status' | 'error'): void {
  $('repair-status').textContent = kind === 'status' ? text : '';
  $('repair-error').textContent = kind === 'error' ? text : '';
}

function describe(error: unknown): string {
  const e = error as { status?: number; code?: string; message?: string };
  return e.status ? `${e.code} (${e.status}): ${e.message}` : String(e.message ?? error);
}

/** Keeps `?repair=<plan id>` in the address while a plan is shown. */
function syncAddress(planId: string | null): void {
  const url = new URL(location.href);
  if (planId) url.searchParams.set('repair', planId);
  else url.searchParams.delete('repair');
  history.replaceState(history.state, '', url.pathname + url.search);
}

function stopFollowing(): void {
  clearTimeout(timer);
  timer = undefined;
}

/** Plans the repair of `selection` and shows the plan. */
export async function planRepair(selection: RepairSelection): Promise<void> {
  stopFollowing();
  const generation = ++shown.generation;
  shown.plan = null;
  shown.run = null;
  shown.key = '';
  $('repair-view').hidden = false;
  $('repair-plan').replaceChildren();
  message('Planning… nothing is changed until you apply.', 'status');
  $('repair-title').focus();
  try {
    const plan = await call<RepairPlanJson>(`${REPAIRS}/plan`, {
      method: 'POST',
      body: planRequest(selection),
    });
    if (generation !== shown.generation) return;
    syncAddress(plan.id);
    message(
      plan.lines.length === 0
        ? 'No open finding matches: nothing to repair.'
        : 'Planned. Read each line, choose where asked, then apply.',
      'status',
    );
    render(plan, null);
  } catch (error) {
    if (generation === shown.generation) message(`Could not plan the repair: ${describe(error)}`, 'error');
  }
}

/** Shows the plan `id` (and follows its run until it ends). */
export async function showRepairPlan(id: string): Promise<void> {
  stopFollowing();
  const generation = ++shown.generation;
  $('repair-view').hidden = false;
  try {
    const plan = await call<RepairPlanJson>(`${REPAIRS}/${encodeURIComponent(id)}`);
    if (generation !== shown.generation) return;
    render(plan, null);
    $('repair-title').focus();
    if (plan.run_id) void follow(generation);
  } catch (error) {
    if (generation === shown.generation) message(`Could not load plan ${id}: ${describe(error)}`, 'error');
  }
}

async function reload(generation: number): Promise<RepairPlanJson | null> {
  const id = shown.plan?.id;
  if (!id) return null;
  const plan = await call<RepairPlanJson>(`${REPAIRS}/${encodeURIComponent(id)}`);
  if (generation !== shown.generation) return null;
  render(plan, shown.run);
  return plan;
}

async function choose(line: RepairLineJson, choice: string): Promise<void> {
  const plan = shown.plan;
  if (!plan || !choice) return;
  const generation = shown.generation;
  message('Saving the choice…', 'status');
  try {
    const next = await call<RepairPlanJson>(`${REPAIRS}/${encodeURIComponent(plan.id)}/choices`, {
      method: 'POST',
      body: { choices: { [line.findingId]: choice } },
    });
    if (generation !== shown.generation) return;
    render(next, null);
    message(`Chose ${choice}: the plan and its hash changed (now ${next.hash.slice(0, 12)}…).`, 'status');
  } catch (error) {
    if (generation !== shown.generation) return;
    message(`The choice was not saved: ${describe(error)}`, 'error');
    await reload(generation).catch(() => undefined);
  }
}

async function apply(button: HTMLButtonElement): Promise<void> {
  const plan = shown.plan;
  if (!plan) return;
  const generation = shown.generation;
  button.disabled = true;
  message('Applying…', 'status');
  try {
    const started = await call<RepairAppliedJson>(`${REPAIRS}/${encodeURIComponent(plan.id)}/apply`, {
      method: 'POST',
      body: { hash: plan.hash },
    });
    if (generation !== shown.generation) return;
    message(
      `Approved. Run ${shortId(started.run_id)} applies the plan; each line shows its outcome.`,
      'status',
    );
    await follow(generation);
  } catch (error) {
    if (generation !== shown.generation) return;
    button.disabled = false;
    if ((error as { status?: number }).status === 409) {
      message(
        `Not applied: the plan is not the one shown (${describe(error)}). It has been reloaded below: read it again, then apply.`,
        'error',
      );
      const fresh = await reload(generation).catch(() => null);
      if (fresh && fresh.hash !== plan.hash) {
        $('repair-error').textContent +=
          ` The hash was ${plan.hash.slice(0, 12)}…, it is now ${fresh.hash.slice(0, 12)}….`;
      }
    } else {
      message(`Not applied: ${describe(error)}`, 'error');
    }
  }
}

/** Reads the plan and its run until the run ends (the plan is then `applied`, its lines re-verified). */
async function follow(generation: number): Promise<void> {
  stopFollowing();
  try {
    const plan = await reload(generation);
    if (!plan) return;
    const run = plan.run_id
      ? await call<RunSummaryJson>(`${REPAIR_RUNS}/${encodeURIComponent(plan.run_id)}`)
      : null;
    if (generation !== shown.generation) return;
    render(plan, run);
    if (plan.state === 'applied') {
      message(`Done: ${planTally(plan)}.`, 'status');
      return;
    }
    if (run && !ACTIVE.has(run.status) && run.status !== 'Completed') {
      message(
        run.status === 'Paused'
          ? 'The repair run is paused: resume it (Jobs, repair) to apply the rest.'
          : `The repair run ended ${run.status}${run.error_message ? `: ${run.error_message}` : ''}.`,
        'error',
      );
      return;
    }
  } catch (error) {
    if (generation !== shown.generation) return;
    $('repair-error').textContent = `Could not follow the run (retrying): ${describe(error)}`;
    const status = (error as { status?: number }).status;
    if (status === 401 || status === 403) return;
  }
  timer = setTimeout(() => void follow(generation), FOLLOW_MS);
}

function badge(text: string, cls: string, data?: Record<string, string>): HTMLElement {
  return h('span', { class: `badge ${cls}`, text, ...data });
}

function choiceCell(plan: RepairPlanJson, line: RepairLineJson, index: number): Node | string {
  if (line.type !== 'action' || !line.choices) return '—';
  if (plan.state !== 'planned') return h('code', { text: line.choice ?? 'none made' });
  const id = `repair-choice-${index}`;
  const select = h(
    'select',
    { id, 'data-focus': id, 'data-choice-for': line.findingId },
    h('option', { value: '', text: 'Choose…' }),
    line.choices.map((c) =>
      h('option', { value: c.id, text: `${c.id}: ${c.description}`, selected: c.id === line.choice }),
    ),
  );
  select.addEventListener('change', () => void choose(line, select.value));
  return h(
    'span',
    null,
    h('label', {
      class: 'visually-hidden',
      for: id,
      text: `Choice for ${line.fingerprint.kind} on ${line.resource.type} ${line.resource.id}`,
    }),
    select,
  );
}

function derivedCell(line: RepairLineJson): Node | string {
  if (line.type === 'needs_person') {
    const affected = line.affected ?? [];
    if (affected.length === 0) return '—';
    return h(
      'details',
      null,
      h('summary', { text: `${affected.length} affected` }),
      h(
        'ul',
        null,
        affected.slice(0, DERIVED_SHOWN).map((a) => h('li', { text: stateText(a) })),
      ),
    );
  }
  const rows = line.derived ?? [];
  if (rows.length === 0) return '—';
  return h(
    'details',
    null,
    h('summary', { text: derivedText(rows) }),
    h(
      'ul',
      null,
      rows.slice(0, DERIVED_SHOWN).map((r) => h('li', { text: derivedRowText(r) })),
      rows.length > DERIVED_SHOWN ? h('li', { text: `… ${rows.length - DERIVED_SHOWN} more` }) : null,
    ),
  );
}

function lineRow(plan: RepairPlanJson, line: RepairLineJson, index: number): HTMLTableRowElement {
  const outcome = lineOutcome(line);
  return h(
    'tr',
    { 'data-finding': line.findingId, 'data-status': line.status, 'data-outcome': outcome.key },
    h('td', { text: String(index + 1) }),
    h(
      'td',
      null,
      h('code', { text: line.fingerprint.kind }),
      h('div', { class: 'meta', text: line.fingerprint.checkName }),
    ),
    h(
      'td',
      { class: 'resource', title: line.resource.id },
      `${line.resource.type} `,
      h('code', { text: idTail(line.resource.id) }),
    ),
    h(
      'td',
      null,
      line.type === 'action' ? h('code', { text: line.action ?? '' }) : badge('needs a person', 'Paused'),
    ),
    h('td', { class: 'repair-what', text: lineWhat(line) }),
    h('td', null, derivedCell(line)),
    h('td', null, choiceCell(plan, line, index)),
    h(
      'td',
      { class: 'repair-outcome' },
      badge(outcome.label, TONE_CLASS[outcome.tone], { 'data-outcome': outcome.key }),
      outcome.note ? h('div', { class: 'meta', text: outcome.note }) : null,
    ),
  );
}

function runBlock(plan: RepairPlanJson, run: RunSummaryJson | null): Array<Node | string> {
  if (!plan.run_id) return [];
  const p = run?.progress;
  return [
    h(
      'h3',
      null,
      'Run ',
      h('span', { class: 'mono', text: shortId(plan.run_id) }),
      ' ',
      run ? h('span', { class: `badge ${run.status}`, 'data-status': run.status, text: run.status }) : '',
    ),
    h(
      'div',
      { class: 'progress-line' },
      progressBar(p, `Progress of repair run ${shortId(plan.run_id)}`),
      h('span', { class: 'progress-text', 'data-progress': String(p ? p.processed : '') }, progressText(p)),
      h('a', {
        href: `/admin/jobs/repair/runs/${encodeURIComponent(plan.run_id)}`,
        text: 'Open the run in Jobs',
      }),
    ),
    run?.started_at ? h('p', { class: 'meta' }, 'started ', timeEl(run.started_at)) : '',
  ];
}

/** Renders the plan (only when it changed), keeping the focus on the same control. */
function render(plan: RepairPlanJson, run: RunSummaryJson | null): void {
  shown.plan = plan;
  shown.run = run;
  const key = JSON.stringify([plan, run?.status, run?.progress]);
  if (key === shown.key) return;
  shown.key = key;
  const box = $('repair-plan');
  const active = document.activeElement;
  const focusKey = active && box.contains(active) ? active.getAttribute('data-focus') : null;
  const lines = planLines(plan);
  const actionable = lines.filter((l) => l.type === 'action').length;
  const unchosen = lines.filter(needsChoice).length;
  const applyButton = h('button', {
    type: 'button',
    class: 'primary',
    id: 'repair-apply',
    'data-focus': 'apply',
    'aria-describedby': 'repair-hash',
    text: 'Apply this plan',
    disabled: actionable === 0,
  });
  applyButton.addEventListener('click', () => void apply(applyButton));
  const th = (text: string) => h('th', { scope: 'col', text });
  const field = (label: string, value: Node | string) => [h('dt', { text: label }), h('dd', null, value)];
  box.replaceChildren(
    h(
      'dl',
      { class: 'fields' },
      field('Plan', h('code', { text: plan.id })),
      field(
        'State',
        badge(plan.state, plan.state === 'applied' ? 'ok' : plan.state === 'approved' ? 'Running' : 'none', {
          'data-state': plan.state,
        }),
      ),
      field(
        'Planned by',
        h(
          'span',
          { class: 'by' },
          userLabel(plan.created_by, plan.created_by_name),
          ' ',
          timeEl(plan.created_at),
        ),
      ),
      field('Approved by', userLabel(plan.approved_by, plan.approved_by_name)),
      field('Hash', h('code', { id: 'repair-hash', 'data-hash': plan.hash, text: plan.hash })),
      field('Lines', planTally(plan)),
    ),
    unchosen > 0 && plan.state === 'planned'
      ? h('p', {
          id: 'repair-unchosen',
          class: 'message error',
          text: `${unchosen} line(s) offer a choice: choose below. Applied without one, a line is skipped.`,
        })
      : '',
    lines.length === 0
      ? h('p', { class: 'empty', text: 'No open finding matched.' })
      : h(
          'div',
          { class: 'table-scroll' },
          h(
            'table',
            { id: 'repair-lines', class: 'repair-lines' },
            h('caption', {
              text: 'One line per finding. "Also changes" lists the rows it changes beyond the resource.',
            }),
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                [
                  '#',
                  'Finding',
                  'Resource',
                  'Action',
                  'Before → after',
                  'Also changes',
                  'Choice',
                  'Outcome',
                ].map(th),
              ),
            ),
            h(
              'tbody',
              null,
              lines.map((l, i) => lineRow(plan, l, i)),
            ),
          ),
        ),
    plan.state === 'planned' ? h('div', { class: 'actions' }, applyButton) : '',
    ...runBlock(plan, run),
  );
  if (focusKey) box.querySelector<HTMLElement>(`[data-focus="${CSS.escape(focusKey)}"]`)?.focus();
}

/** Wires the panel; `request` is the page's request function (whole paths). */
export function startRepairView(request: Request): void {
  call = request;
  $('repair-close').addEventListener('click', () => {
    stopFollowing();
    shown.generation += 1;
    shown.plan = null;
    syncAddress(null);
    $('repair-view').hidden = true;
    $('findings-list-title').focus();
  });
}
