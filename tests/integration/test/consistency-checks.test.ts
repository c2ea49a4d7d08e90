import type { CheckStore, ConsistencyCheck } from '@oxicloud/consistency';
import { categoryOrderFor } from '@oxicloud/storage';
import { OxiFileContentScan } from '@oxicloud/storage/oxicloud';
import {
  createFilesConsistencyCheck,
  FILES_CONSISTENCY_CHECK_NAME,
  type FileBlobScan,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type OxiWorld,
  oxiWorld,
  type Upload,
} from '../../../packages/storage/src/oxicloud/test-fixtures.js';
import { type ConsistencyHarness, consistencyHarness, summary } from './consistency-fixtures.js';

/**
 * What every check gets from the engine, on OxiCloud's domain and its
 * files_consistency (OxiFileContentScan): the grace counted from the run's
 * start, Pass 2 re-reading what Pass 1 flagged, a cancel that pauses with
 * its cursor and a resume that finds the same once, a replayed batch that
 * records nothing twice, params refused before a run row exists. Which
 * drift each check reports, kind by kind, is the adapters' own tests
 * (`packages/storage/src/oxicloud/oxi-*.test.ts`).
 */

let db: TestDatabase;
let h: ConsistencyHarness;
let w: OxiWorld;
/** Live legacy files in `/work`, two of them sharing one blob. */
let live: Upload[];
/** Files of the trashed folder `/old`. */
let trashed: Upload[];
let oldFolder: string;
let work: string;
/** Rows files_consistency walks: every file, then every trashed folder. */
let walked: number;

beforeEach(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  h = consistencyHarness(db.pool);
  w = await oxiWorld(db.pool);
  work = await w.folder('work');
  oldFolder = await w.folder('old');
  const shared = Buffer.from('shared legacy bytes');
  live = [];
  for (let i = 0; i < 8; i++) {
    const data = i < 2 ? shared : Buffer.from(`legacy file ${i} `.repeat(i + 1));
    live.push(await w.upload({ name: `f${i}`, folderId: work, data, legacy: true }));
  }
  trashed = [];
  for (let i = 0; i < 3; i++) trashed.push(await w.upload({ name: `t${i}`, folderId: oldFolder }));
  await w.trashFolder(oldFolder);
  const { rows } = await db.pool.query<{ n: number }>(
    'SELECT (SELECT count(*) FROM storage.files)::int + (SELECT count(*) FROM storage.folders WHERE is_trashed)::int AS n',
  );
  walked = rows[0]!.n;
});
afterEach(async () => {
  await h.engine.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
  await db.drop();
});

const sql = (text: string, values: unknown[] = []) => db.pool.query(text, values);
const filesCheck = () => h.files.consistencyChecks()[0] as ConsistencyCheck;

