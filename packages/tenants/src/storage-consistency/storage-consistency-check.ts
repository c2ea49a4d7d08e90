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
 *    - both: a listed key whose row records another size than the object
 *      has (its stored size less 28 bytes of nonce and tag when the store
 *      encrypts, fact sheet §12 item 17) is a truncated (or grown) object:
 *      compared in SQL from the sizes the listing gave, no extra read.
 *    `?deep=true` also re-hashes every listed blob (worker threads that read
 *    the file themselves; 4 blobs in flight for 2 workers, so neither waits
 *    for the event loop) and sniffs its mime type from the first bytes;
 *    an object whose size is already wrong is not hashed (it is reported
 *    once, as `blob_object_size_mismatch`).
 * 2. Severity.
 *    - `orphan_blob`: `Reclaimable` (disk waste, no user impact).
 *    - `missing_blob_bytes`: `DataLoss` (every GET of every file pointing at
 *      the hash fails); detail carries `ref_count`, the file count and up to
 *      20 file ids; recorded biggest impact first within a batch. A row that
 *      nothing references (`ref_count = 0` and no file) is not data loss and
 *      is left to dedup GC.
 *    - `blob_object_size_mismatch`: `DataLoss` (readers get short or long
 *      bytes, or, encrypted, a failed decrypt); detail carries the row's
 *      size, the stored and the expected stored size, whether the store
 *      encrypts, the backend and the row's `ref_count`.
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
 *    files; grace on the newest file's modification time. Phase 3 walks
 *    the file ids that name derived files (phase byte 3 + the 16 bytes of
 *    the last file id): `orphan_file_thumbnail`
 *    (`.thumbnails/{icon,preview,large}/ext-<file_id>.jpg`) and
 *    `orphan_transcoded_image` (`.transcoded/webp/<file_id>.webp` and its
 *    `.skip` marker), both `Reclaimable`, magnitude bytes, for a file id no
 *    `storage.files` row has (a trashed file still has its row); one index
 *    query per page, the same Pass 2 and grace.
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
 *    (deleted → drop); size mismatch → re-read the row and re-head the bytes
 *    (either gone, young or now of the right size → drop); hash mismatch →
 *    re-head (rewritten → re-hash); mime mismatch → re-read the recorded type.
 * 7. Closing (findings across runs). A `Completed` run merged the whole
 *    listing with every row; an `orphan_blob`, `missing_blob_bytes` or
 *    `blob_object_size_mismatch` it did not report again, that pass 2 did not drop, and whose last report came
 *    from a run whose grace boundary is not later than this run's is `fixed`
 *    (bytes collected, or a row deleted, fix theirs). `blob_hash_mismatch` and
 *    `blob_mime_mismatch` are examined by deep runs only (`kindGraceMs`): a
 *    normal run never fixes them, a deep run judges them against its 24 h
 *    boundary. Magnitude: `orphan_blob` its size in bytes,
 *    `missing_blob_bytes` the number of files referencing it,
 *    `blob_object_size_mismatch` how many bytes the object is off by; the
 *    hash and mime mismatches have none.
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
  uuidCursor,
} from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import { TenantsError } from '../errors.js';
import type { BlobHasher, StoredBlobDigest } from '../ports/blob-hasher.js';
import type { BlobEntry, BlobStorage } from '../ports/blob-storage.js';
import type { BlobIndexRow, BlobIndexScan } from './blob-index-scan.js';
import { mapLimit } from './map-limit.js';
import { type MimeSniff, mimeContradicts, sniffMime } from './mime-sniff.js';
import { storeCanary } from './store-canary.js';
import type {
  DerivedFiles,
  FileDerivativesEntry,
  ThumbnailEntry,
  ThumbnailStore,
} from './thumbnail-store.js';

