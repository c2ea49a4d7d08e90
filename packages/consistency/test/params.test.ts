import { describe, expect, it } from 'vitest';
import { validateCheckParams, validateCheckTriggerParams } from '../src/index.js';

describe('validateCheckParams', () => {
  it('defaults to no force, no deep, and leaves batch size and throttle to the check', () => {
    const v = validateCheckParams({});
    expect(v).toEqual({ ok: true, params: {}, options: { force: false, deep: false } });
    expect(validateCheckParams(undefined).ok).toBe(true);
  });

  it('accepts typed values and query-string forms, and normalises them', () => {
    const v = validateCheckParams({
      force: 'true',
      deep: false,
      batch_size: '500',
      throttle_ms: 0,
      other: 'x',
    });
    expect(v.ok).toBe(true);
    if (!v.ok) return;
    expect(v.options).toEqual({ force: true, deep: false, batchSize: 500, throttleMs: 0 });
    expect(v.params).toEqual({ force: true, deep: false, batch_size: 500, throttle_ms: 0, other: 'x' });
  });

  it('says what was wrong and what is allowed, for every bad key at once, without throwing', () => {
    const v = validateCheckParams({ force: 'yes', batch_size: 0, throttle_ms: 60_001 });
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.message).toBe(
      'invalid consistency check params: batch_size: expected >=1 (1..10000), got 0; ' +
        'throttle_ms: expected <=60000 (0..60000), got 60001; force: expected true or false, got "yes"',
    );
    expect(validateCheckParams({ batch_size: 10_001 }).ok).toBe(false);
    expect(validateCheckParams({ batch_size: 1.5 }).ok).toBe(false);
    expect(validateCheckParams({ batch_size: 10_000 }).ok).toBe(true);
  });

  it('refuses a non-object', () => {
    const v = validateCheckParams([1]);
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.message).toBe('consistency check params must be a JSON object, got an array');
  });
});

describe('validateCheckTriggerParams (the strict rule of a new run)', () => {
  it('refuses unknown keys and names the allowed ones', () => {
    const v = validateCheckTriggerParams({ batch_size: 500, x: 'a', y: 1 });
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.message).toBe(
      'invalid consistency check params: unknown keys "x", "y"; allowed: force, deep, batch_size, throttle_ms',
    );
  });

  it('wants JSON booleans and JSON numbers, not their string forms or null', () => {
    for (const bad of [
      { force: 'maybe' },
      { force: 'true' },
      { deep: 1 },
      { batch_size: '500' },
      { throttle_ms: null },
    ]) {
      expect(validateCheckTriggerParams(bad).ok, JSON.stringify(bad)).toBe(false);
    }
    const v = validateCheckTriggerParams({ force: true, deep: false, batch_size: 500, throttle_ms: 0 });
    expect(v).toMatchObject({
      ok: true,
      options: { force: true, deep: false, batchSize: 500, throttleMs: 0 },
    });
  });

  it('leaves the lenient rule of stored runs as it was: unknown keys kept', () => {
    const stored = { force: true, deep: false, x: 'a\u0000b' };
    expect(validateCheckParams(stored)).toMatchObject({ ok: true, params: stored });
  });
});
