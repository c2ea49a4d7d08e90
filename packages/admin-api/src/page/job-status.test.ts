import { describe, expect, it } from 'vitest';
import { outcomeStatus } from './script/job-status.ts';

describe('outcomeStatus', () => {
  it('shows a run cancelled to Paused as Paused, not ok', () => {
    expect(
      outcomeStatus({ kind: 'ok', count: 7, extra: { paused: true, cursor_hex: '0a', run_id: 'r' } }),
    ).toBe('Paused');
    expect(outcomeStatus({ kind: 'ok', count: 7, extra: { completed: true, run_id: 'r' } })).toBe('ok');
    expect(outcomeStatus({ kind: 'ok', count: 0, extra: { skipped: 'already_running' } })).toBe('skipped');
    expect(outcomeStatus({ kind: 'err', message: 'boom' })).toBe('err');
  });
});
