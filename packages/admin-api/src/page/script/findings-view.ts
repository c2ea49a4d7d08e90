/**
 * The findings list of the `/admin/jobs` page (findings across runs,
 * `/api/admin/findings*`; the health cards above it are `health-view.ts`):
 * the findings, filterable, each with its detail as readable fields, its
 * history, and accept / false-positive with a comment; findings picked by
 * their checkboxes, the filter, or one finding's detail go to the repair
 * panel (`repair-view.ts`) as a plan. Data is written with `textContent` only.
 */
import type {
  FindingDetailJson,
  TrackedFindingJson,
  TrackedFindingsPageJson,
} from '../../routes/wire-types.ts';
import { byId as $, h } from './dom.ts';
import { fmt, relative, severityBadge, shortId, timeEl } from './format.ts';
import { refreshHealth } from './health-view.ts';
import { idEnd, userLabel } from './labels.ts';
import { planRepair } from './repair-view.ts';

/** The page's one request function (its auth handling included), on `/api/admin/findings`. */
type Request = <T>(path: string, init?: { method: 'POST'; body: unknown }) => Promise<T>;
let call: Request = () => Promise.reject(new Error('not started'));
let nextCursor: string | null = null;
let selected: string | null = null;
/** The findings picked for a repair plan (by their checkboxes), across pages of the list. */
const picked = new Set<string>();
/** States a repair plan covers. */
const REPAIRABLE = new Set(['open', 'reopened']);