/** Job name of the check. */
export const STORAGE_CONSISTENCY_CHECK_NAME = 'storage_consistency';
/** Finding kinds of storage_consistency. */
export const ORPHAN_BLOB = 'orphan_blob';
export const MISSING_BLOB_BYTES = 'missing_blob_bytes';
export const BLOB_HASH_MISMATCH = 'blob_hash_mismatch';
export const BLOB_MIME_MISMATCH = 'blob_mime_mismatch';
export const ORPHAN_THUMBNAIL = 'orphan_thumbnail';
export const BLOB_OBJECT_SIZE_MISMATCH = 'blob_object_size_mismatch';
export const ORPHAN_FILE_THUMBNAIL = 'orphan_file_thumbnail';
export const ORPHAN_TRANSCODED_IMAGE = 'orphan_transcoded_image';
/**
 * What an encrypting store adds to every object: OxiCloud's AES-256-GCM
 * layout `nonce (12) ‖ ciphertext ‖ tag (16)` (fact sheet §7), so the
 * stored size is `storage.blobs.size + 28`.
 */
export const ENCRYPTED_OBJECT_OVERHEAD_BYTES = 28;
/** At most this many file ids are listed in a `missing_blob_bytes` finding's detail. */
export const MISSING_BYTES_MAX_FILE_IDS = 20;

const PHASE_MERGE = 1;

/** The digest's `hash` of an encrypted object whose AES-256-GCM tag does not match (no plaintext to hash). */
const DOES_NOT_DECRYPT = 'does_not_decrypt';

/** The digest standing for an object that does not decrypt: its listed size, no bytes. */
function undecryptable(entry: BlobEntry): StoredBlobDigest {
  return { hash: DOES_NOT_DECRYPT, size: entry.size, head: new Uint8Array() };
}
const PHASE_THUMBNAILS = 2;
const PHASE_FILE_IDS = 3;
const KEY_LENGTHS = { [PHASE_MERGE]: 32, [PHASE_THUMBNAILS]: 32, [PHASE_FILE_IDS]: 16 };
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
   * OxiCloud's thumbnails (its storage root's `.thumbnails` and
   * `.transcoded`): walked in a second phase for `orphan_thumbnail` (needs
   * `index.unknownContentHashes`) and a third for `orphan_file_thumbnail`
   * and `orphan_transcoded_image` (needs `index.unknownFileIds`). Without it
   * the check has no such phases and no such kinds.
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
  | { readonly kind: typeof BLOB_OBJECT_SIZE_MISMATCH; readonly entry: BlobEntry; readonly row: BlobIndexRow }
  | { readonly kind: typeof ORPHAN_THUMBNAIL; readonly thumbnail: ThumbnailEntry }
  | {
      readonly kind: typeof ORPHAN_FILE_THUMBNAIL | typeof ORPHAN_TRANSCODED_IMAGE;
      readonly fileId: string;
      readonly derived: DerivedFiles;
    };

/** An orphan of phase 3: one family of a file id's derived files. */
type FileDerivativeItem = Extract<Item, { readonly fileId: string }>;

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
type UnknownFileIds = NonNullable<BlobIndexScan['unknownFileIds']>;

/** An object's stored size, whether its store encrypts, and the `storage.blobs.size` that size implies. */
interface StoredSize {
  readonly stored: number;
  readonly encrypted: boolean;
  /** `stored` less the encryption overhead; negative for an encrypted object shorter than it. */
  readonly rowSize: number;
}

