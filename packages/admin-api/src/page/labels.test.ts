import { describe, expect, it } from 'vitest';
import { idEnd, outcomeStatus, userLabel } from './script/labels.ts';

/** Two UUIDv7s made in the same minute: the same first 8 (and 12) digits, as the page used to show them. */
const FIRST = '01a23341-5c7e-7a10-8f3e-2b9c4d1e0a71';
const SECOND = '01a23341-5c7f-7b22-9d04-77e1a0c3f5b9';

describe('the page words for ids, users and outcomes', () => {
  it('tells two UUIDv7s with the same leading digits apart by their ends', () => {
    expect(FIRST.slice(0, 8)).toBe(SECOND.slice(0, 8));
    expect(idEnd(FIRST)).toBe('…2b9c4d1e0a71');
    expect(idEnd(SECOND)).toBe('…77e1a0c3f5b9');
    expect(idEnd(FIRST)).not.toBe(idEnd(SECOND));
    // A blob hash by its first 12 digits; a short id as it is.
    expect(idEnd('c552d26e924e129f336ff5b8452ec71f4ae21ad7e30540c8db46c871d26085a7')).toBe('c552d26e924e…');
    expect(idEnd('sha256:abc')).toBe('sha256:abc');
  });

  it('names a user by the name the API resolved, else by the id (system) or the user id end', () => {
    expect(userLabel(FIRST, 'ada')).toBe('ada');
    expect(userLabel(FIRST, 'grace@example.org')).toBe('grace@example.org');
    expect(userLabel(FIRST, null)).toBe('…2b9c4d1e0a71');
    expect(userLabel('system', null)).toBe('system');
    expect(userLabel(null)).toBe('—');
  });

  it('shows a run cancelled to Paused as Paused, not ok', () => {
    expect(
      outcomeStatus({ kind: 'ok', count: 7, extra: { paused: true, cursor_hex: '0a', run_id: 'r' } }),
    ).toBe('Paused');
    expect(outcomeStatus({ kind: 'ok', count: 7, extra: { completed: true, run_id: 'r' } })).toBe('ok');
    expect(outcomeStatus({ kind: 'ok', count: 0, extra: { skipped: 'already_running' } })).toBe('skipped');
    expect(outcomeStatus({ kind: 'err', message: 'boom' })).toBe('err');
  });
});
