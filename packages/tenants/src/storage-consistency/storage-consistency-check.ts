/**
 * storage_consistency: the blob backend (local disk or S3) against `storage.blobs`.
 *
 * The five decisions (ConsistencyCheck's "for implementors"):
 *
 * 1. Direction. BOTH, in one merge walk. Each batch lists up to N keys from
 *    the backend in hash order after the cursor and range-reads the rows of
 *    `storage.blobs` over the same interval `(cursor, last listed key]` (to
 *    the end of the table once the listing is exhausted); the comparison runs
 *    in SQL and only the anomalies come back:
 *    - backward (bytes → row): a listed key without a row is an orphan. A
 *      row with `ref_count = 0` is not: with `orphaned_at` set it is the
 *      orphaned-but-not-yet-collected state (GC collects it), and without
 *      `orphaned_at` (never marked, so GC never collects it) it is
 *      `blobs_consistency`'s `orphaned_at_mismatch`: the row's own columns
 *      disagree, which the blob-row check owns, so this check skips it.
 *    - forward (row → bytes): a row whose key the backend did not list has
 *      lost its bytes.
 *    `?deep=true` also re-hashes every listed blob (worker threads that read
 *    the file themselves; 4 blobs in flight for 2 workers, so neither waits
 *    for the event loop) and sniffs its mime type from the first bytes.
 * 2. Severity.
 *    - `orphan_blob`: `Reclaimable` (disk waste, no user impact).
 *    - `missing_blob_bytes`: `DataLoss` (every GET of every file pointing at
 *      the hash fails); detail carries `ref_count`, the file count and up to
 *      20 file ids; recorded biggest impact first within a batch. A row that
 *      nothing references (`ref_count = 0` and no file) is not data loss and
 *      is left to dedup GC.
 *    - `blob_hash_mismatch`: `DataLoss` (the bytes are not what was uploaded).
 *    - `blob_mime_mismatch`: `Drift` (the bytes are intact; the recorded
 *      content type is wrong, so clients get the wrong `Content-Type`).
 * 3. Cursor. Phase byte 1 + the 32-byte hash of the last key of the interval
 *    (both sides are done up to and including it): the rows after the last
 *    listed key are the tail of the same merge (the interval is open-ended
 *    once the listing is exhausted). A batch cut short by an abort during
 *    deep hashing ends at the last fully-checked key. With a `thumbnails`
 *    store, phase 2 then walks the thumbnailed content hashes (phase byte 2
 *    + the last hash): `orphan_thumbnail` (`Reclaimable`, magnitude bytes),
 *    the thumbnails of a hash that is neither a manifest's `file_hash` nor a
 *    blob row (fact sheet §12 item 19; job-registry.md folds the former
 *    thumbnail check in here). Pass 2 re-asks the index and re-reads the
 *    files; grace on the newest file's modification time.
 * 4. Grace. 1 h from the run's `startedAt` (bytes by their `modifiedAt`,
 *    rows by `created_at`): an upload whose row lands a moment after its
 *    bytes is neither orphan nor missing. Deep re-hashing only looks at bytes
 *    older than 24 h (a partial upload is never hashed). `force` makes both 0.
 * 5. Before the walk, the store canary (`store-canary.ts`, the check's
 *    `preflight`): a few rows' objects read back and hashed. When none reads
 *    back as itself the run fails with "wrong storage root / key" and
 *    reports nothing: a wrong OXICLOUD_STORAGE_PATH would otherwise be every
 *    object missing.
 * 6. Batch. N = 1000 keys or 30 s (`runBatches` of `@oxicloud/recoverable`), checkpoint + status poll
 *    between batches. Pass 2 re-reads the other side before recording:
 *    orphan → re-read the row (landed → drop) and re-head the bytes (collected
 *    → drop); missing → re-head the bytes (landed → drop) and re-read the row
 *    (deleted → drop); hash mismatch → re-head (rewritten → re-hash);
 *    mime mismatch → re-read the recorded type.
 * 7. Closing (findings across runs). A `Completed` run merged the whole
 *    listing with every row; an `orphan_blob` or `missing_blob_bytes` it did
 *    not report again, that pass 2 did not drop, and whose last report came
 *    from a run whose grace boundary is not later than this run's is `fixed`
 *    (bytes collected, or a row deleted, fix theirs). `blob_hash_mismatch` and
 *    `blob_mime_mismatch` are examined by deep runs only (`kindGraceMs`): a
 *    normal run never fixes them, a deep run judges them against its 24 h
 *    boundary. Magnitude: `orphan_blob` its size in bytes,
 *    `missing_blob_bytes` the number of files referencing it; the mismatches
 *    have none.
 */
