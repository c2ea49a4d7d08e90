import { describe, expect, it } from 'vitest';
import { computeProgress } from '../src/progress.js';

describe('computeProgress', () => {
  it('rate over the last minute, ETA from the estimate', () => {
    const stats = {
      scanned_count: 400,
      total_estimate: 1000,
      progress_samples: [
        [0, 0],
        [100_000, 100], // older than 60 s before the newest: outside the window
        [140_000, 200],
        [160_000, 400],
      ],
    };
    expect(computeProgress(stats, 'Running')).toEqual({
      processed: 400,
      total: 1000,
      fraction: 0.4,
      // pairs starting inside [100 s, 160 s]: 300 items in 60 s
      rate_per_second: 5,
      eta_seconds: 120,
    });
  });

  it('pairs that straddle a resume (the paused time) do not count', () => {
    const stats = {
      scanned_count: 300,
      total_estimate: 600,
      progress_samples: [
        [0, 0],
        [10_000, 100], // 10/s before the pause
        [50_000, 200], // resumed at 49_000: this pair spans a 39 s pause
        [60_000, 300], // 10/s after
      ],
      progress_resumed_at_ms: [49_000],
    };
    const p = computeProgress(stats, 'Running');
    expect(p.rate_per_second).toBe(10);
    expect(p.eta_seconds).toBe(30);
  });

  it('falls back to the newest valid pair when the window has none; a paused run has no rate or ETA', () => {
    const stats = {
      scanned_count: 100,
      total_estimate: 200,
      progress_samples: [
        [0, 0],
        [10_000, 100],
      ],
    };
    expect(computeProgress(stats, 'Running')).toMatchObject({
      rate_per_second: 10,
      eta_seconds: 10,
      fraction: 0.5,
    });
    expect(computeProgress(stats, 'Paused')).toEqual({
      processed: 100,
      total: 200,
      fraction: 0.5,
      rate_per_second: null,
      eta_seconds: null,
    });
  });

  it('past the estimate the total, fraction and ETA are unknown (never a total below processed); Completed → total = processed', () => {
    const stats = {
      scanned_count: 250,
      total_estimate: 200,
      progress_samples: [
        [0, 0],
        [10_000, 250],
      ],
    };
    expect(computeProgress(stats, 'Running')).toMatchObject({
      processed: 250,
      total: null,
      fraction: null,
      eta_seconds: null,
    });
    expect(computeProgress({ ...stats, scanned_count: 200 }, 'Paused')).toMatchObject({
      total: null,
      fraction: null,
    });
    expect(computeProgress({ ...stats, scanned_count: 199 }, 'Running').fraction).toBeLessThan(1);
    expect(computeProgress(stats, 'Completed')).toMatchObject({ processed: 250, total: 250, fraction: 1 });
  });

  it('unknown total → fraction and ETA null; Completed → fraction 1, ETA 0; odd stats never throw', () => {
    expect(computeProgress({ scanned_count: 5 }, 'Running')).toEqual({
      processed: 5,
      total: null,
      fraction: null,
      rate_per_second: null,
      eta_seconds: null,
    });
    expect(computeProgress({ scanned_count: 5 }, 'Completed')).toMatchObject({ fraction: 1, eta_seconds: 0 });
    expect(computeProgress('garbage', 'Failed')).toMatchObject({
      processed: 0,
      fraction: null,
      eta_seconds: null,
    });
    expect(computeProgress({ progress_samples: [['x', 1], 7] }, 'Running').rate_per_second).toBeNull();
  });
});
