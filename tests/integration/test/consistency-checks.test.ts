import type { CheckStore, ConsistencyCheck } from '@oxicloud/consistency';
import {
  createFilesConsistencyCheck,
  FILES_CONSISTENCY_CHECK_NAME,
  type FileBlobScan,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ConsistencyHarness,
  consistencyHarness,
  randomHash,
  seedWorld,
  summary,
  type World,
} from './consistency-fixtures.js';

let db: TestDatabase;
let h: ConsistencyHarness;
let world: World;

beforeEach(async () => {
  db = await createTestDatabase();
  h = consistencyHarness(db.pool);
  world = await seedWorld(db.pool);
});
afterEach(async () => {
  await h.engine.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
  await db.drop();
});

const sql = (text: string, values: unknown[] = []) => db.pool.query(text, values);
const drivesCheck = () => h.drives.consistencyChecks()[0] as ConsistencyCheck;
const foldersCheck = () => h.folders.consistencyChecks()[0] as ConsistencyCheck;
const filesCheck = () => h.files.consistencyChecks()[0] as ConsistencyCheck;

describe('the three checks on a clean world', () => {
  it('complete with 0 findings and count every row they examined', async () => {
    const drives = await h.run(drivesCheck());
    expect(drives.outcome).toMatchObject({ kind: 'ok', count: 0, extra: { completed: true } });
    expect(drives.findings).toEqual([]);
    expect(drives.stats['scanned_count']).toBe(world.counts.drives + world.counts.users);

    const folders = await h.run(foldersCheck());
    expect(folders.status).toBe('Completed');
    expect(folders.findings).toEqual([]);
    expect(folders.stats['scanned_count']).toBe(world.counts.folders);

    const files = await h.run(filesCheck());
    expect(files.status).toBe('Completed');
    expect(files.findings).toEqual([]);
    // The trashed folders (phase 2), then the files once (phase 3, by id, with their blob rows).
    expect(files.stats['scanned_count']).toBe(world.counts.files + world.counts.trashedFolders);
    expect(h.lines.filter((l) => l['target'] === 'audit')).toEqual([]);
  });

  it('are the checks the adapters contribute, under the job names of the plan', () => {
    expect([drivesCheck().name, foldersCheck().name, filesCheck().name]).toEqual([
      'drives_consistency',
      'folders_consistency',
      'files_consistency',
    ]);
    expect([h.drives.subsystem(), h.folders.subsystem(), h.files.subsystem()]).toEqual([
      'used_bytes',
      'folder_tree',
      'files',
    ]);
  });
});

describe('drives_consistency', () => {
  it('reports a drifting drive and a drifting user envelope, nothing else', async () => {
    // The drive drifts by +300 while the user's envelope follows, so only the drive drifts.
    await sql('UPDATE storage.drives SET used_bytes = used_bytes + 300 WHERE id = $1', [world.driveId]);
    await sql('UPDATE auth.users SET storage_used_bytes = storage_used_bytes + 300 WHERE id = $1', [
      world.userId,
    ]);
    await sql('UPDATE auth.users SET storage_used_bytes = storage_used_bytes - 77 WHERE id = $1', [
      world.otherUserId,
    ]);
    const run = await h.run(drivesCheck());
    expect(summary(run.findings)).toEqual(
      [
        `drive_used_bytes_drift Drift ${world.driveId}`,
        `user_used_bytes_drift Drift ${world.otherUserId}`,
      ].sort(),
    );
    const drive = run.findings.find((f) => f.kind === 'drive_used_bytes_drift');
    const { rows } = await sql('SELECT sum(size)::int AS actual FROM storage.files WHERE drive_id = $1', [
      world.driveId,
    ]);
    expect(drive?.detail).toMatchObject({
      recorded: rows[0].actual + 300,
      actual: rows[0].actual,
      delta: 300,
    });
    const user = run.findings.find((f) => f.kind === 'user_used_bytes_drift');
    expect(user?.detail).toMatchObject({ recorded: 777 - 77, actual: 777, delta: -77, drive_count: 1 });
    expect(run.outcome).toMatchObject({ kind: 'ok', count: 2 });
    expect(run.stats).toMatchObject({ count: 2, findings: 2, findings_drive_used_bytes_drift: 1 });
    // Audit: one line per finding on target 'audit', event consistency.<check>.finding.
    const audit = h.lines.filter((l) => l['target'] === 'audit');
    expect(audit).toHaveLength(2);
    expect(audit[0]).toMatchObject({ event: 'consistency.drives_consistency.finding', run_id: run.runId });
  });
});