import {
  type CheckOptions,
  type CheckStore,
  CONSISTENCY_LOG_TARGET,
  type ConsistencyCheck,
  DEEP_GRACE_WINDOW_MS,
  DEFAULT_GRACE_WINDOW_MS,
  effectiveGraceMs,
  graceBoundary,
  type Inconsistency,
  twoPass,
} from '@oxicloud/consistency';
import {
  decodePhaseCursor,
  encodePhaseCursor,
  hashCursor,
  type RunOutcome,
  runBatches,
  type ScanBatch,
  scanBatch,
} from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import { TenantsError } from '../errors.js';
import type { BlobHasher, StoredBlobDigest } from '../ports/blob-hasher.js';
import type { BlobEntry, BlobStorage } from '../ports/blob-storage.js';
import type { BlobIndexRow, BlobIndexScan } from './blob-index-scan.js';
import { mapLimit } from './map-limit.js';
import { type MimeSniff, mimeContradicts, sniffMime } from './mime-sniff.js';
import { storeCanary } from './store-canary.js';
import type { ThumbnailEntry, ThumbnailStore } from './thumbnail-store.js';

/** Job name of the check. */
export const STORAGE_CONSISTENCY_CHECK_NAME = 'storage_consistency';
/** Finding kinds of storage_consistency. */
export const ORPHAN_BLOB = 'orphan_blob';
export const MISSING_BLOB_BYTES = 'missing_blob_bytes';
export const BLOB_HASH_MISMATCH = 'blob_hash_mismatch';
export const BLOB_MIME_MISMATCH = 'blob_mime_mismatch';
export const ORPHAN_THUMBNAIL = 'orphan_thumbnail';
/** At most this many file ids are listed in a `missing_blob_bytes` finding's detail. */
export const MISSING_BYTES_MAX_FILE_IDS = 20;

const PHASE_MERGE = 1;
const PHASE_THUMBNAILS = 2;
const KEY_LENGTHS = { [PHASE_MERGE]: 32, [PHASE_THUMBNAILS]: 32 };
/** Backend HEAD calls in flight during Pass 2. */
const HEAD_CONCURRENCY = 8;

/** Options of {@link createStorageConsistencyCheck}. */
export interface StorageConsistencyCheckOptions {
  /** The backend walked (its `list` must be in ascending hash order). */
  readonly blobs: BlobStorage;
  /** `storage.blobs`, read over the same hash intervals. */
  readonly index: BlobIndexScan;
  /** Re-hashes bytes off the event loop (deep mode). */
  readonly hasher: BlobHasher;
  /** @defaultValue 1 h */
  readonly graceWindowMs?: number;
  /** Age the bytes must have before deep mode re-hashes them. @defaultValue 24 h */
  readonly deepGraceWindowMs?: number;
  /**
   * Blobs re-hashed at once in deep mode. Four times the hashing pool's 2
   * workers by default, so a worker never waits for the event loop (mime
   * sniffing, the next job's message) between two blobs: on 100,000 blobs of
   * ~22 KiB, 8 took 8.7 s where 4 took 12.3 s (bench/results.md).
   * @defaultValue 8
   */
  readonly hashConcurrency?: number;
  /**
   * OxiCloud's thumbnails (its storage root's `.thumbnails`): walked in a
   * second phase for `orphan_thumbnail`. Needs `index.unknownContentHashes`.
   * Without it the check has no such phase and no such kind.
   */
  readonly thumbnails?: ThumbnailStore;
  readonly logger?: Logger;
}

