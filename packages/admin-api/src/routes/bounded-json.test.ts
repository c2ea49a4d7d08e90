import type { RunSummary } from '@oxicloud/recoverable';
import { describe, expect, it } from 'vitest';
import { boundedJsonObject, fitString, jsonBytes } from './bounded-json.js';
import { runListEntry } from './run-list-entry.js';

const hostile = '\u0001"\\😀\ud800';

function run(overrides: Partial<RunSummary>): RunSummary {
  return {
    run_id: '018f2c1e-0000-7000-8000-000000000000',
    job_name: 'files_consistency',
    status: 'Failed',
    started_at: '2026-12-01T00:00:00.000Z',
    last_progress_at: '2026-12-01T00:00:00.000Z',
    completed_at: '2026-12-01T00:00:00.000Z',
    cursor_hex: null,
    stats: {},
    params: {},
    error_message: null,
    pause_reason: null,
    pauses: [],
    active_ms: 0,
    wall_ms: 0,
    owner_node: 'web-1:4127:9f03ac',
    attempt: 1,
    lease_until: null,
    progress: {
      processed: 1e15,
      total: 1e15,
      fraction: 0.123456789,
      rate_per_second: 1e12,
      eta_seconds: 1e9,
    },
    ...overrides,
  };
}

describe('bounded listing values', () => {
  it('keeps small values whole and says nothing was cut', () => {
    const value = { force: false, deep: true, batch_size: 500, target: 's3', nested: { a: [1, 2] } };
    expect(boundedJsonObject(value, 256)).toEqual({ value, truncated: false });
  });

  it('cuts long strings, deep nesting and keys past the budget, and says so', () => {
    const { value, truncated } = boundedJsonObject(
      {
        long: 'x'.repeat(1000),
        deep: { a: { b: { c: 1 } } },
        ...Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, i])),
      },
      256,
    );
    expect(truncated).toBe(true);
    expect(value['long']).toBe(`${'x'.repeat(120)}…`);
    expect(value['deep']).toEqual({ a: { b: '{…}' } });
    expect(jsonBytes(value)).toBeLessThanOrEqual(256);
  });

  it('keeps an outcome nested 8 deep when asked (consistency_batch per_check)', () => {
    const extra = {
      per_check: { files_consistency: { outcome: { kind: 'ok', count: 6, extra: { completed: true } } } },
    };
    expect(boundedJsonObject(extra, 8192, 8)).toEqual({ value: extra, truncated: false });
  });

  it('never leaves a lone surrogate and stays within the bytes, escapes counted', () => {
    const fitted = fitString(hostile.repeat(100), 200, 300);
    expect(fitted.cut).toBe(true);
    expect(jsonBytes(fitted.text)).toBeLessThanOrEqual(300);
    expect(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(fitted.text)).toBe(
      false,
    );
  });

  it('500 worst-case runs serialise to under 1 MiB', () => {
    const keys = (n: number, width: number) =>
      Object.fromEntries(
        Array.from({ length: n }, (_, i) => [`${hostile.repeat(width)}${i}`, hostile.repeat(width)]),
      );
    const worst = run({
      cursor_hex: 'ab'.repeat(100_000),
      stats: { ...keys(1000, 1), count: 1, deep: { a: { b: { c: hostile.repeat(1000) } } } },
      params: { ...keys(1000, 50), x: [hostile.repeat(5000)] },
      error_message: hostile.repeat(100_000),
      pause_reason: hostile.repeat(100_000),
      pauses: Array.from({ length: 32 }, () => ({
        at: '2026-12-01T00:00:00.000Z',
        reason: hostile.repeat(10_000),
      })),
    });
    const tiny = run({
      stats: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [String(i), 0])),
      params: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [String(i), null])),
    });
    for (const sample of [worst, tiny]) {
      const page = JSON.stringify(Array.from({ length: 500 }, () => runListEntry(sample)));
      expect(Buffer.byteLength(page)).toBeLessThanOrEqual(1024 * 1024);
      expect(runListEntry(sample).truncated).toBe(true);
    }
  });
});
