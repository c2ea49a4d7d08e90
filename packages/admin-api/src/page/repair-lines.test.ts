import { describe, expect, it } from 'vitest';
import type { RepairLineJson, RepairPlanJson } from '../routes/wire-types.js';
import {
  derivedRowText,
  derivedText,
  lineOutcome,
  lineWhat,
  needsChoice,
  planRequest,
  planTally,
  stateText,
} from './script/repair-lines.ts';

const FINDING = '0193a000-0000-7000-8000-000000000001';

function line(overrides: Partial<RepairLineJson> = {}): RepairLineJson {
  return {
    type: 'action',
    findingId: FINDING,
    fingerprint: { checkName: 'drives_consistency', kind: 'drive_used_bytes_drift', resourceId: 'd1' },
    resource: { type: 'drive', id: '0193b000-0000-7000-8000-00000000000d' },
    action: 'recompute_drive_used_bytes',
    summary: 'used_bytes 10,485,760 → 10,489,856',
    before: { used_bytes: 10485760 },
    after: { used_bytes: 10489856 },
    derived: [],
    status: 'pending',
    skip_reason: null,
    verified: null,
    ...overrides,
  };
}

function plan(lines: RepairLineJson[]): RepairPlanJson {
  return {
    id: 'p',
    hash: 'a'.repeat(64),
    state: 'planned',
    selection: {},
    created_by: 'root',
    created_by_name: null,
    created_at: '2026-12-01T12:00:00.000Z',
    approved_by: null,
    approved_by_name: null,
    run_id: null,
    unchosen: 0,
    lines: lines as unknown as RepairPlanJson['lines'],
  };
}

describe('the repair panel words', () => {
  it('say what a line does: its summary, else before → after; a needs-a-person line says why', () => {
    expect(lineWhat(line())).toBe('used_bytes 10,485,760 → 10,489,856');
    expect(lineWhat(line({ summary: '' }))).toBe('used bytes 10,485,760 → used bytes 10,489,856');
    expect(
      lineWhat(
        line({ type: 'needs_person', reason: 'no copy of the bytes anywhere', status: 'needs_person' }),
      ),
    ).toBe('no copy of the bytes anywhere');
    expect(stateText({ trashed_ancestors: ['a', 'b'], trashed: true, owner: null })).toBe(
      'trashed ancestors [2], trashed true, owner null',
    );
  });

  it('count the rows changed beyond the resource by type, and show each one', () => {
    const rows = [
      { type: 'folder', id: '0193c0000000', before: { is_trashed: true }, after: { is_trashed: false } },
      { type: 'folder', id: '0193c0000001', before: { is_trashed: true }, after: { is_trashed: false } },
      { type: 'drive', id: '0193d0000000', before: { used_bytes: 1 }, after: { used_bytes: 2048 } },
    ];
    expect(derivedText(rows)).toBe('2 folders, 1 drive');
    expect(derivedText([])).toBe('');
    expect(derivedRowText(rows[2]!)).toBe('drive 0193d0000000 used bytes 1 → used bytes 2,048');
    expect(
      derivedRowText({ ...rows[2]!, id: '01a23194-43f2-73ab-8305-1536e928a6a3' }).startsWith(
        'drive …1536e928a6a3 ',
      ),
    ).toBe(true);
  });

  it('give each status its outcome: pending, choose first, skipped with why, fixed or still open with why', () => {
    expect(lineOutcome(line())).toMatchObject({ key: 'pending', tone: 'none' });
    const choosing = line({ choices: [{ id: 'restore_parent', description: 'restore' }], choice: null });
    expect(needsChoice(choosing)).toBe(true);
    expect(lineOutcome(choosing)).toMatchObject({ key: 'pending', label: 'choose first', tone: 'amber' });
    expect(needsChoice({ ...choosing, choice: 'restore_parent' })).toBe(false);
    expect(lineOutcome(line({ status: 'skipped', skip_reason: 'changed since the plan (x)' }))).toEqual({
      key: 'skipped',
      label: 'skipped',
      tone: 'amber',
      note: 'changed since the plan (x)',
    });
    expect(lineOutcome(line({ status: 'applied' }))).toMatchObject({ key: 'applied', tone: 'none' });
    expect(lineOutcome(line({ status: 'applied', verified: 'passed' }))).toMatchObject({
      key: 'fixed',
      tone: 'ok',
    });
    expect(lineOutcome(line({ status: 'applied', verified: 'used_bytes 12 ≠ 10' }))).toMatchObject({
      key: 'still_open',
      tone: 'err',
      note: 'applied, but the re-check fails: used_bytes 12 ≠ 10',
    });
    expect(lineOutcome(line({ status: 'already_consistent', verified: 'passed' }))).toEqual({
      key: 'already_consistent',
      label: 'already consistent',
      tone: 'ok',
      note: 'already right when the run reached it: nothing written',
    });
    expect(lineOutcome(line({ status: 'already_consistent', verified: 'used_bytes 12 ≠ 10' }))).toMatchObject(
      {
        key: 'still_open',
        tone: 'err',
      },
    );
    expect(
      lineOutcome(line({ type: 'needs_person', status: 'needs_person', reason: 'no bytes anywhere' })),
    ).toMatchObject({ key: 'needs_person', note: 'no bytes anywhere' });
  });

  it('tally a plan in words', () => {
    expect(planTally(plan([]))).toBe('0 lines');
    expect(
      planTally(
        plan([
          line({ status: 'applied', verified: 'passed' }),
          line({ status: 'applied', verified: 'still wrong' }),
          line({ status: 'already_consistent', verified: 'passed' }),
          line({ status: 'skipped', skip_reason: 'changed' }),
          line({ type: 'needs_person', status: 'needs_person' }),
        ]),
      ),
    ).toBe('5 lines: 2 applied (1 fixed, 1 still open), 1 already consistent, 1 skipped, 1 need a person');
    expect(planTally(plan([line()]))).toBe('1 line: 1 pending');
  });

  it('ask for a plan by ids, or by the filter without its empty fields', () => {
    expect(planRequest({ ids: [FINDING] })).toEqual({ finding_ids: [FINDING] });
    expect(planRequest({ check: 'folders_consistency', kind: '', severity: 'Drift' })).toEqual({
      filter: { check: 'folders_consistency', severity: 'Drift' },
    });
  });
});
