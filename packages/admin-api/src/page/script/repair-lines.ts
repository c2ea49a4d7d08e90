/**
 * The words of the repair panel, without the DOM: what a plan line will do,
 * what it changes beyond its resource, and what became of it (applied,
 * already consistent, skipped with the reason, re-verified fixed or still
 * open with the reason).
 * Pure functions over the admin API's JSON, unit-tested in
 * `../repair-lines.test.ts`.
 */
import type { RepairDerivedRowJson, RepairLineJson, RepairPlanJson } from '../../routes/wire-types.ts';

/** The badge tone of an outcome: the page's badge classes (`ok`, `err`, `Paused` = amber, `none`). */
export type Tone = 'ok' | 'err' | 'amber' | 'none';

/** A line's outcome as the panel shows it: a badge and, where there is one, the reason. */
export interface LineOutcome {
  /**
   * `pending`, `applied`, `already_consistent`, `skipped`, `needs_person`,
   * `fixed`, `still_open`: for tests and styling.
   */
  readonly key: string;
  readonly label: string;
  readonly tone: Tone;
  readonly note: string;
}

/** The plan's lines with their known fields (the schema keeps them open). */
export function planLines(plan: RepairPlanJson): RepairLineJson[] {
  return plan.lines as unknown as RepairLineJson[];
}

/** A state snapshot as `key value, key value` (ids and lists kept short). */
export function stateText(state: Readonly<Record<string, unknown>> | undefined): string {
  if (!state) return '';
  return Object.entries(state)
    .map(([k, v]) => {
      const value = Array.isArray(v)
        ? `[${v.length}]`
        : typeof v === 'number'
          ? v.toLocaleString('en-US')
          : v === null
            ? 'null'
            : typeof v === 'object'
              ? JSON.stringify(v)
              : String(v);
      return `${k.replace(/_/g, ' ')} ${value}`;
    })
    .join(', ');
}

/** What the line does: the action's summary, or why it needs a person. */
export function lineWhat(line: RepairLineJson): string {
  if (line.type === 'needs_person') return line.reason ?? 'no safe action';
  return line.summary || `${stateText(line.before)} → ${stateText(line.after)}`;
}

/** The rows a line changes beyond its resource, grouped: `3 folders, 1 drive`; empty without any. */
export function derivedText(rows: readonly RepairDerivedRowJson[] | undefined): string {
  if (!rows || rows.length === 0) return '';
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.type, (counts.get(r.type) ?? 0) + 1);
  return [...counts].map(([type, n]) => `${n} ${type}${n === 1 ? '' : 's'}`).join(', ');
}

/**
 * An id's tail (`…1536e928a6a3`, random in a UUIDv7): the ids are UUIDv7,
 * whose heads are their creation time and alike for rows made together.
 */
export function idTail(id: string): string {
  return id.length > 12 ? `…${id.slice(-12)}` : id;
}

/** One derived row: `folder …1536e928a6a3 is trashed true → false`. */
export function derivedRowText(row: RepairDerivedRowJson): string {
  return `${row.type} ${idTail(row.id)} ${stateText(row.before)} → ${stateText(row.after)}`;
}

/** Whether the line waits for the operator's choice. */
export function needsChoice(line: RepairLineJson): boolean {
  return line.type === 'action' && line.choices !== undefined && !line.choice;
}

/** What became of a line (before the run: pending, or needs a person). */
export function lineOutcome(line: RepairLineJson): LineOutcome {
  switch (line.status) {
    case 'needs_person':
      return { key: 'needs_person', label: 'needs a person', tone: 'amber', note: line.reason ?? '' };
    case 'skipped':
      return { key: 'skipped', label: 'skipped', tone: 'amber', note: line.skip_reason ?? '' };
    case 'already_consistent':
      if (line.verified && line.verified !== 'passed') {
        return {
          key: 'still_open',
          label: 'still open',
          tone: 'err',
          note: `already consistent when applied, but the re-check fails: ${line.verified}`,
        };
      }
      return {
        key: 'already_consistent',
        label: 'already consistent',
        tone: 'ok',
        note: 'already right when the run reached it: nothing written',
      };
    case 'applied':
      if (line.verified === 'passed') {
        return { key: 'fixed', label: 'fixed', tone: 'ok', note: 'applied, re-verified' };
      }
      if (line.verified) {
        return {
          key: 'still_open',
          label: 'still open',
          tone: 'err',
          note: `applied, but the re-check fails: ${line.verified}`,
        };
      }
      return { key: 'applied', label: 'applied', tone: 'none', note: 're-check pending' };
    default:
      return needsChoice(line)
        ? {
            key: 'pending',
            label: 'choose first',
            tone: 'amber',
            note: 'apply skips it until a choice is made',
          }
        : { key: 'pending', label: 'pending', tone: 'none', note: '' };
  }
}

/** The plan's tally in words: `2 applied (2 fixed), 1 already consistent, 1 skipped, 1 needs a person`. */
export function planTally(plan: RepairPlanJson): string {
  const lines = planLines(plan);
  const count = (p: (l: RepairLineJson) => boolean) => lines.filter(p).length;
  const applied = count((l) => l.status === 'applied');
  const fixed = count((l) => l.status === 'applied' && l.verified === 'passed');
  const open = count((l) => l.status === 'applied' && !!l.verified && l.verified !== 'passed');
  const parts = [
    [count((l) => l.status === 'pending'), 'pending'],
    [applied, `applied${applied ? ` (${fixed} fixed${open ? `, ${open} still open` : ''})` : ''}`],
    [count((l) => l.status === 'already_consistent'), 'already consistent'],
    [count((l) => l.status === 'skipped'), 'skipped'],
    [count((l) => l.status === 'needs_person'), 'need a person'],
  ] as const;
  const text = parts
    .filter(([n]) => n > 0)
    .map(([n, what]) => `${n} ${what}`)
    .join(', ');
  return `${lines.length} line${lines.length === 1 ? '' : 's'}${text ? `: ${text}` : ''}`;
}

/** A plan by filter: the open findings of this check, kind and severity (at least one). */
export interface RepairFilter {
  check?: string;
  kind?: string;
  severity?: string;
}

/** The body of `POST /api/admin/repairs/plan` for selected finding ids, or for the findings filter. */
export function planRequest(
  selection: { readonly ids: readonly string[] } | Readonly<RepairFilter>,
): { finding_ids: string[] } | { filter: RepairFilter } {
  if ('ids' in selection) return { finding_ids: [...selection.ids] };
  const filter: RepairFilter = {};
  if (selection.check) filter.check = selection.check;
  if (selection.kind) filter.kind = selection.kind;
  if (selection.severity) filter.severity = selection.severity;
  return { filter };
}
