import type { CheckStore, Inconsistency } from '@oxicloud/consistency';
import {
  type CheckpointProgress,
  decodePhaseCursor,
  encodePhaseCursor,
  hashCursor,
  type RunFacts,
  type RunStatus,
  uuidCursor,
} from '@oxicloud/recoverable';
import { describe, expect, it } from 'vitest';
import {
  createDrivesConsistencyCheck,
  createFilesConsistencyCheck,
  createFoldersConsistencyCheck,
  type DriveUsageScan,
  type FileBlobScan,
  type FolderTreeScan,
  folderFindings,
  type ScanPage,
} from '../src/index.js';

/** In-memory CheckStore (the Postgres one is exercised in tests/integration). */
class MemoryStore implements CheckStore {
  readonly runId = '00000000-0000-7000-8000-000000000001';
  readonly startedAt = new Date('2026-03-01T12:00:00Z');
  readonly params = {};
  readonly options = { force: false, deep: false };
  cursor: Uint8Array | null = null;
  scanned = 0;
  count = 0;
  status_: RunStatus = 'Running';
  readonly checkpoints: Uint8Array[] = [];
  readonly findings = new Map<string, Inconsistency>();
  async status() {
    return this.status_;
  }
  get facts(): RunFacts {
    return { attempt: 1, attemptStartedAt: this.startedAt, cursor: this.cursor, counters: {} };
  }
  async loadCursor() {
    return this.cursor;
  }
  async checkpoint(cursor: Uint8Array, delta: number, progress?: CheckpointProgress) {
    this.cursor = cursor;
    this.checkpoints.push(cursor);
    this.count += delta;
    this.scanned += progress?.scanned ?? delta;
  }
  async recordFinding(f: Inconsistency) {
    const key = `${f.kind}/${f.resourceId}`;
    const isNew = !this.findings.has(key);
    this.findings.set(key, f);
    return isNew;
  }
  async dropFinding(kind: string, id: string) {
    return this.findings.delete(`${kind}/${id}`);
  }
}

const ids = (n: number) =>
  Array.from({ length: n }, (_, i) => `00000000-0000-7000-8000-${String(i + 1).padStart(12, '0')}`);
const signal = new AbortController().signal;
const opts = { force: false, deep: false };

/** A key-ordered page of `keys` after `after`. */
function page<T>(
  keys: string[],
  after: string | null,
  limit: number,
  anomalies: (k: string) => T[],
): ScanPage<T> {
  const rows = keys.filter((k) => after === null || k > after).slice(0, limit);
  return { scanned: rows.length, lastKey: rows.at(-1) ?? null, anomalies: rows.flatMap(anomalies) };
}

