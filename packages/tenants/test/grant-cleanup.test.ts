import { defaultRunArgs, type JobOutcomeOk } from '@oxicloud/scheduler';
import { describe, expect, it } from 'vitest';
import { createGrantCleanupJob, type GrantCleanupConfig } from '../src/grant-cleanup/index.js';
import type { DeletedGrant, GrantRepository } from '../src/ports/grant-repository.js';
import { FIXED_NOW, fixedNow, liveSignal, recordingLogger } from './part1-support.js';

const config: GrantCleanupConfig = { intervalMs: 86_400_000, graceMs: 86_400_000, batchSize: 3 };

function grant(n: number, expiresAt: Date): DeletedGrant {
  return {
    id: `grant-${String(n).padStart(4, '0')}`,
    subjectId: 'subject',
    resourceType: 'drive',
    resourceId: 'resource',
    role: 'viewer',
    expiresAt,
  };
}

/** Grants in a list; each call deletes up to `limit` expired before the cutoff. */
function fakeGrants(expiries: Date[]) {
  const rows = expiries.map((e, i) => grant(i, e));
  const cutoffs: Date[] = [];
  const repository: GrantRepository = {
    async deleteExpiredGrants(cutoff, limit) {
      cutoffs.push(cutoff);
      const doomed = rows.filter((r) => r.expiresAt < cutoff).slice(0, limit);
      for (const d of doomed) rows.splice(rows.indexOf(d), 1);
      return doomed;
    },
  };
  return { repository, rows, cutoffs };
}

const hoursAgo = (h: number) => new Date(FIXED_NOW.getTime() - h * 3_600_000);

describe('grant_cleanup', () => {
  it('deletes only grants expired past the grace, in batches, and writes one audit line', async () => {
    const { repository, rows, cutoffs } = fakeGrants([
      hoursAgo(48),
      hoursAgo(30),
      hoursAgo(25),
      hoursAgo(100),
      hoursAgo(2),
      hoursAgo(-5),
    ]);
    const logger = recordingLogger();
    const job = createGrantCleanupJob({ repository, config, logger, now: fixedNow });
    expect(job.name).toBe('grant_cleanup');
    expect(job.intervalMs).toBe(86_400_000);
    const outcome = (await job.run(defaultRunArgs, liveSignal())) as JobOutcomeOk;
    expect(outcome.count).toBe(4);
    expect(outcome.extra).toMatchObject({ grace_seconds: 86_400, forced: false });
    expect(cutoffs).toEqual([hoursAgo(24), hoursAgo(24)]);
    expect(rows.map((r) => r.id)).toEqual(['grant-0004', 'grant-0005']);
    const audit = logger.lines.filter((l) => l.fields['target'] === 'audit');
    expect(audit).toHaveLength(1);
    expect(audit[0]?.fields).toMatchObject({
      event: 'grant_cleanup.deleted',
      count: 4,
      grant_ids: ['grant-0000', 'grant-0001', 'grant-0002', 'grant-0003'],
      grant_ids_truncated: false,
    });
  });

  it('force uses grace 0: any grant already expired goes', async () => {
    const { repository, rows } = fakeGrants([hoursAgo(2), hoursAgo(-5)]);
    const outcome = (await createGrantCleanupJob({ repository, config, now: fixedNow }).run(
      { force: true },
      liveSignal(),
    )) as JobOutcomeOk;
    expect(outcome.count).toBe(1);
    expect(outcome.extra).toMatchObject({ grace_seconds: 0, forced: true, cutoff: FIXED_NOW.toISOString() });
    expect(rows.map((r) => r.id)).toEqual(['grant-0001']);
  });

  it('caps the ids in the audit line and says so', async () => {
    const { repository } = fakeGrants(Array.from({ length: 150 }, () => hoursAgo(48)));
    const logger = recordingLogger();
    const job = createGrantCleanupJob({
      repository,
      config: { ...config, batchSize: 1000 },
      logger,
      now: fixedNow,
    });
    const outcome = (await job.run(defaultRunArgs, liveSignal())) as JobOutcomeOk;
    expect(outcome.count).toBe(150);
    const audit = logger.lines.find((l) => l.fields['target'] === 'audit');
    expect(audit?.fields['count']).toBe(150);
    expect(audit?.fields['grant_ids']).toHaveLength(100);
    expect(audit?.fields['grant_ids_truncated']).toBe(true);
  });

  it('on abort between batches still audits what was deleted, and returns err', async () => {
    const controller = new AbortController();
    const inner = fakeGrants(Array.from({ length: 7 }, () => hoursAgo(48)));
    const repository: GrantRepository = {
      async deleteExpiredGrants(cutoff, limit) {
        const deleted = await inner.repository.deleteExpiredGrants(cutoff, limit);
        controller.abort(new Error('shutdown'));
        return deleted;
      },
    };
    const logger = recordingLogger();
    const outcome = await createGrantCleanupJob({ repository, config, logger, now: fixedNow }).run(
      defaultRunArgs,
      controller.signal,
    );
    expect(outcome).toEqual({
      kind: 'err',
      message: 'grant_cleanup aborted (shutdown) after deleting 3 grants',
    });
    const audit = logger.lines.find((l) => l.fields['target'] === 'audit');
    expect(audit?.fields).toMatchObject({ count: 3, grant_ids: ['grant-0000', 'grant-0001', 'grant-0002'] });
    expect(inner.rows).toHaveLength(4);
  });
});
