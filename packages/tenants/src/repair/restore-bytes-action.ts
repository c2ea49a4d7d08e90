import type { BlobHasher } from '../ports/blob-hasher.js';
import type { BlobStorage } from '../ports/blob-storage.js';
import type { RepairTx } from '../ports/repair-store.js';
import { bytes, type RepairAction, short, skipped } from './repair-action.js';
import {
  type ActionLine,
  type ApplyOutcome,
  changedSincePlan,
  lineBase,
  needsPerson,
  type RepairFinding,
  type RepairLine,
  type RepairState,
} from './repair-line.js';
import { copyVerifiedBlob, storedDigest } from './verified-blob-copy.js';

/** storage_consistency: a blob row whose bytes the source backend does not hold (resource = hash). */
const MISSING_BLOB_BYTES = 'missing_blob_bytes';
/** storage_consistency (deep): the source's bytes do not hash to their key (resource = hash). */
const BLOB_HASH_MISMATCH = 'blob_hash_mismatch';

/** The action's name for a copy taken from `backend`. */
export function restoreActionName(backend: string): string {
  return `restore_bytes_from_${backend}`;
}

/** How many referencing files a "needs a person" line lists. */
const AFFECTED_LIMIT = 100;

/** Options of {@link createRestoreBytesAction}. */
export interface RestoreBytesOptions {
  /** The backend the server serves from: the bytes are restored into it. */
  readonly source: Pick<BlobStorage, 'backend' | 'head' | 'put' | 'delete'>;
  /** Re-hashes what the source holds (before the plan, and what was written). */
  readonly sourceHasher: BlobHasher;
  /**
   * The other configured backend (after a `storage_migration` it usually
   * holds a copy) and its hasher; `null` when this server has none
   * configured: every such finding then needs a person.
   */
  readonly other: {
    readonly blobs: Pick<BlobStorage, 'backend' | 'head' | 'get'>;
    readonly hasher: BlobHasher;
  } | null;
}

/** The source's bytes under a hash: absent (`size: null`), or their size and actual BLAKE3. */
interface SourceBytes {
  readonly backend: string;
  readonly size: number | null;
  readonly hash: string | null;
}

/**
 * `missing_blob_bytes` and `blob_hash_mismatch` → restore the bytes from the
 * other configured backend when it holds a copy whose BLAKE3 is the key.
 *
 * - plan: reads the row, the references and the source's bytes (hashed when
 *   present), then hashes the other backend's copy: a copy that hashes to the
 *   key with the row's size gives `restore_bytes_from_<backend>`; no other
 *   backend, no copy, or a copy with other bytes (or size) → "needs a
 *   person", listing the affected files and their owners and saying what was
 *   found on each backend.
 * - apply: under the blob row's lock (uploads and `dedup_gc` of the hash
 *   wait), refuses when the row, the references or the source's bytes
 *   changed since the plan, or the copy is gone; otherwise streams the copy
 *   into the source, hashing it on the way: bytes that do not hash to the key
 *   are never stored (corrupt bytes on the source are replaced only by
 *   verified ones). Then re-hashes what the source now holds; anything but
 *   the key throws, so the item's savepoint rolls back and no audit row
 *   vouches for it.
 * - verify: the source holds bytes that hash to the key (the deep check's
 *   predicate, which also answers `missing_blob_bytes`).
 */
