import { defaultRunArgs, type JobOutcomeOk } from '@oxicloud/scheduler';
import { describe, expect, it } from 'vitest';
import { createDedupGcJob, type DedupGcConfig } from '../src/dedup-gc/index.js';
import type { OrphanBlobCandidate, OrphanBlobRepository } from '../src/ports/orphan-blob-repository.js';
import { FIXED_NOW, fixedNow, liveSignal, recordingLogger } from './part1-support.js';

const config: DedupGcConfig = { intervalMs: null, graceMs: 3_600_000, batchSize: 2 };

const hash = (n: number): string => n.toString(16).padStart(64, '0');

/**
 * An in-memory blob index: `orphans` maps hash → size and orphaned_at; a
 * hash in `referenced` is treated as having gained a reference (ref_count
 * bumped) by lock time; a hash in `filesReference` keeps ref_count 0 but
 * rows of files still point at it (a wrong counter); `marked` holds rows
 * marked as being deleted.
 */
function fakeIndex(
  orphans: Map<string, { size: number; orphanedAt: Date }>,
  referenced = new Set<string>(),
  filesReference = new Set<string>(),
  marked = new Set<string>(),
) {
  const cutoffs: Date[] = [];
  const candidate = (h: string): OrphanBlobCandidate => {
    const b = orphans.get(h)!;
    return { hash: h, size: b.size, orphanedAt: b.orphanedAt };
  };
  const repository: OrphanBlobRepository = {
    async listOrphanCandidates(cutoff, { after, limit }) {
      cutoffs.push(cutoff);
      return [...orphans.entries()]
        .filter(([h, b]) => !marked.has(h) && b.orphanedAt < cutoff && (after === null || h > after))
        .sort(([a], [b]) => a.localeCompare(b))
        .slice(0, limit)
        .map(([h]) => candidate(h));
    },
    async listMarked({ after, limit }) {
      return [...marked]
        .filter((h) => after === null || h > after)
        .sort()
        .slice(0, limit)
        .map(candidate);
    },
    async markForDeletion(hashes, cutoff) {
      const locked = hashes.filter((h) => {
        const b = orphans.get(h);
        return b !== undefined && !referenced.has(h) && !marked.has(h) && b.orphanedAt < cutoff;
      });
      const hit = locked.filter((h) => filesReference.has(h));
      const ok = locked.filter((h) => !filesReference.has(h));
      for (const h of ok) marked.add(h);
      return { marked: ok.map(candidate), referenced: hit };
    },
    async finishDeletion(hashes, deleteBytes) {
      const locked = hashes.filter((h) => marked.has(h)).map(candidate);
      const gone = await deleteBytes(locked);
      const deleted = gone.filter((h) => locked.some((l) => l.hash === h));
      for (const h of deleted) {
        orphans.delete(h);
        marked.delete(h);
      }
      return { locked, deleted, referenced: [] };
    },
  };
  return { repository, cutoffs, marked };
}

function fakeBytes(failing = new Set<string>()) {
  const deleted: string[] = [];
  return {
    deleted,
    blobs: {
      async delete(h: string) {
        if (failing.has(h)) throw new Error('EACCES: permission denied');
        deleted.push(h);
        return true;
      },
    },
  };
}

const old = new Date(FIXED_NOW.getTime() - 2 * 3_600_000);
const young = new Date(FIXED_NOW.getTime() - 60_000);