function storedSizeOf(entry: BlobEntry): StoredSize {
  // An encrypting store reports `storedSize` on every entry (`EncryptedBlobStorage`); a plain one never does.
  const encrypted = entry.storedSize !== undefined;
  const stored = entry.storedSize ?? entry.size;
  return { stored, encrypted, rowSize: stored - (encrypted ? ENCRYPTED_OBJECT_OVERHEAD_BYTES : 0) };
}

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
 * `orphan_blob` (`Reclaimable`), `missing_blob_bytes` (`DataLoss`),
 * `blob_object_size_mismatch` (`DataLoss`), and in deep mode
 * `blob_hash_mismatch` (`DataLoss`) and `blob_mime_mismatch` (`Drift`). With
 * a `thumbnails` store: `orphan_thumbnail` (resource = content hash),
 * `orphan_file_thumbnail` and `orphan_transcoded_image` (resource = file
 * id), all `Reclaimable`.
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
  // The thumbnails phases, resolved once: the store and the index's content and file lookups, or none.
  let thumbnailPhase: {
    store: ThumbnailStore;
    unknown: UnknownContent;
    unknownFiles: UnknownFileIds;
  } | null = null;
  if (thumbnails !== undefined) {
    const unknown = index.unknownContentHashes?.bind(index);
    const unknownFiles = index.unknownFileIds?.bind(index);
    if (unknown === undefined || unknownFiles === undefined) {
      throw new TenantsError(
        'INVALID_CONFIG',
        'createStorageConsistencyCheck: a thumbnails store needs an index with unknownContentHashes and unknownFileIds',
      );
    }
    thumbnailPhase = { store: thumbnails, unknown, unknownFiles };
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
    wrongSize: ReadonlySet<string>,
    ctx: RunContext,
  ): Promise<{ items: Item[]; firstUndone: number | null }> {
    // An object of the wrong size is not hashed: it is reported once, as blob_object_size_mismatch.
    const targets = entries
      .map((entry, position) => ({ entry, position }))
      .filter(({ entry }) => isOld(entry.modifiedAt, ctx.deepBoundary) && !wrongSize.has(entry.hash));
    const results = await mapLimit(targets, hashConcurrency, async ({ entry }) => {
      if (ctx.signal.aborted) return { done: false as const };
      try {
        const digest = await hasher.hashStoredBlob(entry.hash, ctx.signal);
        const sniffed = digest.hash === entry.hash ? await sniffMime(digest.head) : null;
        return { done: true as const, digest, sniffed };
      } catch (error) {
        if (ctx.signal.aborted) return { done: false as const };
        if (errorCode(error) === 'NOT_FOUND') return { done: true as const, digest: null, sniffed: null };
        // One object that does not authenticate (the store canary has shown the key reads the others):
        // its bytes are not what was written, a finding like any other hash mismatch, not a failed run.
        if (errorCode(error) === 'DECRYPTION_FAILED') {
          return { done: true as const, digest: undecryptable(entry), sniffed: null };
        }
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
    if (at.phase === PHASE_FILE_IDS) {
      return fetchFileIds(at.key.length === 0 ? null : uuidCursor.decode(at.key), limit, ctx);
    }
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
    if (listed.length < limit) {
      // The hashes are done: the file ids next.
      return { scanned: listed.length, items, cursor: encodePhaseCursor(PHASE_FILE_IDS), done: false };
    }
    return {
      scanned: listed.length,
      items,
      cursor:
        last === null
          ? encodePhaseCursor(PHASE_THUMBNAILS, after === null ? new Uint8Array() : hashCursor.encode(after))
          : encodePhaseCursor(PHASE_THUMBNAILS, hashCursor.encode(last)),
      done: false,
    };
  }

  /** The orphan items of one file id's derived files, each family past the grace. */
  function fileIdItems(entry: FileDerivativesEntry, boundary: Date): FileDerivativeItem[] {
    const items: FileDerivativeItem[] = [];
    const { fileId, externalThumbnails, transcoded } = entry;
    if (externalThumbnails !== null && isOld(externalThumbnails.modifiedAt, boundary)) {
      items.push({ kind: ORPHAN_FILE_THUMBNAIL, fileId, derived: externalThumbnails });
    }
    if (transcoded !== null && isOld(transcoded.modifiedAt, boundary)) {
      items.push({ kind: ORPHAN_TRANSCODED_IMAGE, fileId, derived: transcoded });
    }
    return items;
  }

  /** Phase 3: a page of file ids with derived files; the ones no files row has are orphans. */
  async function fetchFileIds(
    after: string | null,
    limit: number,
    ctx: RunContext,
  ): Promise<ScanBatch<Item>> {
    const at = (fileId: string | null) =>
      encodePhaseCursor(PHASE_FILE_IDS, fileId === null ? new Uint8Array() : uuidCursor.encode(fileId));
    if (thumbnailPhase === null) return { scanned: 0, items: [], cursor: at(after), done: true };
    const listed = await thumbnailPhase.store.listByFileId({ startAfter: after, limit });
    const unknown = new Set(
      listed.length === 0 ? [] : await thumbnailPhase.unknownFiles(listed.map((e) => e.fileId)),
    );
    const items = listed.filter((e) => unknown.has(e.fileId)).flatMap((e) => fileIdItems(e, ctx.boundary));
    return {
      scanned: listed.length,
      items,
      cursor: at(listed.at(-1)?.fileId ?? after),
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
      listedSizes: listed.map((e) => storedSizeOf(e).rowSize),
    });
    const wrongSize = new Map(range.sizeMismatches.map((row) => [row.hash, row]));
    // The interval this batch covers: (after, bound]; null = to the end.
    let bound: string | null = range.cutAt ?? upTo;
    let covered = bound === null ? listed : listed.filter((e) => e.hash <= (bound as string));
    let truncated = false;
    const deepItems: Item[] = [];
    if (ctx.deep && covered.length > 0) {
      const rows = new Map((await index.rowsByHash(covered.map((e) => e.hash))).map((r) => [r.hash, r]));
      const deep = await deepCheck(covered, rows, new Set(wrongSize.keys()), ctx);
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
    for (const [hash, row] of wrongSize) {
      const entry = byHash.get(hash);
      if (
        entry &&
        within(hash) &&
        isOld(row.createdAt, ctx.boundary) &&
        isOld(entry.modifiedAt, ctx.boundary)
      ) {
        items.push({ kind: BLOB_OBJECT_SIZE_MISMATCH, entry, row });
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

  async function confirmSizeMismatches(
    items: readonly Extract<Item, { kind: 'blob_object_size_mismatch' }>[],
    ctx: RunContext,
  ): Promise<Inconsistency[]> {
    const hashes = items.map((i) => i.entry.hash);
    const rows = new Map((await index.rowsByHash(hashes)).map((r) => [r.hash, r]));
    const heads = await headAll(hashes);
    const out: Inconsistency[] = [];
    for (const item of items) {
      const row = rows.get(item.entry.hash);
      const head = heads.get(item.entry.hash);
      // Row deleted (not this kind), bytes gone (missing_blob_bytes), or either young again: no finding now.
      if (!row || !head || !isOld(row.createdAt, ctx.boundary) || !isOld(head.modifiedAt, ctx.boundary))
        continue;
      const size = storedSizeOf(head);
      if (size.rowSize === row.size) continue; // rewritten meanwhile, now of the row's size
      const expected = row.size + (size.encrypted ? ENCRYPTED_OBJECT_OVERHEAD_BYTES : 0);
      out.push({
        kind: BLOB_OBJECT_SIZE_MISMATCH,
        severity: 'DataLoss',
        resourceId: row.hash,
        detail: {
          row_size: row.size,
          stored_size: size.stored,
          expected_stored_size: expected,
          encrypted: size.encrypted,
          backend: blobs.backend,
          ref_count: row.refCount,
          modified_at: iso(head.modifiedAt),
        },
        magnitude: Math.abs(size.stored - expected),
      });
    }
    return out;
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
          if (errorCode(error) !== 'DECRYPTION_FAILED') throw error;
          digest = undecryptable(head);
        }
      }
      if (digest.hash === item.entry.hash) continue;
      out.push({
        kind: BLOB_HASH_MISMATCH,
        severity: 'DataLoss',
        resourceId: item.entry.hash,
        detail: {
          actual_hash: digest.hash === DOES_NOT_DECRYPT ? null : digest.hash,
          ...(digest.hash === DOES_NOT_DECRYPT ? { does_not_decrypt: true } : {}),
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

  async function confirmOrphanFileDerivatives(
    items: readonly FileDerivativeItem[],
    ctx: RunContext,
  ): Promise<Inconsistency[]> {
    if (thumbnailPhase === null) return [];
    const { store, unknownFiles } = thumbnailPhase;
    // A file row that landed meanwhile owns them again; files deleted meanwhile are gone.
    const unknown = new Set(await unknownFiles([...new Set(items.map((i) => i.fileId))]));
    const out: Inconsistency[] = [];
    const now = new Map<string, FileDerivativesEntry | null>();
    for (const item of items) {
      if (!unknown.has(item.fileId)) continue;
      if (!now.has(item.fileId)) now.set(item.fileId, await store.statByFileId(item.fileId));
      const entry = now.get(item.fileId);
      if (entry === null || entry === undefined) continue;
      const confirmed = fileIdItems(entry, ctx.boundary).find((i) => i.kind === item.kind);
      if (confirmed === undefined) continue;
      const { files, bytes, modifiedAt } = confirmed.derived;
      out.push({
        kind: item.kind,
        severity: 'Reclaimable',
        resourceId: item.fileId,
        detail: { files: [...files], bytes, modified_at: iso(modifiedAt) },
        magnitude: bytes,
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
    const sizes = candidates(of(BLOB_OBJECT_SIZE_MISMATCH), BLOB_OBJECT_SIZE_MISMATCH, (i) => i.entry.hash);
    const hashes = candidates(of(BLOB_HASH_MISMATCH), BLOB_HASH_MISMATCH, (i) => i.entry.hash);
    const mimes = candidates(of(BLOB_MIME_MISMATCH), BLOB_MIME_MISMATCH, (i) => i.entry.hash);
    await twoPass(store, missing, (cs) =>
      confirmMissing(
        cs.map((c) => c.item),
        ctx,
      ),
    );
    await twoPass(store, sizes, (cs) =>
      confirmSizeMismatches(
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
    const derived = items
      .filter(
        (i): i is FileDerivativeItem =>
          i.kind === ORPHAN_FILE_THUMBNAIL || i.kind === ORPHAN_TRANSCODED_IMAGE,
      )
      .map((item) => ({ kind: item.kind, resourceId: item.fileId, item }));
    await twoPass(store, derived, (cs) =>
      confirmOrphanFileDerivatives(
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
      'findings this run found: blobs missing their bytes, orphaned bytes, objects of the wrong size, (deep) hash or mime mismatches, and orphaned thumbnails',
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
        kind: BLOB_OBJECT_SIZE_MISMATCH,
        severity: 'DataLoss',
        meaning:
          "the stored object's size is not the blob row's size (+28 bytes when the store encrypts): truncated or grown bytes, read back wrong or failing to decrypt",
        magnitude: 'bytes',
        // No action restores it yet (restore_bytes_from_<backend> takes missing and hash-mismatched bytes): a person decides.
        repair: null,
      },
      {
        kind: BLOB_HASH_MISMATCH,
        severity: 'DataLoss',
        meaning:
          'deep runs: the stored bytes do not hash (BLAKE3) to their key, or (encrypted at rest) do not decrypt: detail does_not_decrypt',
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
                'thumbnails (.thumbnails/{icon,preview,large}) of a hash that is neither a manifest nor a blob row, and that no file names',
              magnitude: 'bytes' as const,
              repair:
                'remove_orphan_derived_files: the files removed once the content or file is re-checked gone (OxiCloud makes them again on demand)',
            },
            {
              kind: ORPHAN_FILE_THUMBNAIL,
              severity: 'Reclaimable' as const,
              meaning:
                'client-supplied thumbnails (.thumbnails/{icon,preview,large}/ext-<file_id>.jpg) of a file id no storage.files row has',
              magnitude: 'bytes' as const,
              repair:
                'remove_orphan_derived_files: the files removed once the content or file is re-checked gone (OxiCloud makes them again on demand)',
            },
            {
              kind: ORPHAN_TRANSCODED_IMAGE,
              severity: 'Reclaimable' as const,
              meaning:
                'a transcoded image (.transcoded/webp/<file_id>.webp, or its .skip marker) of a file id no storage.files row has',
              magnitude: 'bytes' as const,
              repair:
                'remove_orphan_derived_files: the files removed once the content or file is re-checked gone (OxiCloud makes them again on demand)',
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