describe('files_consistency through the engine', () => {
  /** A legacy blob row gone under two files and under one, a size drifted, a file untrashed alone. */
  async function injectFileFaults() {
    const sharedHash = live[0]!.hash;
    const lone = live[5]!;
    await sql('DELETE FROM storage.blobs WHERE hash = ANY($1)', [[sharedHash, lone.hash]]);
    const sized = live[6]!;
    await sql('UPDATE storage.files SET size = size + 10 WHERE id = $1', [sized.fileId]);
    const untrashed = trashed[0]!;
    await sql('UPDATE storage.files SET is_trashed = false, trashed_at = NULL WHERE id = $1', [
      untrashed.fileId,
    ]);
    const expected = [
      `missing_blob DataLoss ${sharedHash}`,
      `missing_blob DataLoss ${lone.hash}`,
      `blob_size_mismatch Drift ${sized.fileId}`,
      `parent_folder_trashed DataLoss ${untrashed.fileId}`,
    ].sort();
    return { sharedHash, lone, sized, untrashed, expected };
  }

  it('reports the injected faults, the shared blob with both its files', async () => {
    const { sharedHash, expected } = await injectFileFaults();
    const run = await h.run(filesCheck());
    expect(run.status).toBe('Completed');
    expect(summary(run.findings)).toEqual(expected);
    expect(run.findings.find((f) => f.resourceId === sharedHash)?.detail['affected_file_ids']).toEqual(
      [live[0]!.fileId, live[1]!.fileId].sort(),
    );
    expect(run.stats).toMatchObject({ count: 4, findings_missing_blob: 2 });
  });

  it('Pass 2 drops a file deleted mid-scan and a blob that landed mid-scan', async () => {
    const { sharedHash, lone, sized } = await injectFileFaults();
    // Between Pass 1 (the page) and Pass 2 (the re-read): the lone file is
    // deleted, the shared blob's row lands, the resized file is deleted.
    // Unsegmented, so every page goes through scanFilesById (the segments' stream is OxiFileRowStream's test).
    const real: FileBlobScan = new OxiFileContentScan(h.db, { segmentRows: 0 });
    let raced = false;
    const racing = new Proxy(real, {
      get(target, key) {
        if (key === 'consistencyChecks') return () => [];
        if (key === 'scanFilesById') {
          return async (...args: Parameters<FileBlobScan['scanFilesById']>) => {
            const page = await target.scanFilesById(...args);
            if (page.anomalies.length > 0 && !raced) {
              raced = true;
              await sql('DELETE FROM storage.files WHERE id = ANY($1)', [[lone.fileId, sized.fileId]]);
              await sql(
                "INSERT INTO storage.blobs (hash, size, ref_count, content_type) VALUES ($1, $2, 2, 'application/octet-stream') ON CONFLICT DO NOTHING",
                [sharedHash, live[0]!.size],
              );
            }
            return page;
          };
        }
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const check = createFilesConsistencyCheck({ scan: racing });
    const run = await h.run(check);
    expect(run.status).toBe('Completed');
    // Only the live file in the trashed folder is left.
    expect(run.findings.map((f) => f.kind)).toEqual(['parent_folder_trashed']);
    expect(run.stats['findings_dropped']).toBeUndefined();
  });

  it('skips files younger than the grace window unless forced (grace from the run start)', async () => {
    // A file that lands now (inside the 1 h grace) whose legacy blob row is gone: missing, once forced.
    const hash = '9'.repeat(64);
    const young = (
      await sql(
        `INSERT INTO storage.files (drive_id, folder_id, name, blob_hash, size, category_order)
         VALUES ($1, $2, 'new', $3, 5, ${categoryOrderFor('f', 'application/octet-stream')}) RETURNING id`,
        [w.driveId, work, hash],
      )
    ).rows[0].id;
    // A young live file in the trashed folder, and an old file whose size now differs from its blob.
    const youngInTrash = (
      await sql(
        `INSERT INTO storage.files (drive_id, folder_id, name, blob_hash, size, category_order)
         VALUES ($1, $2, 'new2', $3, $4, ${categoryOrderFor('f', 'application/octet-stream')}) RETURNING id`,
        [w.driveId, oldFolder, live[3]!.hash, live[3]!.size],
      )
    ).rows[0].id;
    await sql('UPDATE storage.files SET size = size + 5 WHERE id = $1', [live[3]!.fileId]);
    const graced = await h.run(filesCheck());
    expect(summary(graced.findings)).toEqual([`blob_size_mismatch Drift ${live[3]!.fileId}`]);
    const forced = await h.run(filesCheck(), { force: true });
    expect(summary(forced.findings)).toEqual(
      [
        `blob_size_mismatch Drift ${live[3]!.fileId}`,
        `missing_blob DataLoss ${hash}`,
        `parent_folder_trashed DataLoss ${youngInTrash}`,
      ].sort(),
    );
    expect(forced.findings.find((f) => f.kind === 'missing_blob')?.detail['affected_file_ids']).toEqual([
      young,
    ]);
  });

  it('cancel mid-scan pauses with the cursor; resume ends with the same findings, no duplicates, scanned_count kept', async () => {
    const { expected } = await injectFileFaults();
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
    // It stopped part of the way: some rows walked, not all.
    const scannedFirst = Number(first.stats['scanned_count']);
    expect(scannedFirst).toBeGreaterThan(0);
    expect(scannedFirst).toBeLessThan(walked);

    const second = await h.run(cancelling);
    expect(second.runId).toBe(first.runId);
    expect(second.status).toBe('Completed');
    expect(summary(second.findings)).toEqual(expected);
    expect(second.stats['scanned_count']).toBe(walked);
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
    expect(replay.stats['scanned_count']).toBe(2 * walked);
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
