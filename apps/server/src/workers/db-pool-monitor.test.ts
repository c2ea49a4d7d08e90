import type { Logger } from '@oxicloud/scheduler';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ServerError } from '../server-error.js';
import {
  DB_POOL_MONITOR_TARGET,
  dbPoolMonitorIntervalMsFromEnv,
  type PoolStats,
  startDbPoolMonitor,
} from './db-pool-monitor.js';

interface Line {
  level: 'info' | 'warn';
  fields: Record<string, unknown>;
}

function recorder(): Logger & { lines: Line[] } {
  const lines: Line[] = [];
  return {
    lines,
    info: (fields) => lines.push({ level: 'info', fields: fields as Record<string, unknown> }),
    warn: (fields) => lines.push({ level: 'warn', fields: fields as Record<string, unknown> }),
    error: () => undefined,
    debug: () => undefined,
  };
}

describe('db_pool_monitor', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('logs the pool counters every interval under its own target, until stopped', () => {
    const pool: { totalCount: number; idleCount: number; waitingCount: number } = {
      totalCount: 4,
      idleCount: 3,
      waitingCount: 0,
    };
    const logger = recorder();
    const stop = startDbPoolMonitor({ pool, logger, intervalMs: 30_000 });
    vi.advanceTimersByTime(29_999);
    expect(logger.lines).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(logger.lines).toEqual([
      {
        level: 'info',
        fields: {
          target: DB_POOL_MONITOR_TARGET,
          event: 'db_pool.stats',
          totalCount: 4,
          idleCount: 3,
          waitingCount: 0,
        },
      },
    ]);
    // Counters are read at each tick, and waiting clients raise the level.
    pool.totalCount = 10;
    pool.idleCount = 0;
    pool.waitingCount = 7;
    vi.advanceTimersByTime(30_000);
    expect(logger.lines[1]).toEqual({
      level: 'warn',
      fields: {
        target: DB_POOL_MONITOR_TARGET,
        event: 'db_pool.stats',
        totalCount: 10,
        idleCount: 0,
        waitingCount: 7,
      },
    });
    stop();
    stop();
    vi.advanceTimersByTime(120_000);
    expect(logger.lines).toHaveLength(2);
  });

  it('does not keep the process alive (the timer is unref-ed)', () => {
    vi.useRealTimers();
    const spy = vi.spyOn(globalThis, 'setInterval');
    const stop = startDbPoolMonitor({
      pool: { totalCount: 0, idleCount: 0, waitingCount: 0 },
      logger: recorder(),
      intervalMs: 1000,
    });
    const timer = spy.mock.results[0]?.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    stop();
    spy.mockRestore();
  });

  it('interval 0 disables it: nothing is scheduled', () => {
    const logger = recorder();
    const pool: PoolStats = { totalCount: 1, idleCount: 1, waitingCount: 0 };
    const stop = startDbPoolMonitor({ pool, logger, intervalMs: 0 });
    vi.advanceTimersByTime(10 * 60_000);
    expect(logger.lines.filter((l) => l.fields['event'] === 'db_pool.stats')).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0);
    stop();
  });

  it('reads OXICLOUD_DB_POOL_MONITOR_INTERVAL_SECONDS: default 30 s, 0 allowed, garbage refused', () => {
    expect(dbPoolMonitorIntervalMsFromEnv({})).toBe(30_000);
    expect(dbPoolMonitorIntervalMsFromEnv({ OXICLOUD_DB_POOL_MONITOR_INTERVAL_SECONDS: '5' })).toBe(5000);
    expect(dbPoolMonitorIntervalMsFromEnv({ OXICLOUD_DB_POOL_MONITOR_INTERVAL_SECONDS: '0' })).toBe(0);
    for (const bad of ['-1', '2.5', 'thirty', '86401']) {
      let caught: unknown;
      try {
        dbPoolMonitorIntervalMsFromEnv({ OXICLOUD_DB_POOL_MONITOR_INTERVAL_SECONDS: bad });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ServerError);
      expect((caught as ServerError).code).toBe('BAD_CONFIG');
      expect((caught as ServerError).message).toContain(`OXICLOUD_DB_POOL_MONITOR_INTERVAL_SECONDS="${bad}"`);
      expect((caught as ServerError).message).toContain('from 0 to 86400');
    }
  });
});
