import { defaultRunArgs, type JobOutcomeOk } from '@oxicloud/scheduler';
import { describe, expect, it } from 'vitest';
import type {
  TrashFolderBatch,
  TrashFolderCursor,
  TrashPurgeBatch,
  TrashRepository,
} from '../src/ports/trash-repository.js';
import { createTrashCleanupJob, type TrashCleanupConfig } from '../src/trash-cleanup/index.js';
import { FIXED_NOW, fixedNow, liveSignal, recordingLogger } from './part1-support.js';

const config: TrashCleanupConfig = { intervalMs: 86_400_000, retentionDays: 30, batchSize: 2 };

/** A repository that serves queued batches and records the calls. */
function fakeTrash(
  folderBatches: (TrashPurgeBatch & Partial<TrashFolderBatch>)[],
  fileBatches: TrashPurgeBatch[],
) {
  const calls: {
    kind: 'folders' | 'files';
    cutoff: Date;
    limit: number;
    after?: TrashFolderCursor | null;
  }[] = [];
  const empty: TrashPurgeBatch = { selected: 0, folders: 0, files: 0 };
  const repository: TrashRepository = {
    async purgeFolderBatch(cutoff, limit, after) {
      calls.push({ kind: 'folders', cutoff, limit, after });
      const batch = folderBatches.shift() ?? empty;
      return { skippedLiveDescendants: [], next: null, ...batch };
    },
    async purgeFileBatch(cutoff, limit) {
      calls.push({ kind: 'files', cutoff, limit });
      return fileBatches.shift() ?? empty;
    },
  };
  return { repository, calls };
}

describe('trash_cleanup', () => {
  it('purges folders then files in batches until a batch is short; count = rows purged', async () => {
    const { repository, calls } = fakeTrash(
      [
        { selected: 2, folders: 5, files: 9 },
        { selected: 1, folders: 1, files: 0 },
      ],
      [
        { selected: 2, folders: 0, files: 2 },
        { selected: 2, folders: 0, files: 2 },
        { selected: 0, folders: 0, files: 0 },
      ],
    );
    const job = createTrashCleanupJob({ repository, config, now: fixedNow });
    expect(job.name).toBe('trash_cleanup');
    expect(job.intervalMs).toBe(86_400_000);
    const outcome = (await job.run(defaultRunArgs, liveSignal())) as JobOutcomeOk;
    expect(outcome.kind).toBe('ok');
    expect(outcome.count).toBe(6 + 13);
    expect(outcome.extra).toMatchObject({ folders: 6, files: 13, batches: 5, retention_days: 30 });
    expect(calls.map((c) => c.kind)).toEqual(['folders', 'folders', 'files', 'files', 'files']);
    const cutoff = new Date(FIXED_NOW.getTime() - 30 * 86_400_000);
    for (const call of calls) {
      expect(call.cutoff).toEqual(cutoff);
      expect(call.limit).toBe(2);
    }
    expect(outcome.extra['cutoff']).toBe(cutoff.toISOString());
  });

  it('ignores force: the retention is not a grace window', async () => {
    const { repository, calls } = fakeTrash([], []);
    const job = createTrashCleanupJob({ repository, config, now: fixedNow });
    await job.run({ force: true }, liveSignal());
    expect(calls[0]?.cutoff).toEqual(new Date(FIXED_NOW.getTime() - 30 * 86_400_000));
  });

  it('stops between batches when the signal fires, reporting the progress', async () => {
    const controller = new AbortController();
    const batches: TrashFolderBatch[] = [
      { selected: 2, folders: 2, files: 3, skippedLiveDescendants: [], next: null },
      { selected: 2, folders: 2, files: 0, skippedLiveDescendants: [], next: null },
    ];
    let calls = 0;
    const repository: TrashRepository = {
      async purgeFolderBatch() {
        calls += 1;
        const batch = batches.shift()!;
        if (calls === 1) controller.abort(new Error('timeout'));
        return batch;
      },
      async purgeFileBatch() {
        throw new Error('must not be reached');
      },
    };
    const job = createTrashCleanupJob({ repository, config });
    const outcome = await job.run(defaultRunArgs, controller.signal);
    expect(calls).toBe(1);
    expect(outcome).toEqual({
      kind: 'err',
      message: 'trash_cleanup aborted (timeout) after purging 5 items (2 folders, 3 files)',
    });
  });

  it('turns a repository failure into err with the progress so far', async () => {
    const repository: TrashRepository = {
      purgeFolderBatch: async () => ({
        selected: 1,
        folders: 1,
        files: 1,
        skippedLiveDescendants: [],
        next: null,
      }),
      purgeFileBatch: async () => {
        throw new Error('connection reset');
      },
    };
    const outcome = await createTrashCleanupJob({ repository, config }).run(defaultRunArgs, liveSignal());
    expect(outcome).toEqual({
      kind: 'err',
      message: 'trash_cleanup failed after purging 2 items (1 folders, 1 files): connection reset',
    });
  });

  it('walks past roots it had to skip (cursor), counts them and names them in a warn line', async () => {
    const cursor1 = { trashedAt: '2026-01-01 00:00:00.000001+00', id: 'r2' };
    const { repository, calls } = fakeTrash(
      [
        { selected: 2, folders: 1, files: 3, skippedLiveDescendants: ['r2'], next: cursor1 },
        { selected: 1, folders: 0, files: 0, skippedLiveDescendants: ['r3'], next: { ...cursor1, id: 'r3' } },
      ],
      [],
    );
    const logger = recordingLogger();
    const outcome = (await createTrashCleanupJob({ repository, config, logger, now: fixedNow }).run(
      defaultRunArgs,
      liveSignal(),
    )) as JobOutcomeOk;
    expect(calls.filter((c) => c.kind === 'folders').map((c) => c.after)).toEqual([null, cursor1]);
    expect(outcome.extra).toMatchObject({ folders: 1, files: 3, skipped_live_descendants: 2 });
    const line = logger.lines.find((l) => l.fields['event'] === 'trash_cleanup.skipped_live_descendants');
    expect(line?.level).toBe('warn');
    expect(line?.fields['folder_ids']).toEqual(['r2', 'r3']);
  });
});