describe('folders_consistency', () => {
  it('reports a live folder under a trashed parent, a wrong path and a wrong lpath, nothing else', async () => {
    const stray = (
      await sql(
        `INSERT INTO storage.folders (drive_id, parent_id, name, created_at) VALUES ($1, $2, 'stray', now() - interval '2 days')
         RETURNING id`,
        [world.driveId, world.old],
      )
    ).rows[0].id;
    await sql("UPDATE storage.folders SET path = '/wrong/work' WHERE id = $1", [world.work]);
    await sql("UPDATE storage.folders SET lpath = 'abc.def' WHERE id = $1", [world.inner]);
    const run = await h.run(foldersCheck());
    expect(summary(run.findings)).toEqual(
      [
        `parent_trashed_mismatch DataLoss ${stray}`,
        `path_mismatch Drift ${world.work}`,
        `lpath_mismatch Drift ${world.inner}`,
      ].sort(),
    );
    expect(run.findings.find((f) => f.kind === 'path_mismatch')?.detail).toMatchObject({
      recorded: '/wrong/work',
      expected: '/docs/work',
    });
    expect(run.findings.find((f) => f.kind === 'lpath_mismatch')?.detail).toMatchObject({
      recorded: 'abc.def',
      expected: `${world.old.replaceAll('-', '')}.${world.inner.replaceAll('-', '')}`,
    });
    expect(run.findings.find((f) => f.kind === 'parent_trashed_mismatch')?.detail).toMatchObject({
      parent_id: world.old,
    });
  });

  it('skips a parent trashed within the grace window unless forced', async () => {
    // A subtree being trashed right now: the parent is trashed, the child not yet.
    await sql('UPDATE storage.folders SET is_trashed = true, trashed_at = now() WHERE id = $1', [world.docs]);
    const graced = await h.run(foldersCheck());
    expect(graced.findings).toEqual([]);
    const forced = await h.run(foldersCheck(), { force: true });
    expect(summary(forced.findings)).toEqual([`parent_trashed_mismatch DataLoss ${world.work}`]);
  });
});