type Item =
  | { readonly kind: typeof ORPHAN_BLOB; readonly entry: BlobEntry }
  | { readonly kind: typeof MISSING_BLOB_BYTES; readonly row: BlobIndexRow }
  | {
      readonly kind: typeof BLOB_HASH_MISMATCH;
      readonly entry: BlobEntry;
      readonly digest: StoredBlobDigest;
      readonly row: BlobIndexRow | null;
    }
  | {
      readonly kind: typeof BLOB_MIME_MISMATCH;
      readonly entry: BlobEntry;
      readonly sniffed: MimeSniff;
      readonly row: BlobIndexRow;
    }
  | { readonly kind: typeof ORPHAN_THUMBNAIL; readonly thumbnail: ThumbnailEntry };

/** Per-run constants. */
interface RunContext {
  readonly boundary: Date;
  readonly deep: boolean;
  readonly deepBoundary: Date;
  readonly signal: AbortSignal;
  /** The next page's listing, already asked for (read ahead while this page is checked). */
  listAhead: { readonly after: string; readonly limit: number; readonly listed: Promise<BlobEntry[]> } | null;
}

type UnknownContent = NonNullable<BlobIndexScan['unknownContentHashes']>;

function isOld(modifiedAt: Date | undefined, boundary: Date): boolean {
  // A backend that does not know the age of its bytes: Pass 2 is the only guard.
  return modifiedAt === undefined || modifiedAt.getTime() <= boundary.getTime();
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error
    ? String((error as { code: unknown }).code)
    : undefined;
}

function iso(date: Date | null | undefined): string | null {
  return date ? date.toISOString() : null;
}

function positiveInteger(name: string, value: number | undefined, fallback: number, min: number): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v < min) {
    throw new TenantsError(
      'INVALID_CONFIG',
      `createStorageConsistencyCheck: ${name} must be an integer of at least ${min}, got ${String(value)}`,
    );
  }
  return v;
}

/**
 * The `storage_consistency` check: the blob backend walked in hash order and
 * merged with `storage.blobs`. Findings (resource = blob hash):
 * `orphan_blob` (`Reclaimable`), `missing_blob_bytes` (`DataLoss`), and in
 * deep mode `blob_hash_mismatch` (`DataLoss`) and `blob_mime_mismatch` (`Drift`).
 *
 * @example
 * ```ts
 * const blobs = new LocalFsBlobStorage({
 *   root,
 *   consistencyChecks: (self) => [
 *     createStorageConsistencyCheck({ blobs: self, index: new OxiBlobIndexScan(db), hasher: createBlobHasher(self, pool) }),
 *   ],
 * });
 * ```
 */
