import { describe, expect, it } from 'vitest';
import { clusterConfigFromEnv } from './cluster-config.js';

describe('clusterConfigFromEnv', () => {
  it('defaults: heartbeat 5 s, prune 5 min, lease 30 s, history 30 days, misfire skip', () => {
    const config = clusterConfigFromEnv({});
    expect(config).toMatchObject({
      heartbeatMs: 5_000,
      pruneAfterMs: 300_000,
      periodicLeaseMs: 30_000,
      historyRetentionMs: 30 * 86_400_000,
    });
    expect(config.misfireOf('storage_reconcile')).toBe('skip');
  });

  it('reads each variable and a job misfire policy', () => {
    const config = clusterConfigFromEnv({
      OXICLOUD_NODE_HEARTBEAT_SECONDS: '2',
      OXICLOUD_NODE_PRUNE_SECONDS: '60',
      OXICLOUD_PERIODIC_LEASE_SECONDS: '10',
      OXICLOUD_PERIODIC_HISTORY_DAYS: '7',
      OXICLOUD_JOB_STORAGE_RECONCILE_MISFIRE: 'Once',
    });
    expect(config).toMatchObject({ heartbeatMs: 2_000, pruneAfterMs: 60_000, periodicLeaseMs: 10_000 });
    expect(config.historyRetentionMs).toBe(7 * 86_400_000);
    expect(config.misfireOf('storage_reconcile')).toBe('once');
    expect(config.misfireOf('trash_cleanup')).toBe('skip');
  });

  it('names the variable, the bad value and what is allowed', () => {
    expect(() => clusterConfigFromEnv({ OXICLOUD_NODE_HEARTBEAT_SECONDS: '0.5' })).toThrow(
      'OXICLOUD_NODE_HEARTBEAT_SECONDS="0.5" is not allowed: expected a whole number of seconds from 1 to 300; unset it for the default 5',
    );
    expect(() => clusterConfigFromEnv({ OXICLOUD_PERIODIC_LEASE_SECONDS: '1' })).toThrow(
      /OXICLOUD_PERIODIC_LEASE_SECONDS="1" is not allowed: expected a whole number of seconds from 2 to 86400/,
    );
    expect(() =>
      clusterConfigFromEnv({ OXICLOUD_NODE_HEARTBEAT_SECONDS: '10', OXICLOUD_NODE_PRUNE_SECONDS: '15' }),
    ).toThrow(
      /OXICLOUD_NODE_PRUNE_SECONDS=15 is not allowed: it must be at least twice OXICLOUD_NODE_HEARTBEAT_SECONDS \(10\)/,
    );
    const config = clusterConfigFromEnv({ OXICLOUD_JOB_DEDUP_GC_MISFIRE: 'always' });
    expect(() => config.misfireOf('dedup_gc')).toThrow(
      /OXICLOUD_JOB_DEDUP_GC_MISFIRE="always" is not allowed: expected skip or once/,
    );
  });
});