export function createRestoreBytesAction(options: RestoreBytesOptions): RepairAction {
  const { source, sourceHasher, other } = options;

  async function sourceBytes(hash: string): Promise<SourceBytes> {
    const head = await source.head(hash);
    if (head === null) return { backend: source.backend, size: null, hash: null };
    const digest = await storedDigest(sourceHasher, hash);
    return digest === null
      ? { backend: source.backend, size: null, hash: null }
      : { backend: source.backend, size: digest.size, hash: digest.hash };
  }

  async function state(tx: RepairTx, hash: string, lock: boolean): Promise<RepairState> {
    const row = await tx.blobRow(hash, lock);
    const refs = await tx.referencingFiles(hash, 0);
    return {
      row: row === null ? null : { size: row.size, ref_count: row.refCount, deleting: row.deleting },
      referenced_by: refs.count,
      source: await sourceBytes(hash),
    };
  }

  function found(src: SourceBytes): string {
    return src.size === null
      ? `the ${src.backend} backend has no bytes for it`
      : `the bytes on the ${src.backend} backend hash to ${src.hash} (${bytes(src.size)} bytes)`;
  }

  async function plan(finding: RepairFinding, tx: RepairTx): Promise<RepairLine> {
    const hash = finding.resourceId;
    const resource = { type: 'blob', id: hash };
    const before = await state(tx, hash, false);
    const refs = await tx.referencingFiles(hash, AFFECTED_LIMIT);
    const affected = refs.files.map((f) => ({
      file_id: f.fileId,
      name: f.name,
      drive_id: f.driveId,
      owner_id: f.ownerId,
      owner: f.ownerName,
      size: f.size,
    }));
    const row = before['row'] as { size: number; ref_count: number; deleting: boolean } | null;
    const src = before['source'] as SourceBytes;
    const person = (reason: string) => needsPerson(finding, resource, reason, affected);
    if (src.hash === hash) {
      return person(
        `the ${src.backend} backend holds bytes that hash to the key now: nothing to restore; run the check again`,
      );
    }
    if (row === null || row.deleting) {
      return person(
        `${found(src)} and ${row === null ? 'no blob row names the hash' : 'its row is being deleted'} (${refs.count} file(s) reference it): restoring bytes would not make them served`,
      );
    }
    if (other === null) {
      return person(
        `${found(src)}, ${refs.count} file(s) reference it, and no other backend is configured to restore from`,
      );
    }
    const copy = await storedDigest(other.hasher, hash);
    if (copy === null) {
      return person(
        `${found(src)} and the ${other.blobs.backend} backend holds no copy (${refs.count} file(s) reference it): the content is lost unless a person restores it`,
      );
    }
    if (copy.hash !== hash || copy.size !== row.size) {
      return person(
        `${found(src)}, and the copy on the ${other.blobs.backend} backend hashes to ${copy.hash} (${bytes(copy.size)} bytes), not to the key (${bytes(row.size)} bytes): restoring it would serve wrong content`,
      );
    }
    const what =
      src.size === null
        ? `bytes missing on ${src.backend}`
        : `bytes on ${src.backend} hash to ${short(src.hash ?? '')}`;
    const after: RepairState = { source: { backend: src.backend, size: row.size, hash } };
    return {
      type: 'action',
      ...lineBase(finding),
      action: restoreActionName(other.blobs.backend),
      resource,
      summary: `blob ${short(hash)} ${what} → restore ${bytes(row.size)} bytes from ${other.blobs.backend} (BLAKE3 verified)`,
      before: { ...before, copy: { backend: other.blobs.backend, size: copy.size, hash: copy.hash } },
      after,
      derived: [
        {
          type: 'blob_bytes',
          id: hash,
          before: { backend: src.backend, size: src.size, hash: src.hash },
          after: { backend: src.backend, size: row.size, hash },
        },
      ],
    };
  }

  async function apply(line: ActionLine, tx: RepairTx): Promise<ApplyOutcome> {
    const hash = line.resource.id;
    if (other === null || line.action !== restoreActionName(other.blobs.backend)) {
      return skipped(
        `blob ${hash}: ${line.action} is not possible here (the other backend is ${other?.blobs.backend ?? 'not configured'})`,
      );
    }
    const { copy: plannedCopy, ...planned } = line.before;
    const now = await state(tx, hash, true);
    const changed = changedSincePlan(planned, now);
    if (changed !== null) {
      // A replay after the copy landed (its transaction was killed while the
      // bytes were already in): everything as planned except the source,
      // which now holds bytes hashing to the key with the row's size.
      const src = now['source'] as SourceBytes;
      const row = now['row'] as { size: number } | null;
      const restored =
        src.hash === hash &&
        row !== null &&
        src.size === row.size &&
        changedSincePlan({ ...planned, source: src }, now) === null;
      if (!restored) return skipped(`blob ${hash} ${changed}`);
      return {
        status: 'applied',
        before: { ...now, copy: plannedCopy },
        after: {
          source: src,
          restored_from: other.blobs.backend,
          note: 'the bytes already hashed to the key (restored by an earlier attempt): nothing copied',
        },
      };
    }
    const size = (now['row'] as { size: number }).size;
    const copyHead = await other.blobs.head(hash);
    if (copyHead === null) {
      return skipped(
        `blob ${hash}: the copy on the ${other.blobs.backend} backend is gone since the plan; nothing was written`,
      );
    }
    const copied = await copyVerifiedBlob(other.blobs, source, hash, size);
    if (copied.status === 'absent') {
      return skipped(
        `blob ${hash}: the copy on the ${other.blobs.backend} backend is gone since the plan; nothing was written`,
      );
    }
    if (copied.status === 'mismatch') {
      return skipped(
        `blob ${hash}: the copy on the ${other.blobs.backend} backend now hashes to ${copied.hash} (${bytes(copied.size)} bytes), not to the key; nothing was written`,
      );
    }
    const written = await storedDigest(sourceHasher, hash);
    if (written?.hash !== hash || written.size !== size) {
      const wasMissing = (now['source'] as SourceBytes).size === null;
      if (wasMissing) await source.delete(hash);
      throw new Error(
        `blob ${hash}: after the copy the ${source.backend} backend holds ${written === null ? 'no bytes' : `bytes hashing to ${written.hash} (${bytes(written.size)} bytes)`}${wasMissing ? '; removed them again' : ''}`,
      );
    }
    return {
      status: 'applied',
      before: { ...now, copy: plannedCopy },
      after: {
        source: { backend: source.backend, size: written.size, hash: written.hash },
        restored_from: other.blobs.backend,
      },
    };
  }

  async function verify(line: ActionLine, tx: RepairTx): Promise<string | null> {
    const hash = line.resource.id;
    const row = await tx.blobRow(hash, false);
    if (row === null || row.deleting) return 'the blob row is missing or being deleted';
    const src = await sourceBytes(hash);
    if (src.size === null) return `the ${source.backend} backend has no bytes for the hash`;
    if (src.hash !== hash) return `the bytes on the ${source.backend} backend hash to ${src.hash}`;
    return null;
  }

  return { kinds: [MISSING_BLOB_BYTES, BLOB_HASH_MISMATCH], plan, apply, verify };
}
