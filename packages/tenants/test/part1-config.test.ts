import { describe, expect, it } from 'vitest';
import { dedupGcConfigFromEnv } from '../src/dedup-gc/index.js';
import { isTenantsError, TenantsError } from '../src/errors.js';
import { createGrantCleanupJob, grantCleanupConfigFromEnv } from '../src/grant-cleanup/index.js';
import { storageReconcileConfigFromEnv } from '../src/storage-reconcile/index.js';
import { createTrashCleanupJob, trashCleanupConfigFromEnv } from '../src/trash-cleanup/index.js';

function thrown(fn: () => unknown): TenantsError {
  try {
    fn();
  } catch (error) {
    if (error instanceof TenantsError) return error;
    throw error;
  }
  throw new Error('expected a TenantsError, nothing was thrown');
}

describe('Part 1 tenant configs from env', () => {
  it('gives the documented defaults when nothing is set', () => {
    expect(trashCleanupConfigFromEnv({})).toEqual({
      intervalMs: 24 * 3_600_000,
      retentionDays: 30,
      batchSize: 500,
    });
    expect(storageReconcileConfigFromEnv({})).toEqual({ intervalMs: 600_000 });
    expect(dedupGcConfigFromEnv({})).toEqual({
      intervalMs: null,
      graceMs: 3_600_000,
      batchSize: 100,
      quarantineGraceMs: 7 * 86_400_000,
    });
    expect(grantCleanupConfigFromEnv({})).toEqual({
      intervalMs: 24 * 3_600_000,
      graceMs: 86_400_000,
      batchSize: 1000,
    });
  });

  it('reads every variable, in its unit; blank counts as unset', () => {
    expect(
      trashCleanupConfigFromEnv({
        OXICLOUD_TRASH_CLEANUP_INTERVAL_HOURS: '6',
        OXICLOUD_TRASH_RETENTION_DAYS: '7',
        OXICLOUD_TRASH_CLEANUP_BATCH_SIZE: ' 50 ',
      }),
    ).toEqual({ intervalMs: 6 * 3_600_000, retentionDays: 7, batchSize: 50 });
    expect(
      storageReconcileConfigFromEnv({ OXICLOUD_STORAGE_USAGE_RECONCILE_INTERVAL_SECONDS: '30' }),
    ).toEqual({
      intervalMs: 30_000,
    });
    expect(
      dedupGcConfigFromEnv({
        OXICLOUD_DEDUP_GC_GRACE_SECONDS: '0',
        OXICLOUD_DEDUP_GC_BATCH_SIZE: '',
        OXICLOUD_DEDUP_GC_QUARANTINE_GRACE_DAYS: '30',
      }),
    ).toEqual({
      intervalMs: null,
      graceMs: 0,
      batchSize: 100,
      quarantineGraceMs: 30 * 86_400_000,
    });
    expect(
      grantCleanupConfigFromEnv({
        OXIJOBS_GRANT_CLEANUP_INTERVAL_HOURS: '1',
        OXICLOUD_GRANT_CLEANUP_GRACE_SECONDS: '60',
        OXICLOUD_GRANT_CLEANUP_BATCH_SIZE: '10',
      }),
    ).toEqual({ intervalMs: 3_600_000, graceMs: 60_000, batchSize: 10 });
  });

  it('an interval of 0 means on demand only (null)', () => {
    expect(trashCleanupConfigFromEnv({ OXICLOUD_TRASH_CLEANUP_INTERVAL_HOURS: '0' }).intervalMs).toBeNull();
    expect(
      storageReconcileConfigFromEnv({ OXICLOUD_STORAGE_USAGE_RECONCILE_INTERVAL_SECONDS: '0' }).intervalMs,
    ).toBeNull();
    expect(grantCleanupConfigFromEnv({ OXIJOBS_GRANT_CLEANUP_INTERVAL_HOURS: '0' }).intervalMs).toBeNull();
  });

  it("OxiCloud's own job switches never configure the engine's jobs", () => {
    // An OxiCloud environment file: its grant cleanup daemon, trash and usage sweep.
    const oxicloud = {
      OXICLOUD_GRANT_CLEANUP_ENABLED: 'false',
      OXICLOUD_GRANT_CLEANUP_INTERVAL_HOURS: '1',
      OXICLOUD_GRANT_CLEANUP_GRACE_DAYS: '1',
      OXICLOUD_ENABLE_TRASH: 'false',
      OXICLOUD_STORAGE_USAGE_RECONCILE_SECS: '30',
    };
    expect(grantCleanupConfigFromEnv(oxicloud)).toEqual(grantCleanupConfigFromEnv({}));
    expect(trashCleanupConfigFromEnv(oxicloud)).toEqual(trashCleanupConfigFromEnv({}));
    expect(storageReconcileConfigFromEnv(oxicloud)).toEqual(storageReconcileConfigFromEnv({}));
    expect(dedupGcConfigFromEnv(oxicloud)).toEqual(dedupGcConfigFromEnv({}));
  });

  it.each([
    [
      () => trashCleanupConfigFromEnv({ OXICLOUD_TRASH_CLEANUP_INTERVAL_HOURS: '1.5' }),
      'OXICLOUD_TRASH_CLEANUP_INTERVAL_HOURS="1.5"',
      'hours',
    ],
    [
      () => trashCleanupConfigFromEnv({ OXICLOUD_TRASH_RETENTION_DAYS: '-1' }),
      'OXICLOUD_TRASH_RETENTION_DAYS="-1"',
      'days',
    ],
    [
      () => trashCleanupConfigFromEnv({ OXICLOUD_TRASH_CLEANUP_BATCH_SIZE: '0' }),
      'OXICLOUD_TRASH_CLEANUP_BATCH_SIZE="0"',
      'from 1 to 100000',
    ],
    [
      () => storageReconcileConfigFromEnv({ OXICLOUD_STORAGE_USAGE_RECONCILE_INTERVAL_SECONDS: 'ten' }),
      'OXICLOUD_STORAGE_USAGE_RECONCILE_INTERVAL_SECONDS="ten"',
      'seconds',
    ],
    [
      () => dedupGcConfigFromEnv({ OXICLOUD_DEDUP_GC_GRACE_SECONDS: '1h' }),
      'OXICLOUD_DEDUP_GC_GRACE_SECONDS="1h"',
      'seconds from 0 to 31536000',
    ],
    [
      () => dedupGcConfigFromEnv({ OXICLOUD_DEDUP_GC_QUARANTINE_GRACE_DAYS: '0' }),
      'OXICLOUD_DEDUP_GC_QUARANTINE_GRACE_DAYS="0"',
      'days from 1 to 3650',
    ],
    [
      () => grantCleanupConfigFromEnv({ OXICLOUD_GRANT_CLEANUP_GRACE_SECONDS: '1e3' }),
      'OXICLOUD_GRANT_CLEANUP_GRACE_SECONDS="1e3"',
      'seconds',
    ],
    [
      () => grantCleanupConfigFromEnv({ OXIJOBS_GRANT_CLEANUP_INTERVAL_HOURS: '9999' }),
      'OXIJOBS_GRANT_CLEANUP_INTERVAL_HOURS="9999"',
      'from 0 to 8760',
    ],
  ])('refuses a bad value with INVALID_CONFIG naming variable, value and what is allowed (%#)', (fn, named, allowed) => {
    const error = thrown(fn);
    expect(isTenantsError(error, 'INVALID_CONFIG')).toBe(true);
    expect(error.message).toContain(named);
    expect(error.message).toContain(allowed);
  });

  it('factories refuse a hand-built config that is out of range', () => {
    const repository = { deleteExpiredGrants: async () => [] };
    expect(() =>
      createGrantCleanupJob({ repository, config: { intervalMs: null, graceMs: -1, batchSize: 10 } }),
    ).toThrow(TenantsError);
    const trash = {
      purgeFolderBatch: async () => ({
        selected: 0,
        folders: 0,
        files: 0,
        skippedLiveDescendants: [],
        next: null,
      }),
      purgeFileBatch: async () => ({ selected: 0, folders: 0, files: 0 }),
    };
    expect(() =>
      createTrashCleanupJob({ repository: trash, config: { intervalMs: 0, retentionDays: 1, batchSize: 1 } }),
    ).toThrow(/intervalMs=0/);
  });
});