describe('drives_consistency over a fake port', () => {
  const driveIds = ids(5);
  const userIds = ids(3);
  const calls: string[] = [];
  const scan: DriveUsageScan = {
    subsystem: () => 'used_bytes',
    consistencyChecks: () => [],
    scanDriveUsage: async (after, limit) => {
      calls.push(`drives after ${after} limit ${limit}`);
      return page(driveIds, after, limit, (k) =>
        k === driveIds[3] ? [{ driveId: k, ownerId: userIds[0]!, recordedBytes: 10, actualBytes: 4 }] : [],
      );
    },
    reverifyDriveUsage: async (ds) =>
      ds.map((d) => ({ driveId: d, ownerId: userIds[0]!, recordedBytes: 10, actualBytes: 4 })),
    scanUserUsage: async (after, limit) => {
      calls.push(`users after ${after} limit ${limit}`);
      return page(userIds, after, limit, (k) =>
        k === userIds[2] ? [{ userId: k, recordedBytes: 0, actualBytes: 9, driveCount: 1 }] : [],
      );
    },
    // The envelope was fixed between the passes: Pass 2 drops it.
    reverifyUserUsage: async () => [],
    scanDriveShape: async (after, limit) => {
      calls.push(`shapes after ${after} limit ${limit}`);
      return page(driveIds, after, limit, (k) => (k === driveIds[1] ? [unowned(k)] : []));
    },
    reverifyDriveShape: async (ds) => ds.map(unowned),
    estimateRows: async () => 13,
  };
  const unowned = (driveId: string) => ({
    driveId,
    driveKind: 'shared',
    ownerGrants: 0,
    userOwnerGrants: 0,
    defaultForUser: null,
    rootFolderId: null,
    rootProblems: ['root_unset'],
    ownerProblems: [],
  });

  it('walks drives, users, then the drives’ shapes with a phase-prefixed UUID cursor; drops what healed', async () => {
    const store = new MemoryStore();
    const check = createDrivesConsistencyCheck({ scan });
    expect(check.graceWindowMs(opts)).toBe(0);
    expect(await check.estimateTotal?.(opts)).toBe(13);
    const outcome = await check.runResumable(store, { ...opts, batchSize: 2 }, signal);
    expect(outcome).toEqual({ kind: 'completed' });
    expect(calls).toEqual([
      'drives after null limit 2',
      `drives after ${driveIds[1]} limit 2`,
      `drives after ${driveIds[3]} limit 2`,
      'users after null limit 2',
      `users after ${userIds[1]} limit 2`,
      'shapes after null limit 2',
      `shapes after ${driveIds[1]} limit 2`,
      `shapes after ${driveIds[3]} limit 2`,
    ]);
    const phases = store.checkpoints.map((c) => decodePhaseCursor(c).phase);
    expect(phases).toEqual([1, 1, 2, 2, 3, 3, 3, 3]);
    expect(uuidCursor.decode(decodePhaseCursor(store.checkpoints[1]!).key)).toBe(driveIds[3]);
    expect(store.scanned).toBe(13);
    expect([...store.findings.values()]).toEqual([
      {
        kind: 'drive_used_bytes_drift',
        severity: 'Drift',
        resourceId: driveIds[3],
        detail: { recorded: 10, actual: 4, delta: 6, owner_id: userIds[0] },
        magnitude: 6,
      },
      {
        kind: 'drive_without_owner',
        severity: 'DataLoss',
        resourceId: driveIds[1],
        detail: { drive_kind: 'shared', default_for_user: null, root_folder_id: null },
      },
      {
        kind: 'drive_root_mismatch',
        severity: 'DataLoss',
        resourceId: driveIds[1],
        detail: {
          drive_kind: 'shared',
          default_for_user: null,
          root_folder_id: null,
          problems: ['root_unset'],
        },
      },
    ]);
  });

  it('resumes from a persisted cursor and fails (does not throw) on a foreign cursor', async () => {
    calls.length = 0;
    const store = new MemoryStore();
    store.cursor = encodePhaseCursor(2, uuidCursor.encode(userIds[0]!));
    const check = createDrivesConsistencyCheck({ scan });
    expect((await check.runResumable(store, opts, signal)).kind).toBe('completed');
    expect(calls).toEqual([`users after ${userIds[0]} limit 1000`, 'shapes after null limit 1000']);
    store.cursor = encodePhaseCursor(9);
    const failed = await check.runResumable(store, opts, signal);
    expect(failed.kind).toBe('failed');
    expect(failed.kind === 'failed' && failed.message).toMatch(/cursor phase 9 is unknown/);
  });
});

describe('folders_consistency', () => {
  it('maps one anomalous row to one finding per mismatch with the chosen severities', () => {
    const base = {
      folderId: 'f',
      driveId: 'd',
      parentId: 'p',
      liveUnderTrashedParent: false,
      parentTrashedAt: null,
      path: '/a/b',
      expectedPath: '/a/b',
      lpath: 'x.y',
      expectedLpath: 'x.y',
      parentDriveId: null,
      orphanRoot: false,
    };
    expect(folderFindings(base)).toEqual([]);
    expect(
      folderFindings({ ...base, liveUnderTrashedParent: true, path: '/z', lpath: 'q' }).map((f) => [
        f.kind,
        f.severity,
      ]),
    ).toEqual([
      ['parent_trashed_mismatch', 'DataLoss'],
      ['path_mismatch', 'Drift'],
      ['lpath_mismatch', 'Drift'],
    ]);
    expect(folderFindings({ ...base, parentDriveId: 'd2' }).map((f) => [f.kind, f.severity])).toEqual([
      ['drive_id_parent_mismatch', 'DataLoss'],
    ]);
    // On a cycle the path has no reconstruction: orphan_root alone names the cause.
    expect(
      folderFindings({ ...base, orphanRoot: true, path: '/z', lpath: 'q' }).map((f) => [f.kind, f.severity]),
    ).toEqual([['orphan_root', 'DataLoss']]);
  });

  it('hands the scan a grace boundary from the run start, 0 with force', async () => {
    const seen: Date[] = [];
    const scan: FolderTreeScan = {
      subsystem: () => 'folder_tree',
      consistencyChecks: () => [],
      scanFolderTree: async (_after, _limit, o) => {
        seen.push(o.trashedBefore);
        return { scanned: 0, lastKey: null, anomalies: [] };
      },
      reverifyFolderTree: async () => [],
      estimateRows: async () => null,
    };
    const check = createFoldersConsistencyCheck({ scan });
    const store = new MemoryStore();
    await check.runResumable(store, opts, signal);
    await check.runResumable(store, { ...opts, force: true }, signal);
    expect(seen.map((d) => d.toISOString())).toEqual([
      '2026-03-01T11:00:00.000Z',
      '2026-03-01T12:00:00.000Z',
    ]);
  });
});