describe('dedup_gc', () => {
  it('deletes orphans past the grace (bytes, then row) in batches; young orphans stay', async () => {
    const orphans = new Map([
      [hash(1), { size: 10, orphanedAt: old }],
      [hash(2), { size: 20, orphanedAt: old }],
      [hash(3), { size: 30, orphanedAt: old }],
      [hash(4), { size: 40, orphanedAt: young }],
    ]);
    const { repository, cutoffs } = fakeIndex(orphans);
    const bytes = fakeBytes();
    const job = createDedupGcJob({ repository, blobs: bytes.blobs, config, now: fixedNow });
    expect(job.name).toBe('dedup_gc');
    expect(job.intervalMs).toBeNull();
    const outcome = (await job.run(defaultRunArgs, liveSignal())) as JobOutcomeOk;
    expect(outcome.count).toBe(3);
    expect(outcome.extra).toEqual({
      blobs_deleted: 3,
      bytes_freed: 60,
      blobs_kept: 0,
      skipped_referenced: 0,
      resumed: 0,
      grace_seconds: 3600,
      forced: false,
    });
    expect(bytes.deleted.sort()).toEqual([hash(1), hash(2), hash(3)]);
    expect([...orphans.keys()]).toEqual([hash(4)]);
    expect(cutoffs[0]).toEqual(new Date(FIXED_NOW.getTime() - 3_600_000));
    expect(cutoffs).toHaveLength(2);
  });

  it('force uses grace 0: young orphans go too', async () => {
    const orphans = new Map([[hash(4), { size: 40, orphanedAt: young }]]);
    const { repository, cutoffs } = fakeIndex(orphans);
    const outcome = (await createDedupGcJob({
      repository,
      blobs: fakeBytes().blobs,
      config,
      now: fixedNow,
    }).run({ force: true }, liveSignal())) as JobOutcomeOk;
    expect(cutoffs[0]).toEqual(FIXED_NOW);
    expect(outcome.extra).toMatchObject({
      blobs_deleted: 1,
      bytes_freed: 40,
      grace_seconds: 0,
      forced: true,
    });
  });

  it('keeps a candidate that gained a reference before the lock: no bytes deleted, counted as kept', async () => {
    const orphans = new Map([
      [hash(1), { size: 10, orphanedAt: old }],
      [hash(2), { size: 20, orphanedAt: old }],
    ]);
    const { repository } = fakeIndex(orphans, new Set([hash(2)]));
    const bytes = fakeBytes();
    const outcome = (await createDedupGcJob({ repository, blobs: bytes.blobs, config, now: fixedNow }).run(
      defaultRunArgs,
      liveSignal(),
    )) as JobOutcomeOk;
    expect(bytes.deleted).toEqual([hash(1)]);
    expect(orphans.has(hash(2))).toBe(true);
    expect(outcome.extra).toMatchObject({ blobs_deleted: 1, bytes_freed: 10, blobs_kept: 1 });
  });

  it('keeps the row when its bytes cannot be deleted, carries on, and reports err naming the blob', async () => {
    const orphans = new Map([
      [hash(1), { size: 10, orphanedAt: old }],
      [hash(2), { size: 20, orphanedAt: old }],
      [hash(3), { size: 30, orphanedAt: old }],
    ]);
    const { repository, marked } = fakeIndex(orphans);
    const logger = recordingLogger();
    const outcome = await createDedupGcJob({
      repository,
      blobs: fakeBytes(new Set([hash(2)])).blobs,
      config,
      logger,
      now: fixedNow,
    }).run(defaultRunArgs, liveSignal());
    expect([...orphans.keys()]).toEqual([hash(2)]);
    expect(marked.has(hash(2))).toBe(true);
    expect(outcome.kind).toBe('err');
    expect(outcome.kind === 'err' && outcome.message).toContain(`2 blobs deleted (40 bytes freed)`);
    expect(outcome.kind === 'err' && outcome.message).toContain(`${hash(2)}: EACCES`);
    expect(logger.lines.filter((l) => l.fields['event'] === 'dedup_gc.delete_failed')).toHaveLength(1);
  });

  it('stops between batches when the signal fires', async () => {
    const orphans = new Map([1, 2, 3, 4, 5].map((n) => [hash(n), { size: n, orphanedAt: old }] as const));
    const { repository } = fakeIndex(new Map(orphans));
    const controller = new AbortController();
    const bytes = {
      async delete(h: string) {
        if (h === hash(2)) controller.abort(new Error('timeout'));
        return true;
      },
    };
    const outcome = await createDedupGcJob({ repository, blobs: bytes, config, now: fixedNow }).run(
      defaultRunArgs,
      controller.signal,
    );
    expect(outcome).toEqual({
      kind: 'err',
      message:
        'dedup_gc aborted (timeout) after 2 blobs deleted (3 bytes freed), 0 kept, 0 skipped as referenced',
    });
  });

  it('a blob whose ref_count is 0 but which files reference is not deleted: counted and logged', async () => {
    const orphans = new Map([
      [hash(1), { size: 10, orphanedAt: old }],
      [hash(2), { size: 20, orphanedAt: old }],
    ]);
    const { repository } = fakeIndex(orphans, new Set(), new Set([hash(1)]));
    const bytes = fakeBytes();
    const logger = recordingLogger();
    const outcome = (await createDedupGcJob({
      repository,
      blobs: bytes.blobs,
      config,
      logger,
      now: fixedNow,
    }).run(defaultRunArgs, liveSignal())) as JobOutcomeOk;
    expect(bytes.deleted).toEqual([hash(2)]);
    expect(orphans.has(hash(1))).toBe(true);
    expect(outcome.extra).toMatchObject({ blobs_deleted: 1, blobs_kept: 0, skipped_referenced: 1 });
    const line = logger.lines.find((l) => l.fields['event'] === 'dedup_gc.skipped_referenced');
    expect(line?.fields['hashes']).toEqual([hash(1)]);
  });

  it('finishes rows a previous run left marked before collecting new orphans', async () => {
    const orphans = new Map([
      [hash(7), { size: 70, orphanedAt: young }],
      [hash(1), { size: 10, orphanedAt: old }],
    ]);
    const { repository, marked } = fakeIndex(orphans, new Set(), new Set(), new Set([hash(7)]));
    const bytes = fakeBytes();
    const outcome = (await createDedupGcJob({ repository, blobs: bytes.blobs, config, now: fixedNow }).run(
      defaultRunArgs,
      liveSignal(),
    )) as JobOutcomeOk;
    expect(bytes.deleted).toEqual([hash(7), hash(1)]);
    expect(marked.size).toBe(0);
    expect(outcome.extra).toMatchObject({ blobs_deleted: 2, bytes_freed: 80, resumed: 1 });
  });
});