export function createStorageConsistencyCheck(options: StorageConsistencyCheckOptions): ConsistencyCheck {
  const { blobs, index, hasher, logger, thumbnails } = options;
  if (!blobs || !index || !hasher) {
    throw new TenantsError('INVALID_CONFIG', 'createStorageConsistencyCheck needs blobs, index and hasher');
  }
  // The thumbnails phase, resolved once: the store and the index's content lookup, or none.
  let thumbnailPhase: { store: ThumbnailStore; unknown: UnknownContent } | null = null;
  if (thumbnails !== undefined) {
    const unknown = index.unknownContentHashes?.bind(index);
    if (unknown === undefined) {
      throw new TenantsError(
        'INVALID_CONFIG',
        'createStorageConsistencyCheck: a thumbnails store needs an index with unknownContentHashes',
      );
    }
    thumbnailPhase = { store: thumbnails, unknown };
  }
  const graceMs = positiveInteger('graceWindowMs', options.graceWindowMs, DEFAULT_GRACE_WINDOW_MS, 0);
  const deepGraceMs = positiveInteger(
    'deepGraceWindowMs',
    options.deepGraceWindowMs,
    DEEP_GRACE_WINDOW_MS,
    0,
  );
  const hashConcurrency = positiveInteger('hashConcurrency', options.hashConcurrency, 8, 1);

  /** Deep mode over the listed keys of one interval; `undone` = the first key whose hash did not finish (abort). */
  async function deepCheck(
    entries: readonly BlobEntry[],
    rows: ReadonlyMap<string, BlobIndexRow>,
    ctx: RunContext,
  ): Promise<{ items: Item[]; firstUndone: number | null }> {
    const targets = entries
      .map((entry, position) => ({ entry, position }))
      .filter(({ entry }) => isOld(entry.modifiedAt, ctx.deepBoundary));
    const results = await mapLimit(targets, hashConcurrency, async ({ entry }) => {
      if (ctx.signal.aborted) return { done: false as const };
      try {
        const digest = await hasher.hashStoredBlob(entry.hash, ctx.signal);
        const sniffed = digest.hash === entry.hash ? await sniffMime(digest.head) : null;
        return { done: true as const, digest, sniffed };
      } catch (error) {
        if (ctx.signal.aborted) return { done: false as const };
        if (errorCode(error) === 'NOT_FOUND') return { done: true as const, digest: null, sniffed: null };
        throw error;
      }
    });
    const items: Item[] = [];
    let firstUndone: number | null = null;
    for (const [i, target] of targets.entries()) {
      const result = results[i];
      if (!result?.done) {
        firstUndone = target.position;
        break;
      }
      const { entry } = target;
      const row = rows.get(entry.hash) ?? null;
      if (result.digest === null) continue; // deleted since the listing: nothing to hash
      if (result.digest.hash !== entry.hash) {
        items.push({ kind: BLOB_HASH_MISMATCH, entry, digest: result.digest, row });
      } else if (
        row !== null &&
        result.sniffed !== null &&
        mimeContradicts(row.contentType, result.sniffed)
      ) {
        items.push({ kind: BLOB_MIME_MISMATCH, entry, sniffed: result.sniffed, row });
      }
    }
    return { items, firstUndone };
  }

  async function fetchBatch(
    cursor: Uint8Array | null,
    limit: number,
    ctx: RunContext,
  ): Promise<ScanBatch<Item>> {
    const at =
      cursor === null
        ? { phase: PHASE_MERGE, key: new Uint8Array() }
        : decodePhaseCursor(cursor, KEY_LENGTHS);
    const after = at.key.length === 0 ? null : hashCursor.decode(at.key);
    if (at.phase === PHASE_THUMBNAILS) return fetchThumbnails(after, limit, ctx);
    const batch = await fetchMerge(after, limit, ctx);
    // The merge is over: the thumbnails next, when there is a store of them.
    if (batch.done && thumbnailPhase !== null) {
      return { ...batch, cursor: encodePhaseCursor(PHASE_THUMBNAILS), done: false };
    }
    return batch;
  }

  /** Phase 2: a page of thumbnailed hashes; the ones that name no content are orphans. */
  async function fetchThumbnails(
    after: string | null,
    limit: number,
    ctx: RunContext,
  ): Promise<ScanBatch<Item>> {
    // A run paused in this phase and resumed by a server without a thumbnails store: nothing left to walk.
    if (thumbnailPhase === null)
      return { scanned: 0, items: [], cursor: encodePhaseCursor(PHASE_THUMBNAILS), done: true };
    const listed = await thumbnailPhase.store.list({ startAfter: after, limit });
    const unknown = new Set(
      listed.length === 0 ? [] : await thumbnailPhase.unknown(listed.map((t) => t.hash)),
    );
    const items: Item[] = listed
      .filter((t) => unknown.has(t.hash) && isOld(t.modifiedAt, ctx.boundary))
      .map((thumbnail) => ({ kind: ORPHAN_THUMBNAIL, thumbnail }));
    const last = listed.at(-1)?.hash ?? null;
    return {
      scanned: listed.length,
      items,
      cursor:
        last === null
          ? encodePhaseCursor(PHASE_THUMBNAILS, after === null ? new Uint8Array() : hashCursor.encode(after))
          : encodePhaseCursor(PHASE_THUMBNAILS, hashCursor.encode(last)),
      done: listed.length < limit,
    };
  }

  async function fetchMerge(after: string | null, limit: number, ctx: RunContext): Promise<ScanBatch<Item>> {
    const listed = await listPage(after, limit, ctx);
    const upTo = listed.length < limit ? null : (listed[listed.length - 1] as BlobEntry).hash;
    // The next page is listed while this one is checked (and, deep, hashed): the next batch starts
    // where this listing ends unless the index cut the interval short or an abort truncated it, and
    // then the listing read ahead is dropped. Listing a local disk is a readdir per leaf folder and
    // a stat per blob: on a large store, as long as hashing the page (bench/results.md).
    if (upTo !== null) {
      const next = blobs.list({ startAfter: upTo, limit });
      next.catch(() => undefined); // the batch that uses it awaits it and sees the error
      ctx.listAhead = { after: upTo, limit, listed: next };
    }
    const range = await index.scanRange({
      after,
      upTo,
      limit,
      listedHashes: listed.map((e) => e.hash),
    });
    // The interval this batch covers: (after, bound]; null = to the end.
    let bound: string | null = range.cutAt ?? upTo;
    let covered = bound === null ? listed : listed.filter((e) => e.hash <= (bound as string));
    let truncated = false;
    const deepItems: Item[] = [];
    if (ctx.deep && covered.length > 0) {
      const rows = new Map((await index.rowsByHash(covered.map((e) => e.hash))).map((r) => [r.hash, r]));
      const deep = await deepCheck(covered, rows, ctx);
      deepItems.push(...deep.items);
      if (deep.firstUndone !== null) {
        // Aborted mid-batch: end the batch at the last fully checked key.
        truncated = true;
        const last = deep.firstUndone > 0 ? (covered[deep.firstUndone - 1] as BlobEntry).hash : after;
        covered = covered.slice(0, deep.firstUndone);
        bound = last;
      }
    }
    const within = (hash: string): boolean =>
      truncated ? bound !== null && hash <= bound : bound === null || hash <= bound;
    const byHash = new Map(covered.map((e) => [e.hash, e]));
    const items: Item[] = [];
    for (const hash of range.listedWithoutRow) {
      const entry = byHash.get(hash);
      if (entry && within(hash) && isOld(entry.modifiedAt, ctx.boundary)) {
        items.push({ kind: ORPHAN_BLOB, entry });
      }
    }
    const notListed = range.rowsNotListed.filter((row) => within(row.hash));
    for (const row of notListed) {
      if (isOld(row.createdAt, ctx.boundary)) items.push({ kind: MISSING_BLOB_BYTES, row });
    }
    items.push(...deepItems);

    const done = !truncated && bound === null;
    let lastHash = after;
    for (const hash of [...covered.map((e) => e.hash), ...notListed.map((r) => r.hash)]) {
      if (lastHash === null || hash > lastHash) lastHash = hash;
    }
    const cursorKey = done ? lastHash : bound;
    return {
      scanned: covered.length + notListed.length,
      items,
      cursor:
        cursorKey === null
          ? encodePhaseCursor(PHASE_MERGE)
          : encodePhaseCursor(PHASE_MERGE, hashCursor.encode(cursorKey)),
      done,
    };
  }

  /** One page of the backend's listing after `after`: the one read ahead when it matches. */
  function listPage(after: string | null, limit: number, ctx: RunContext): Promise<BlobEntry[]> {
    const ahead = ctx.listAhead;
    ctx.listAhead = null;
    if (ahead !== null && ahead.after === after && ahead.limit === limit) return ahead.listed;
    return blobs.list({ startAfter: after, limit });
  }

  async function headAll(hashes: readonly string[]): Promise<Map<string, BlobEntry | null>> {
    const heads = await mapLimit(hashes, HEAD_CONCURRENCY, (hash) => blobs.head(hash));
    return new Map(hashes.map((hash, i) => [hash, heads[i] ?? null]));
  }

  async function confirmOrphans(
    items: readonly Extract<Item, { kind: 'orphan_blob' }>[],
  ): Promise<Inconsistency[]> {
    const rows = new Map((await index.rowsByHash(items.map((i) => i.entry.hash))).map((r) => [r.hash, r]));
    // A row that landed meanwhile: not an orphan any more.
    const still = items.filter((i) => !rows.has(i.entry.hash));
    const heads = await headAll(still.map((i) => i.entry.hash));
    const out: Inconsistency[] = [];
    for (const item of still) {
      const head = heads.get(item.entry.hash);
      if (!head) continue; // collected meanwhile
      out.push({
        kind: ORPHAN_BLOB,
        severity: 'Reclaimable',
        resourceId: item.entry.hash,
        detail: {
          size: head.size,
          modified_at: iso(head.modifiedAt ?? item.entry.modifiedAt),
          backend: blobs.backend,
          has_row: false,
          reason: 'no_row',
        },
        magnitude: head.size,
      });
    }
    return out;
  }

  async function confirmMissing(
    items: readonly Extract<Item, { kind: 'missing_blob_bytes' }>[],
    ctx: RunContext,
  ): Promise<Inconsistency[]> {
    const heads = await headAll(items.map((i) => i.row.hash));
    const stillAbsent = items.filter((i) => !heads.get(i.row.hash)).map((i) => i.row.hash);
    if (stillAbsent.length === 0) return [];
    const impacts = await index.fileImpact(stillAbsent, MISSING_BYTES_MAX_FILE_IDS);
    return impacts
      .filter(
        ({ row, fileCount }) => isOld(row.createdAt, ctx.boundary) && (fileCount > 0 || row.refCount > 0),
      )
      .sort(
        (a, b) => b.fileCount - a.fileCount || b.row.size - a.row.size || (a.row.hash < b.row.hash ? -1 : 1),
      )
      .map(({ row, fileCount, liveFileCount, fileIds }) => ({
        kind: MISSING_BLOB_BYTES,
        severity: 'DataLoss' as const,
        resourceId: row.hash,
        detail: {
          size: row.size,
          ref_count: row.refCount,
          file_count: fileCount,
          live_file_count: liveFileCount,
          affected_file_ids: fileIds,
          affected_file_ids_truncated: fileIds.length < fileCount,
          content_type: row.contentType,
          created_at: iso(row.createdAt),
          backend: blobs.backend,
        },
        magnitude: fileCount,
      }));
  }

  async function confirmHashMismatches(
    items: readonly Extract<Item, { kind: 'blob_hash_mismatch' }>[],
    ctx: RunContext,
  ): Promise<Inconsistency[]> {
    const heads = await headAll(items.map((i) => i.entry.hash));
    const out: Inconsistency[] = [];
    for (const item of items) {
      const head = heads.get(item.entry.hash);
      if (!head) continue; // deleted meanwhile
      let digest: StoredBlobDigest | null = item.digest;
      const unchanged =
        head.size === item.digest.size && head.modifiedAt?.getTime() === item.entry.modifiedAt?.getTime();
      if (!unchanged) {
        // Rewritten since the first hash (a repair, a re-upload): hash again.
        try {
          digest = await hasher.hashStoredBlob(item.entry.hash, ctx.signal);
        } catch (error) {
          if (errorCode(error) === 'NOT_FOUND') continue;
          throw error;
        }
      }
      if (digest.hash === item.entry.hash) continue;
      out.push({
        kind: BLOB_HASH_MISMATCH,
        severity: 'DataLoss',
        resourceId: item.entry.hash,
        detail: {
          actual_hash: digest.hash,
          stored_size: digest.size,
          row_size: item.row?.size ?? null,
          ref_count: item.row?.refCount ?? null,
          modified_at: iso(head.modifiedAt),
          backend: blobs.backend,
        },
      });
    }
    return out;
  }

  async function confirmMimeMismatches(
    items: readonly Extract<Item, { kind: 'blob_mime_mismatch' }>[],
  ): Promise<Inconsistency[]> {
    const rows = new Map((await index.rowsByHash(items.map((i) => i.entry.hash))).map((r) => [r.hash, r]));
    const out: Inconsistency[] = [];
    for (const item of items) {
      const row = rows.get(item.entry.hash);
      if (!row || !mimeContradicts(row.contentType, item.sniffed)) continue;
      out.push({
        kind: BLOB_MIME_MISMATCH,
        severity: 'Drift',
        resourceId: item.entry.hash,
        detail: {
          recorded_content_type: row.contentType,
          sniffed_mime: item.sniffed.mime,
          sniffed_ext: item.sniffed.ext,
          ref_count: row.refCount,
        },
      });
    }
    return out;
  }

  async function confirmOrphanThumbnails(
    items: readonly Extract<Item, { kind: 'orphan_thumbnail' }>[],
    ctx: RunContext,
  ): Promise<Inconsistency[]> {
    if (thumbnailPhase === null) return [];
    // Content that landed meanwhile owns its thumbnails again; thumbnails deleted meanwhile are gone.
    const unknown = new Set(await thumbnailPhase.unknown(items.map((i) => i.thumbnail.hash)));
    const out: Inconsistency[] = [];
    for (const item of items) {
      if (!unknown.has(item.thumbnail.hash)) continue;
      const now = await thumbnailPhase.store.stat(item.thumbnail.hash);
      if (now === null || !isOld(now.modifiedAt, ctx.boundary)) continue;
      out.push({
        kind: ORPHAN_THUMBNAIL,
        severity: 'Reclaimable',
        resourceId: now.hash,
        detail: { files: [...now.files], bytes: now.bytes, modified_at: iso(now.modifiedAt) },
        magnitude: now.bytes,
      });
    }
    return out;
  }

  async function processBatch(store: CheckStore, items: readonly Item[], ctx: RunContext): Promise<void> {
    const of = <K extends Item['kind']>(kind: K) =>
      items.filter((i): i is Extract<Item, { kind: K }> => i.kind === kind);
    const candidates = <T extends Item>(list: readonly T[], kind: string, key: (t: T) => string) =>
      list.map((item) => ({ kind, resourceId: key(item), item }));
    const orphans = candidates(of(ORPHAN_BLOB), ORPHAN_BLOB, (i) => i.entry.hash);
    const missing = candidates(of(MISSING_BLOB_BYTES), MISSING_BLOB_BYTES, (i) => i.row.hash);
    const hashes = candidates(of(BLOB_HASH_MISMATCH), BLOB_HASH_MISMATCH, (i) => i.entry.hash);
    const mimes = candidates(of(BLOB_MIME_MISMATCH), BLOB_MIME_MISMATCH, (i) => i.entry.hash);
    await twoPass(store, missing, (cs) =>
      confirmMissing(
        cs.map((c) => c.item),
        ctx,
      ),
    );
    await twoPass(store, hashes, (cs) =>
      confirmHashMismatches(
        cs.map((c) => c.item),
        ctx,
      ),
    );
    await twoPass(store, orphans, (cs) => confirmOrphans(cs.map((c) => c.item)));
    await twoPass(store, mimes, (cs) => confirmMimeMismatches(cs.map((c) => c.item)));
    const thumbs = candidates(of(ORPHAN_THUMBNAIL), ORPHAN_THUMBNAIL, (i) => i.thumbnail.hash);
    await twoPass(store, thumbs, (cs) =>
      confirmOrphanThumbnails(
        cs.map((c) => c.item),
        ctx,
      ),
    );
  }

  const check: ConsistencyCheck = {
    name: STORAGE_CONSISTENCY_CHECK_NAME,
    subsystem: blobs.subsystem(),
    order: 40,
    countMeaning:
      'findings this run found: blobs missing their bytes, orphaned bytes, and (deep) hash or mime mismatches',
    kinds: [
      {
        kind: ORPHAN_BLOB,
        severity: 'Reclaimable',
        meaning: 'bytes on the backend with no storage.blobs row',
        magnitude: 'bytes',
        repair:
          'insert_blob_row when files reference the hash and the bytes hash to it, else delete_orphan_bytes (the deletion protocol)',
      },
      {
        kind: MISSING_BLOB_BYTES,
        severity: 'DataLoss',
        meaning: 'a storage.blobs row whose bytes are not on the backend',
        magnitude: 'count',
        repair: 'restore_bytes_from_<other backend>: its copy, BLAKE3-verified; no copy: a person decides',
      },
      {
        kind: BLOB_HASH_MISMATCH,
        severity: 'DataLoss',
        meaning: 'deep runs: the stored bytes do not hash (BLAKE3) to their key',
        repair: 'restore_bytes_from_<other backend>: its copy, BLAKE3-verified; no copy: a person decides',
      },
      {
        kind: BLOB_MIME_MISMATCH,
        severity: 'Drift',
        meaning: "deep runs: the bytes' sniffed type contradicts the blob row's content_type",
        repair: null,
      },
      ...(thumbnailPhase === null
        ? []
        : [
            {
              kind: ORPHAN_THUMBNAIL,
              severity: 'Reclaimable' as const,
              meaning:
                'thumbnails (.thumbnails/{icon,preview,large}) of a hash that is neither a manifest nor a blob row',
              magnitude: 'bytes' as const,
              repair: null,
            },
          ]),
    ],
    deep: true,
    graceWindowMs: () => graceMs,
    // Hash and mime mismatches are examined by deep runs only, with the deep grace.
    kindGraceMs: (runOptions) => {
      const deepMs = runOptions.deep ? (runOptions.force ? 0 : deepGraceMs) : null;
      return { [BLOB_HASH_MISMATCH]: deepMs, [BLOB_MIME_MISMATCH]: deepMs };
    },
    concurrentSafe: () => true,
    estimateTotal: () => index.estimateRows(),
    ...(index.reads === undefined ? {} : { reads: index.reads }),
    // A wrong root or key is not data loss: prove the store is the rows' before reporting anything.
    preflight: (runOptions, startedAt, signal) =>
      storeCanary({
        blobs,
        index,
        hasher,
        createdBefore: graceBoundary(startedAt, effectiveGraceMs(check, runOptions)),
        signal,
      }),
    runResumable(store: CheckStore, runOptions: CheckOptions, signal: AbortSignal): Promise<RunOutcome> {
      const ctx: RunContext = {
        boundary: graceBoundary(store.startedAt, effectiveGraceMs(check, runOptions)),
        deep: runOptions.deep,
        deepBoundary: graceBoundary(store.startedAt, runOptions.force ? 0 : deepGraceMs),
        signal,
        listAhead: null,
      };
      return runBatches({
        logTarget: CONSISTENCY_LOG_TARGET,
        store,
        signal,
        name: STORAGE_CONSISTENCY_CHECK_NAME,
        logger,
        batchSize: runOptions.batchSize,
        throttleMs: runOptions.throttleMs,
        batch: scanBatch(
          (cursor, limit) => fetchBatch(cursor, limit, ctx),
          (items) => processBatch(store, items, ctx),
        ),
      });
    },
  };
  return check;
}