describe('files_consistency over a fake port', () => {
  const h = (c: string) => c.repeat(64);
  const fileIds = ids(3);
  // Three files in id order; the second and third reference blob rows that do not exist.
  const files = [
    { blobHash: h('1'), fileId: fileIds[0]!, blobSize: 5 as number | null },
    { blobHash: h('2'), fileId: fileIds[1]!, blobSize: null },
    { blobHash: h('3'), fileId: fileIds[2]!, blobSize: null },
  ];
  const cursorsSeen: Array<string | null> = [];
  const scan: FileBlobScan = {
    subsystem: () => 'files',
    consistencyChecks: () => [],
    missingBlobs: async (hashes) =>
      hashes.map((blobHash) => ({
        blobHash,
        refCount: blobHash === h('3') ? 3 : 1,
        liveFileCount: 1,
        totalBytes: 5,
        affectedFileIds: ['x'],
      })),
    reverifyBlobSizes: async () => [],
    scanTrashedFolders: async () => ({ scanned: 0, lastKey: null, anomalies: [] }),
    reverifyLiveFilesInTrashedFolders: async () => [],
    scanFilesById: async (after, limit) => {
      cursorsSeen.push(after);
      const rows = files.filter((f) => after === null || f.fileId > after).slice(0, limit);
      return {
        scanned: rows.length,
        lastKey: rows.at(-1)?.fileId ?? null,
        anomalies: rows
          .filter((r) => r.blobSize !== 5)
          .map((r) => ({
            fileId: r.fileId,
            driveId: 'd',
            folderId: null,
            folderDriveId: null,
            blobHash: r.blobHash,
            mimeType: 'text/plain',
            blobContentType: null,
            mimeMismatch: false,
            fileSize: 5,
            blobSize: r.blobSize,
          })),
      };
    },
    reverifyFileRows: async () => [],
    estimateRows: async () => 3,
  };

  it('walks trashed folders, then the files by id (1+16-byte cursor) with their blob rows in the same pass; records biggest impact first', async () => {
    cursorsSeen.length = 0;
    const store = new MemoryStore();
    const check = createFilesConsistencyCheck({ scan });
    const outcome = await check.runResumable(store, { ...opts, batchSize: 2 }, signal);
    expect(outcome.kind).toBe('completed');
    expect(decodePhaseCursor(store.checkpoints[0]!).phase).toBe(3);
    expect(cursorsSeen).toEqual([null, fileIds[1]]);
    const byId = decodePhaseCursor(store.checkpoints[1]!);
    expect(byId.phase).toBe(3);
    expect(uuidCursor.decode(byId.key)).toBe(fileIds[1]);
    expect([...store.findings.values()].map((f) => [f.kind, f.severity, f.resourceId])).toEqual([
      ['missing_blob', 'DataLoss', h('2')],
      ['missing_blob', 'DataLoss', h('3')],
    ]);
    expect(store.findings.get(`missing_blob/${h('3')}`)?.detail).toMatchObject({
      ref_count: 3,
      affected_file_ids_truncated: true,
    });
  });

  it("an older build's phase-1 cursor (blob order) restarts at phase 2 and finds the same", async () => {
    cursorsSeen.length = 0;
    const store = new MemoryStore();
    const old = encodePhaseCursor(1, hashCursor.encode(h('2')), uuidCursor.encode(fileIds[1]!));
    store.cursor = old;
    const outcome = await createFilesConsistencyCheck({ scan }).runResumable(
      store,
      { ...opts, batchSize: 10 },
      signal,
    );
    expect(outcome.kind).toBe('completed');
    expect(cursorsSeen).toEqual([null]);
    expect([...store.findings.values()].map((f) => f.resourceId)).toEqual([h('3'), h('2')]);
  });

  it("reads phase 3 from the adapter's stream when it offers one, and closes it when the run stops", async () => {
    cursorsSeen.length = 0;
    const calls: string[] = [];
    const streaming: FileBlobScan = {
      ...scan,
      openFileRowStream: () => ({
        next: async (after, limit) => {
          calls.push(`next ${after ?? 'start'}`);
          return scan.scanFilesById(after, limit, { createdBefore: new Date(), trashedBefore: new Date() });
        },
        close: async () => {
          calls.push('close');
        },
      }),
    };
    const store = new MemoryStore();
    const outcome = await createFilesConsistencyCheck({ scan: streaming }).runResumable(
      store,
      { ...opts, batchSize: 2 },
      signal,
    );
    expect(outcome.kind).toBe('completed');
    expect(calls).toEqual(['next start', `next ${fileIds[1]}`, 'close']);
    expect([...store.findings.values()].map((f) => f.resourceId)).toEqual([h('2'), h('3')]);
  });

  it('returns paused with the cursor when the run is CancelRequested between batches', async () => {
    const store = new MemoryStore();
    store.status_ = 'CancelRequested';
    const outcome = await createFilesConsistencyCheck({ scan }).runResumable(
      store,
      { ...opts, batchSize: 1 },
      signal,
    );
    expect(outcome.kind).toBe('paused');
    expect(store.checkpoints).toHaveLength(1);
    expect(outcome.kind === 'paused' && outcome.cursor).toEqual(store.checkpoints[0]);
  });
});
