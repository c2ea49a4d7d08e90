import { defaultRunArgs, type JobOutcomeOk } from '@oxicloud/scheduler';
import { describe, expect, it } from 'vitest';
import { createContentGcJob, type DedupGcConfig } from '../src/dedup-gc/index.js';
import type { BlobQuarantine, QuarantinedEntry } from '../src/ports/blob-quarantine.js';
import type { ChunkManifestRecord } from '../src/ports/chunk-manifest-record.js';
import type { CollectedBlob, ContentGcRepository } from '../src/ports/content-gc-repository.js';
import { FIXED_NOW, fixedNow, liveSignal, recordingLogger } from './part1-support.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const config: DedupGcConfig = { intervalMs: null, graceMs: HOUR, batchSize: 2, quarantineGraceMs: 7 * DAY };
const ago = (ms: number) => new Date(FIXED_NOW.getTime() - ms);
const h = (n: number) => n.toString(16).padStart(64, '0');

interface Manifest {
  readonly record: ChunkManifestRecord;
  refCount: number;
  createdAt: Date;
}

interface BlobRow {
  refCount: number;
  orphanedAt: Date | null;
  size: number;
}

/**
 * OxiCloud's content tables and a blob store with its quarantine, in memory,
 * with the repository's contract (locks are the single-threaded event loop):
 * every step is written to `journal`, so a test can check the order.
 */
function world() {
  const files = new Set<string>(); // the hashes storage.files rows name
  const manifests = new Map<string, Manifest>();
  const blobs = new Map<string, BlobRow>();
  const objects = new Set<string>(); // the blob area
  const quarantined = new Map<string, Date>();
  const savedManifests = new Map<string, { record: ChunkManifestRecord; at: Date }>();
  const journal: string[] = [];
  const clock = { now: FIXED_NOW };

  const page = (hashes: Iterable<string>, after: string | null, limit: number) =>
    [...hashes]
      .sort()
      .filter((x) => after === null || x > after)
      .slice(0, limit);
  const listed = (hash: string) => [...manifests.values()].some((m) => m.record.chunkHashes.includes(hash));

  const repository: ContentGcRepository = {
    async listManifestCandidates(cutoff, { after, limit }) {
      const keys = [...manifests.entries()]
        .filter(([key, m]) => m.createdAt < cutoff && (!files.has(key) || m.refCount <= 0))
        .map(([key]) => key);
      return page(keys, after, limit);
    },
    async collectManifests(fileHashes, cutoff, beforeDelete) {
      const locked = fileHashes.filter((key) => (manifests.get(key)?.createdAt ?? cutoff) < cutoff);
      const referenced = locked
        .filter((key) => files.has(key))
        .map((key) => ({ fileHash: key, refCount: manifests.get(key)!.refCount }));
      const doomed = locked.filter((key) => !files.has(key)).map((key) => manifests.get(key)!.record);
      await beforeDelete(doomed); // rejects: nothing below happens
      for (const record of doomed) {
        manifests.delete(record.fileHash);
        journal.push(`delete manifest ${record.fileHash.slice(-2)}`);
        for (const chunk of new Set(record.chunkHashes)) {
          const row = blobs.get(chunk);
          if (row === undefined) continue;
          row.refCount = Math.max(0, row.refCount - 1);
          if (row.refCount === 0) row.orphanedAt = clock.now;
        }
      }
      return { deleted: doomed, referenced };
    },
    async listBlobCandidates(cutoff, { after, limit }) {
      const keys = [...blobs.entries()]
        .filter(([, b]) => b.refCount === 0 && (b.orphanedAt === null || b.orphanedAt < cutoff))
        .map(([key]) => key);
      return page(keys, after, limit);
    },
    async collectBlobs(hashes, cutoff, moveBytes) {
      const locked = hashes.filter((key) => {
        const b = blobs.get(key);
        return b !== undefined && b.refCount === 0 && (b.orphanedAt === null || b.orphanedAt < cutoff);
      });
      const referenced = locked.filter((key) => listed(key) || files.has(key));
      const doomed: CollectedBlob[] = locked
        .filter((key) => !referenced.includes(key))
        .map((key) => ({ hash: key, size: blobs.get(key)!.size }));
      await moveBytes(doomed);
      for (const blob of doomed) {
        blobs.delete(blob.hash);
        journal.push(`delete row ${blob.hash.slice(-2)}`);
      }
      return { deleted: doomed, referenced };
    },
    async wantedHashes(hashes) {
      return new Set(hashes.filter((key) => blobs.has(key) || listed(key) || files.has(key)));
    },
    async restoreManifest(record) {
      if (manifests.has(record.fileHash)) return 'present';
      if (!files.has(record.fileHash)) return 'unreferenced';
      manifests.set(record.fileHash, { record, refCount: 1, createdAt: clock.now });
      for (const chunk of new Set(record.chunkHashes)) {
        const row = blobs.get(chunk);
        if (row === undefined) blobs.set(chunk, { refCount: 1, orphanedAt: null, size: 1 });
        else {
          row.refCount += 1;
          row.orphanedAt = null;
        }
      }
      journal.push(`restore manifest ${record.fileHash.slice(-2)}`);
      return 'restored';
    },
  };

  const entries = (source: Map<string, Date>, after: string | null | undefined, limit: number) =>
    page(source.keys(), after ?? null, limit).map(
      (key): QuarantinedEntry => ({
        hash: key,
        quarantinedAt: source.get(key)!,
      }),
    );
  const quarantine: BlobQuarantine & { failSave: boolean } = {
    failSave: false,
    async quarantineBlob(hash) {
      if (!objects.delete(hash)) return false;
      quarantined.set(hash, clock.now);
      journal.push(`quarantine ${hash.slice(-2)}`);
      return true;
    },
    async restoreBlob(hash) {
      if (!quarantined.delete(hash)) return false;
      objects.add(hash);
      journal.push(`restore ${hash.slice(-2)}`);
      return true;
    },
    async listQuarantinedBlobs({ startAfter, limit }) {
      return entries(quarantined, startAfter, limit);
    },
    async purgeQuarantinedBlob(hash) {
      journal.push(`purge ${hash.slice(-2)}`);
      return quarantined.delete(hash);
    },
    async saveManifest(record) {
      if (quarantine.failSave) throw new Error('disk full');
      savedManifests.set(record.fileHash, { record, at: clock.now });
      journal.push(`save manifest ${record.fileHash.slice(-2)}`);
    },
    async listQuarantinedManifests({ startAfter, limit }) {
      const at = new Map([...savedManifests].map(([key, v]) => [key, v.at]));
      return entries(at, startAfter, limit);
    },
    async readQuarantinedManifest(fileHash) {
      return savedManifests.get(fileHash)?.record ?? null;
    },
    async purgeQuarantinedManifest(fileHash) {
      return savedManifests.delete(fileHash);
    },
  };

  /** A blob row and its bytes, `refCount` references, orphaned `orphanedAgo` ms ago when 0. */
  const blob = (n: number, refCount: number, orphanedAgo = 2 * HOUR) => {
    blobs.set(h(n), { refCount, orphanedAt: refCount === 0 ? ago(orphanedAgo) : null, size: 100 + n });
    objects.add(h(n));
  };
  /** A manifest of `chunks`, created `createdAgo` ms ago (its chunks' counts are the caller's). */
  const manifest = (n: number, chunks: number[], refCount = 1, createdAgo = 2 * HOUR) => {
    const record: ChunkManifestRecord = {
      fileHash: h(n),
      chunkHashes: chunks.map(h),
      chunkSizes: chunks.map((c) => 100 + c),
      totalSize: chunks.reduce((sum, c) => sum + 100 + c, 0),
      contentType: null,
    };
    manifests.set(h(n), { record, refCount, createdAt: ago(createdAgo) });
  };

  return {
    files,
    manifests,
    blobs,
    objects,
    quarantined,
    savedManifests,
    journal,
    clock,
    repository,
    quarantine,
    blob,
    manifest,
  };
}