describe('files_consistency', () => {
  async function injectFileFaults() {
    const lone = world.liveFiles[5]!;
    await sql('DELETE FROM storage.blobs WHERE hash = ANY($1)', [[world.sharedHash, lone.hash]]);
    const sized = world.liveFiles[6]!;
    await sql('UPDATE storage.files SET size = size + 10 WHERE id = $1', [sized.id]);
    const untrashed = world.trashedFiles[0]!;
    await sql('UPDATE storage.files SET is_trashed = false, trashed_at = NULL WHERE id = $1', [untrashed.id]);
    return { lone, sized, untrashed };
  }

  it('reports missing blobs per blob (biggest impact first), a size mismatch and a live file in a trashed folder', async () => {
    const { lone, sized, untrashed } = await injectFileFaults();
    const run = await h.run(filesCheck());
    expect(summary(run.findings)).toEqual(
      [
        `missing_blob DataLoss ${world.sharedHash}`,
        `missing_blob DataLoss ${lone.hash}`,
        `blob_size_mismatch Drift ${sized.id}`,
        `parent_folder_trashed DataLoss ${untrashed.id}`,
      ].sort(),
    );
    const missing = run.findings.filter((f) => f.kind === 'missing_blob');
    expect(missing.map((f) => f.resourceId)).toEqual([world.sharedHash, lone.hash]);
    expect(missing[0]?.detail).toEqual({
      ref_count: 2,
      live_file_count: 2,
      total_bytes: 1000,
      affected_file_ids: [...world.sharedFileIds].sort(),
      affected_file_ids_truncated: false,
    });
    expect(run.findings.find((f) => f.kind === 'blob_size_mismatch')?.detail).toEqual({
      blob_hash: sized.hash,
      file_size: sized.size + 10,
      blob_size: sized.size,
      delta: 10,
    });
    expect(run.findings.find((f) => f.kind === 'parent_folder_trashed')?.detail).toMatchObject({
      folder_id: world.inner,
      drive_id: world.driveId,
    });
    expect(run.stats).toMatchObject({ count: 4, findings_missing_blob: 2 });
  });

  it('Pass 2 drops a file deleted mid-scan and a blob that landed mid-scan', async () => {
    const { lone, sized } = await injectFileFaults();
    // Between Pass 1 (the page) and Pass 2 (the re-read): the lone file is
    // deleted, the shared blob's row lands, the resized file is deleted.
    const real = h.files;
    const racing: FileBlobScan = {
      subsystem: () => real.subsystem(),
      consistencyChecks: () => [],
      scanFilesById: async (after, limit, options) => {
        const page = await real.scanFilesById(after, limit, options);
        if (page.anomalies.length > 0) {
          await sql('DELETE FROM storage.files WHERE id = ANY($1)', [[lone.id, sized.id]]);
          await sql('INSERT INTO storage.blobs (hash, size) VALUES ($1, 500) ON CONFLICT DO NOTHING', [
            world.sharedHash,
          ]);
        }
        return page;
      },
      missingBlobs: (hashes, options) => real.missingBlobs(hashes, options),
      reverifyBlobSizes: (ids, options) => real.reverifyBlobSizes(ids, options),
      scanTrashedFolders: (after, limit, options) => real.scanTrashedFolders(after, limit, options),
      reverifyLiveFilesInTrashedFolders: (ids, options) =>
        real.reverifyLiveFilesInTrashedFolders(ids, options),
      reverifyFileRows: (ids, options) => real.reverifyFileRows(ids, options),
      estimateRows: () => real.estimateRows(),
    };
    const check = createFilesConsistencyCheck({ scan: racing });
    const run = await h.run(check);
    expect(run.status).toBe('Completed');
    // Only the live file in the trashed folder is left.
    expect(run.findings.map((f) => f.kind)).toEqual(['parent_folder_trashed']);
    expect(run.stats['findings_dropped']).toBeUndefined();
  });

  it('skips files younger than the grace window unless forced (grace from the run start)', async () => {
    const hash = randomHash(); // its blob row goes right after the file lands: missing
    await sql('INSERT INTO storage.blobs (hash, size) VALUES ($1, 5)', [hash]);
    const young = (
      await sql(
        `INSERT INTO storage.files (drive_id, folder_id, name, blob_hash, size) VALUES ($1, $2, 'new', $3, 5) RETURNING id`,
        [world.driveId, world.work, hash],
      )
    ).rows[0].id;
    await sql('DELETE FROM storage.blobs WHERE hash = $1', [hash]);
    const youngInTrash = (
      await sql(
        `INSERT INTO storage.files (drive_id, folder_id, name, blob_hash, size) VALUES ($1, $2, 'new2', $3, 5) RETURNING id`,
        [world.driveId, world.inner, world.liveFiles[3]!.hash],
      )
    ).rows[0].id;
    await sql('UPDATE storage.blobs SET size = 5 WHERE hash = $1', [world.liveFiles[3]!.hash]); // old file now mismatches
    const graced = await h.run(filesCheck());
    expect(summary(graced.findings)).toEqual([`blob_size_mismatch Drift ${world.liveFiles[3]!.id}`]);
    const forced = await h.run(filesCheck(), { force: true });
    expect(summary(forced.findings)).toEqual(
      [
        `blob_size_mismatch Drift ${world.liveFiles[3]!.id}`,
        `missing_blob DataLoss ${hash}`,
        `parent_folder_trashed DataLoss ${youngInTrash}`,
      ].sort(),
    );
    expect(forced.findings.find((f) => f.kind === 'missing_blob')?.detail['affected_file_ids']).toEqual([
      young,
    ]);
  });

  it('cancel mid-scan pauses with the cursor; resume ends with the same findings, no duplicates, scanned_count kept', async () => {
    const { lone, sized, untrashed } = await injectFileFaults();
    const expected = [
      `missing_blob DataLoss ${world.sharedHash}`,
      `missing_blob DataLoss ${lone.hash}`,
      `blob_size_mismatch Drift ${sized.id}`,
      `parent_folder_trashed DataLoss ${untrashed.id}`,
    ].sort();
    const real = filesCheck();
    let checkpoints = 0;
    let cancelOnce = true;
    // An operator's cancel from another process: the status column flips after the 2nd checkpoint.
    const cancelling: ConsistencyCheck = {
      ...real,
      runResumable: (store, options, signal) => {
        const watched: CheckStore = {
          runId: store.runId,
          startedAt: store.startedAt,
          params: store.params,
          options: store.options,
          facts: store.facts,
          status: () => store.status(),
          loadCursor: () => store.loadCursor(),
          recordFinding: (finding) => store.recordFinding(finding),
          dropFinding: (kind, resourceId) => store.dropFinding(kind, resourceId),
          checkpoint: async (cursor, delta, progress, writes) => {
            await store.checkpoint(cursor, delta, progress, writes);
            if (cancelOnce && ++checkpoints === 2) {
              cancelOnce = false;
              await sql(`UPDATE jobs.recoverable_runs SET status = 'CancelRequested' WHERE id = $1`, [
                store.runId,
              ]);
            }
          },
        };
        return real.runResumable(watched, options, signal);
      },
    };
    const first = await h.run(cancelling, { batch_size: 2 });
    expect(first.status).toBe('Paused');
    expect(first.outcome).toMatchObject({ kind: 'ok', extra: { paused: true } });
    expect(first.cursor).not.toBeNull();
    expect(first.cursor?.[0]).toBe(3); // in phase 3, id order
    expect(first.cursor).toHaveLength(1 + 16);
    // The status poll right after a checkpoint reuses the status that UPDATE read, so a cancel that
    // lands just after the 2nd checkpoint is seen at the next batch boundary: 3 batches of 2
    // (the 2 trashed folders, the empty page that ends phase 2, 2 files).
    expect(first.stats['scanned_count']).toBe(4);

    const second = await h.run(cancelling);
    expect(second.runId).toBe(first.runId);
    expect(second.status).toBe('Completed');
    expect(summary(second.findings)).toEqual(expected);
    expect(second.stats['scanned_count']).toBe(world.counts.files + world.counts.trashedFolders);
    expect(second.stats['count']).toBe(4);
  });

  it('a batch replayed after a crash records nothing twice', async () => {
    await injectFileFaults();
    const first = await h.run(filesCheck(), { batch_size: 3 });
    expect(first.findings).toHaveLength(4);
    // Re-run the whole walk as the same run, as after a crash before any checkpoint.
    await sql(
      `UPDATE jobs.recoverable_runs SET status = 'Paused', cursor = NULL, completed_at = NULL WHERE id = $1`,
      [first.runId],
    );
    const replay = await h.run(filesCheck());
    expect(replay.runId).toBe(first.runId);
    expect(replay.findings).toHaveLength(4);
    expect(replay.stats['count']).toBe(4);
    expect(replay.stats['scanned_count']).toBe(2 * (world.counts.files + world.counts.trashedFolders));
  });

  it('refuses invalid params before a run row exists', async () => {
    await expect(h.run(filesCheck(), { batch_size: 0 })).rejects.toThrow(
      /batch_size: expected >=1 \(1\.\.10000\)/,
    );
    const { rows } = await sql('SELECT count(*)::int AS n FROM jobs.recoverable_runs WHERE job_name = $1', [
      FILES_CONSISTENCY_CHECK_NAME,
    ]);
    expect(rows[0].n).toBe(0);
  });
});
