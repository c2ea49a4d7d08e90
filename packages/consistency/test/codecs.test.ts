import { describe, expect, it } from 'vitest';
import { effectiveGraceMs, graceBoundary } from '../src/index.js';

describe('grace', () => {
  it('counts back from the run start, not from now', () => {
    const startedAt = new Date('2026-01-01T12:00:00Z');
    expect(graceBoundary(startedAt, 3_600_000).toISOString()).toBe('2026-01-01T11:00:00.000Z');
    expect(graceBoundary(startedAt, 0)).toEqual(startedAt);
    expect(() => graceBoundary(startedAt, -1)).toThrow(RangeError);
  });
  it('force makes the grace 0', () => {
    const check = { graceWindowMs: () => 3_600_000 };
    expect(effectiveGraceMs(check, { force: false, deep: false })).toBe(3_600_000);
    expect(effectiveGraceMs(check, { force: true, deep: false })).toBe(0);
  });
});