const run = (w: ReturnType<typeof world>, options: { force?: boolean; signal?: AbortSignal } = {}) => {
  const logger = recordingLogger();
  let tick = 0;
  const job = createContentGcJob({
    repository: w.repository,
    quarantine: w.quarantine,
    config,
    logger,
    // A clock that moves on (1 ms a call), as a real one does between phase 1 and phase 2.
    now: () => new Date(fixedNow().getTime() + tick++),
  });
  return {
    logger,
    outcome: job.run({ ...defaultRunArgs, force: options.force ?? false }, options.signal ?? liveSignal()),
  };
};

describe("dedup_gc on OxiCloud's domain (createContentGcJob)", () => {
  it('collects a manifest no file names, then its chunks at count 0: manifest saved before its row goes, bytes quarantined before their rows go, never unlinked', async () => {
    const w = world();
    w.blob(1, 1);
    w.blob(2, 2); // also in a live manifest
    w.manifest(10, [1, 2]); // no file names it
    w.manifest(11, [2]);
    w.files.add(h(11));
    const { outcome } = run(w, { force: true });
    const result = (await outcome) as JobOutcomeOk;
    expect(result.kind).toBe('ok');
    expect(result.count).toBe(1);
    expect(result.extra).toMatchObject({
      manifests_deleted: 1,
      blobs_deleted: 1,
      quarantined: 1,
      bytes_freed: 101,
    });
    expect(w.journal).toEqual(['save manifest 0a', 'delete manifest 0a', 'quarantine 01', 'delete row 01']);
    expect(w.quarantined.has(h(1))).toBe(true);
    expect(w.blobs.get(h(2))?.refCount).toBe(1);
    expect(w.objects.has(h(2))).toBe(true);
    expect([...w.manifests.keys()]).toEqual([h(11)]);
  });

  it('respects the grace: a manifest or an orphan younger than it is kept; force collects them', async () => {
    const w = world();
    w.blob(1, 0, HOUR / 2);
    w.manifest(10, [], 1, HOUR / 2);
    const kept = (await run(w).outcome) as JobOutcomeOk;
    expect(kept.extra).toMatchObject({
      manifests_deleted: 0,
      blobs_deleted: 0,
      grace_seconds: 3600,
      forced: false,
    });
    expect(w.blobs.has(h(1))).toBe(true);
    const forced = (await run(w, { force: true }).outcome) as JobOutcomeOk;
    expect(forced.extra).toMatchObject({
      manifests_deleted: 1,
      blobs_deleted: 1,
      grace_seconds: 0,
      forced: true,
    });
  });

  it('keeps a count-0 blob a manifest lists or a file names, and a low-count manifest files name, and says so', async () => {
    const w = world();
    w.blob(1, 0); // listed by manifest 11: its count is wrong
    w.blob(2, 0); // a legacy file names it
    w.files.add(h(2));
    w.manifest(11, [1], 0);
    w.files.add(h(11));
    const { outcome, logger } = run(w);
    const result = (await outcome) as JobOutcomeOk;
    expect(result.extra).toMatchObject({ blobs_deleted: 0, skipped_referenced: 2, manifests_referenced: 1 });
    expect(w.journal).toEqual([]);
    const events = logger.lines.map((line) => line.fields['event']);
    expect(events).toEqual(['dedup_gc.manifest_count_low', 'dedup_gc.skipped_referenced']);
    expect(logger.lines[1]?.fields['hashes']).toEqual([h(1), h(2)]);
  });

  it('pages through more candidates than one batch', async () => {
    const w = world();
    for (let n = 1; n <= 5; n++) w.blob(n, 0);
    const result = (await run(w).outcome) as JobOutcomeOk;
    expect(result.count).toBe(5);
    expect(w.blobs.size).toBe(0);
    expect(w.quarantined.size).toBe(5);
  });

  it('the sweep moves back a quarantined blob that is wanted again, purges only past the quarantine grace (force does not shorten it)', async () => {
    const w = world();
    w.quarantined.set(h(1), ago(8 * DAY)); // wanted again: a file row names it now
    w.files.add(h(1));
    w.quarantined.set(h(2), ago(8 * DAY)); // nothing wants it, past the grace
    w.quarantined.set(h(3), ago(6 * DAY)); // nothing wants it, inside the grace
    const result = (await run(w, { force: true }).outcome) as JobOutcomeOk;
    expect(result.extra).toMatchObject({
      restored: 1,
      resumed: 1,
      purged: 1,
      quarantine_grace_seconds: 7 * 86_400,
    });
    expect(w.objects.has(h(1))).toBe(true);
    expect([...w.quarantined.keys()]).toEqual([h(3)]);
  });

  it('puts back a saved manifest that files name again (an upload attached to it while it was collected)', async () => {
    const w = world();
    w.blob(1, 1);
    w.manifest(10, [1]);
    await run(w, { force: true }).outcome; // collected: manifest saved, chunk quarantined
    expect(w.manifests.has(h(10))).toBe(false);
    expect(w.quarantined.has(h(1))).toBe(true);
    w.files.add(h(10)); // the upload's file row commits
    const result = (await run(w).outcome) as JobOutcomeOk;
    expect(result.extra).toMatchObject({ manifests_restored: 1, restored: 1 });
    expect(w.manifests.get(h(10))?.refCount).toBe(1);
    expect(w.blobs.get(h(1))?.refCount).toBe(1);
    expect(w.objects.has(h(1))).toBe(true);
    expect(w.quarantined.size).toBe(0);
  });

  it('when the manifest cannot be saved, the run fails and no row is deleted', async () => {
    const w = world();
    w.blob(1, 1);
    w.manifest(10, [1]);
    w.quarantine.failSave = true;
    const result = await run(w, { force: true }).outcome;
    expect(result.kind).toBe('err');
    if (result.kind === 'err')
      expect(result.message).toMatch(/^dedup_gc failed after 0 blobs collected.*: disk full$/);
    expect(w.manifests.has(h(10))).toBe(true);
    expect(w.blobs.get(h(1))?.refCount).toBe(1);
  });

  it('an aborted run stops before its next batch and says what it did', async () => {
    const w = world();
    w.blob(1, 0);
    const controller = new AbortController();
    controller.abort(new Error('shutdown'));
    const result = await run(w, { signal: controller.signal }).outcome;
    expect(result.kind).toBe('err');
    if (result.kind === 'err')
      expect(result.message).toMatch(/^dedup_gc aborted \(.*shutdown.*\) after 0 blobs collected/);
    expect(w.blobs.has(h(1))).toBe(true);
  });
});
