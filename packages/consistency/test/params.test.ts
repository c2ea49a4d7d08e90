import { describe, expect, it } from 'vitest';
import { validateCheckParams, validateCheckTriggerParams } from '../src/index.js';

describe('validateCheckParams', () => {
  it('defaults to no force, no deep, and leaves batch size and throttle to the check', () => {
    const v = validateCheckParams({});
    expect(v).toEqual({ ok: true, params: {}, options: { force: false, deep: false } });
    expect(validateCheckParams(undefined).ok).toBe(true);
  });

  it('accepts typed values and query-string forms, normalises them, and takes force/deep from the run options', () => {
    const v = validateCheckParams(
      { batch_size: '500', throttle_ms: 0, other: 'x' },
      { runOptions: { force: true, deep: false } },
    );
    expect(v.ok).toBe(true);
    if (!v.ok) return;
    expect(v.options).toEqual({ force: true, deep: false, batchSize: 500, throttleMs: 0 });
    expect(v.params).toEqual({ batch_size: 500, throttle_ms: 0, other: 'x' });
    // A stored row's option keys are not params: left out, never refused or read.
    expect(validateCheckParams({ force: 'yes', deep: true })).toEqual({
      ok: true,
      params: {},
      options: { force: false, deep: false },
    });
  });

  it('says what was wrong and what is allowed, for every bad key at once, without throwing', () => {
    const v = validateCheckParams({ batch_size: 0, throttle_ms: 60_001 });
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.message).toBe(
      'invalid consistency check params: batch_size: expected >=1 (1..10000), got 0; ' +
        'throttle_ms: expected <=60000 (0..60000), got 60001',
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

  it('wants JSON numbers, not their string forms or null (force/deep are checked by the trigger)', () => {
    for (const bad of [{ batch_size: '500' }, { throttle_ms: null }]) {
      expect(validateCheckTriggerParams(bad).ok, JSON.stringify(bad)).toBe(false);
    }
    const v = validateCheckTriggerParams({ batch_size: 500, throttle_ms: 0 });
    expect(v).toMatchObject({
      ok: true,
      options: { force: false, deep: false, batchSize: 500, throttleMs: 0 },
    });
  });

  it('leaves the lenient rule of stored runs as it was: unknown keys kept', () => {
    const stored = { batch_size: 10, x: 'a\u0000b' };
    expect(validateCheckParams(stored)).toMatchObject({ ok: true, params: stored });
  });
});