/** Bytes as `1,234 B (1.2 KiB)`. */
export function bytes(n: number): string {
  const abs = Math.abs(n);
  if (abs < 1024) return `${fmt(n)} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = abs;
  let unit = 'B';
  for (const u of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = u;
  }
  return `${fmt(n)} B (${n < 0 ? '-' : ''}${value.toFixed(1)} ${unit})`;
}

const BYTE_KEYS = /(bytes|size|delta|recorded|actual)$/;

/** A detail value in words: sizes in bytes and KiB/MiB, id lists as codes. */
function detailValue(key: string, value: unknown): Node | string {
  if (typeof value === 'number' && BYTE_KEYS.test(key) && !/count/.test(key)) return bytes(value);
  if (Array.isArray(value)) {
    return h(
      'span',
      null,
      ...value.slice(0, 50).flatMap((v, i) => [i > 0 ? ', ' : '', h('code', { text: String(v) })]),
    );
  }
  if (value === null || value === undefined) return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function filterFields(): { severity: string; check: string; kind: string } {
  return {
    severity: $<HTMLSelectElement>('f-severity').value,
    check: $<HTMLInputElement>('f-check').value.trim(),
    kind: $<HTMLInputElement>('f-kind').value.trim(),
  };
}

/** Updates the "Plan repair for the selected" button with the count. */
function syncPicked(): void {
  const button = $<HTMLButtonElement>('plan-selected');
  button.disabled = picked.size === 0;
  button.textContent = `Plan repair for the selected (${fmt(picked.size)})`;
}

function pickBox(f: TrackedFindingJson): HTMLElement {
  const box = h('input', {
    type: 'checkbox',
    'data-pick': f.id,
    'aria-label': `Select ${f.kind} on ${f.resource_id} for a repair plan`,
    checked: picked.has(f.id),
    disabled: !REPAIRABLE.has(f.state),
    title: REPAIRABLE.has(f.state) ? undefined : `a repair plan covers open findings; this one is ${f.state}`,
  });
  box.addEventListener('click', (event) => event.stopPropagation());
  box.addEventListener('change', () => {
    const input = box as HTMLInputElement;
    if (input.checked) picked.add(f.id);
    else picked.delete(f.id);
    syncPicked();
  });
  return h('td', null, box);
}

/** Plans the open findings of the filter (check, kind, severity; the state filter does not apply). */
function planFilter(): void {
  const { severity, check, kind } = filterFields();
  if (!severity && !check && !kind) {
    $('findings-error').textContent =
      'Set a check, kind or severity first: a plan by filter covers every open finding that matches it.';
    return;
  }
  $('findings-error').textContent = '';
  void planRepair({
    ...(severity ? { severity } : {}),
    ...(check ? { check } : {}),
    ...(kind ? { kind } : {}),
  });
}

function filterQuery(): string {
  const q = new URLSearchParams();
  const state = $<HTMLSelectElement>('f-state').value;
  const severity = $<HTMLSelectElement>('f-severity').value;
  const { check, kind } = filterFields();
  if (state) q.set('state', state);
  if (severity) q.set('severity', severity);
  if (check) q.set('check', check);
  if (kind) q.set('kind', kind);
  q.set('limit', '50');
  return q.toString();
}

function findingRow(f: TrackedFindingJson): HTMLTableRowElement {
  return h(
    'tr',
    { tabindex: 0, 'data-finding': f.id, onclick: () => void showFinding(f.id) },
    pickBox(f),
    h('td', null, severityBadge(f.severity)),
    h('td', { text: f.state }),
    h('td', { text: f.check }),
    h('td', null, h('code', { text: f.kind })),
    h('td', { class: 'resource' }, h('code', { title: f.resource_id, text: idEnd(f.resource_id) })),
    h('td', null, timeEl(f.last_seen_at)),
  );
}

/** Loads the first page (or, with `more`, the next one) of the findings list. */
export async function loadFindings(more = false): Promise<void> {
  try {
    const page = await call<TrackedFindingsPageJson>(
      `?${filterQuery()}${more && nextCursor ? `&cursor=${encodeURIComponent(nextCursor)}` : ''}`,
    );
    $('findings-error').textContent = '';
    nextCursor = page.next_cursor;
    $('findings-more').hidden = nextCursor === null;
    if (!more) picked.clear();
    syncPicked();
    const body = more ? $('tracked-findings').querySelector('tbody') : null;
    const rows = page.findings.map(findingRow);
    if (body) body.append(...rows);
    else if (rows.length === 0)
      $('tracked-findings').replaceChildren(h('p', { class: 'empty', text: 'No findings match.' }));
    else {
      $('tracked-findings').replaceChildren(
        h(
          'table',
          { id: 'tracked-findings-table' },
          h('caption', { text: 'Worst severity first, then most recently seen. Select one for its detail.' }),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              h('th', { scope: 'col' }, h('span', { class: 'visually-hidden', text: 'Select' })),
              ['Severity', 'State', 'Check', 'Kind', 'Resource', 'Last seen'].map((t) =>
                h('th', { scope: 'col', text: t }),
              ),
            ),
          ),
          h('tbody', null, rows),
        ),
      );
    }
  } catch (error) {
    $('findings-error').textContent = `Could not load the findings: ${(error as Error).message}`;
  }
}

async function decide(id: string, action: 'accept' | 'false-positive', form: HTMLFormElement): Promise<void> {
  const comment = (form.elements.namedItem('comment') as HTMLTextAreaElement).value;
  const until = (form.elements.namedItem('until') as HTMLInputElement | null)?.value ?? '';
  const status = form.querySelector('.decision-status') as HTMLElement;
  try {
    await call(`/${id}/${action}`, {
      method: 'POST',
      body: { comment, ...(action === 'accept' && until ? { until: new Date(until).toISOString() } : {}) },
    });
    status.textContent = action === 'accept' ? 'Accepted.' : 'Marked as a false positive.';
    await Promise.all([showFinding(id), loadFindings(), refreshHealth()]);
  } catch (error) {
    status.textContent = `Refused: ${(error as Error).message}`;
  }
}

/** Shows one finding's detail: readable fields, decision form, history. */
export async function showFinding(id: string): Promise<void> {
  selected = id;
  const box = $('finding-detail');
  try {
    const f = await call<FindingDetailJson>(`/${id}`);
    if (selected !== id) return;
    const field = (label: string, value: Node | string) => [h('dt', { text: label }), h('dd', null, value)];
    const form = h(
      'form',
      { class: 'decision', onsubmit: (e: Event) => e.preventDefault() },
      h('label', { for: 'decision-comment', text: 'Comment (why; required)' }),
      h('textarea', { id: 'decision-comment', name: 'comment', maxlength: 2000 }),
      h(
        'div',
        { class: 'row' },
        h('label', { for: 'decision-until', text: 'Accept until (optional)' }),
        h('input', { id: 'decision-until', name: 'until', type: 'datetime-local' }),
        h('button', {
          type: 'button',
          id: 'decision-accept',
          text: 'Accept',
          onclick: () => void decide(id, 'accept', form),
        }),
        h('button', {
          type: 'button',
          id: 'decision-false-positive',
          text: 'False positive',
          onclick: () => void decide(id, 'false-positive', form),
        }),
        h('span', { class: 'decision-status', role: 'status' }),
      ),
    );
    box.hidden = false;
    box.replaceChildren(
      h('h3', { text: `${f.kind} on ${f.resource_id}` }),
      h(
        'dl',
        { class: 'fields' },
        field('State', `${f.state}${f.accept_until ? ` until ${f.accept_until}` : ''}`),
        field('Check', f.check),
        field(
          'Severity',
          f.highest_severity !== f.severity ? `${f.severity} (was ${f.highest_severity})` : f.severity,
        ),
        field('Resource', h('code', { text: f.resource_id })),
        // What the kind means and the unit of its magnitude, as its check declares them.
        f.kind_declaration ? field('Kind', f.kind_declaration.meaning) : [],
        field(
          'Magnitude',
          f.magnitude === null
            ? '-'
            : f.kind_declaration?.magnitude === 'bytes'
              ? bytes(f.magnitude)
              : fmt(f.magnitude),
        ),
        field(
          'First seen',
          h('span', null, timeEl(f.first_seen_at), ` (run ${shortId(f.first_seen_run_id ?? 'pruned')})`),
        ),
        field(
          'Last seen',
          h('span', null, timeEl(f.last_seen_at), ` (run ${shortId(f.last_seen_run_id ?? 'pruned')})`),
        ),
        field(
          'Changed',
          `${relative(f.state_changed_at)} by ${userLabel(f.state_changed_by, f.state_changed_by_name)}`,
        ),
        field('Comment', f.comment ?? '-'),
        Object.entries(f.detail).flatMap(([k, v]) => field(k.replace(/_/g, ' '), detailValue(k, v))),
      ),
      ...(f.state === 'fixed' ? [] : [form]),
      REPAIRABLE.has(f.state)
        ? h(
            'div',
            { class: 'actions' },
            h('button', {
              type: 'button',
              id: 'finding-plan-repair',
              text: 'Plan repair of this finding',
              onclick: () => void planRepair({ ids: [id] }),
            }),
          )
        : '',
      h('h3', { text: 'History' }),
      h(
        'table',
        null,
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ['When', 'Event', 'State', 'By', 'Comment'].map((t) => h('th', { scope: 'col', text: t })),
          ),
        ),
        h(
          'tbody',
          null,
          f.events.map((e) =>
            h(
              'tr',
              null,
              h('td', null, timeEl(e.at)),
              h('td', { text: e.event }),
              h('td', { text: e.state }),
              h('td', { class: 'by', title: e.actor, text: userLabel(e.actor, e.actor_name) }),
              h('td', { text: e.comment ?? '' }),
            ),
          ),
        ),
      ),
      h('p', { class: 'meta', text: `Seen by ${f.sightings.length} run(s) still kept.` }),
    );
  } catch (error) {
    box.hidden = false;
    box.replaceChildren(
      h('p', { class: 'message error', text: `Could not load the finding: ${(error as Error).message}` }),
    );
  }
}

/** Wires the filters; `request` is the page's request function on `/api/admin/findings`. */
export function startFindingsView(request: Request): void {
  call = request;
  $('findings-filters').addEventListener('submit', (event) => {
    event.preventDefault();
    void loadFindings();
  });
  $('findings-more').addEventListener('click', () => void loadFindings(true));
  $('plan-selected').addEventListener('click', () => void planRepair({ ids: [...picked] }));
  $('plan-filter').addEventListener('click', planFilter);
}
