import type { BlobHasher } from '../ports/blob-hasher.js';
import type { BlobStorage } from '../ports/blob-storage.js';
import type { RepairStore, RepairTx } from '../ports/repair-store.js';
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

/** storage_consistency: bytes in the backend without a blob row (resource = hash). */
const ORPHAN_BLOB = 'orphan_blob';
/** files_consistency: files reference a hash that has no blob row (resource = hash). */
const MISSING_BLOB = 'missing_blob';

/** How many referencing files a "needs a person" line lists. */
const AFFECTED_LIMIT = 100;

/** Options of {@link createBlobActions}. */
export interface BlobActionsOptions {
  /** The configured backend: bytes are measured, deleted (and restored) here. */
  readonly blobs: Pick<BlobStorage, 'backend' | 'head' | 'delete' | 'put'>;
  /** Measures the stored bytes' BLAKE3 before a row is inserted for them. */
  readonly hasher: BlobHasher;
  /**
   * For the deletion protocol's last step (after the item's transaction
   * committed); with `orphanRemoval: 'dedup_gc'` (OxiCloud's domain) orphan
   * bytes get a row `dedup_gc` collects instead, and it is never called.
   */
  readonly store: Pick<RepairStore, 'finishBlobDeletion' | 'orphanRemoval'>;
  /**
   * The other configured backend and its hasher: a `missing_blob` whose bytes
   * the source lost too is restored from a copy there whose BLAKE3 is the
   * key (bytes, then the row). Without it such a finding needs a person.
   */
  readonly other?: {
    readonly blobs: Pick<BlobStorage, 'backend' | 'head' | 'get'>;
    readonly hasher: BlobHasher;
  } | null;
}

/** The action restoring a lost hash's bytes from `backend`, then inserting its row. */
export function restoreRowActionName(backend: string): string {
  return `restore_bytes_and_row_from_${backend}`;
}

/** Orphan bytes handed to `dedup_gc`: a row at `ref_count 0` with `orphaned_at` (OxiCloud's domain). */
export const HAND_ORPHAN_BYTES_TO_GC = 'hand_orphan_bytes_to_dedup_gc';

/** The state both blob actions compare: the row, the references, the bytes. */
async function blobState(
  tx: RepairTx,
  blobs: BlobActionsOptions['blobs'],
  hash: string,
  lock: boolean,
): Promise<RepairState> {
  const row = await tx.blobRow(hash, lock);
  const refs = await tx.referencingFiles(hash, 0);
  const head = await blobs.head(hash);
  return {
    // orphaned_at too: an upload's reserve that restarted the orphan grace
    // between plan and apply makes delete_orphan_blob skip.
    row:
      row === null
        ? null
        : {
            size: row.size,
            ref_count: row.refCount,
            deleting: row.deleting,
            orphaned_at: row.orphanedAt?.toISOString() ?? null,
          },
    referenced_by: refs.count,
    bytes_size: head?.size ?? null,
  };
}

/**
 * The orphan_blob and missing_blob actions, which share one decision on the
 * state (row, references, bytes) of a hash:
 *
 * - bytes, no row, files reference it → insert the row with the measured
 *   size through the reserve function (its real `ref_count`, no
 *   `orphaned_at`), once the bytes' BLAKE3 is confirmed to be the hash;
 * - bytes, no row, no reference → the deletion protocol: a row marked for
 *   deletion first (a concurrent upload of the hash then waits or
 *   re-creates it), commit, then the bytes, then the row;
 * - bytes, an unreferenced row with `ref_count = 0` → the protocol exactly
 *   as `dedup_gc` does it (mark under the row lock, then bytes, then row);
 * - with `orphanRemoval: 'dedup_gc'` (OxiCloud's domain, no deletion
 *   protocol): bytes with no row and no reference get a row at
 *   `ref_count 0` with `orphaned_at` now (`hand_orphan_bytes_to_dedup_gc`),
 *   which `dedup_gc` collects past its grace into its quarantine; an
 *   unreferenced row at 0 is already `dedup_gc`'s (nothing to repair);
 * - no bytes, no row, files reference it, and the other backend (`other`)
 *   holds a copy whose BLAKE3 is the hash → copy it in (verified while it
 *   streams, re-hashed once written), then insert the row as above;
 * - no bytes anywhere (or a copy with other bytes) and files reference it →
 *   "needs a person", listing the files and their owners and what was found.
 */
export function createBlobActions(options: BlobActionsOptions): RepairAction {
  const { blobs, hasher, store } = options;
  const other = options.other ?? null;
  const byGc = store.orphanRemoval === 'dedup_gc';

  async function plan(finding: RepairFinding, tx: RepairTx): Promise<RepairLine> {
    const hash = finding.resourceId;
    const resource = { type: 'blob', id: hash };
    const before = await blobState(tx, blobs, hash, false);
    const refs = await tx.referencingFiles(hash, AFFECTED_LIMIT);
    const affected = refs.files.map((f) => ({
      file_id: f.fileId,
      name: f.name,
      drive_id: f.driveId,
      owner_id: f.ownerId,
      owner: f.ownerName,
      size: f.size,
    }));
    const bytesSize = before['bytes_size'] as number | null;
    const row = before['row'] as { ref_count: number; deleting: boolean } | null;
    const base = { type: 'action' as const, ...lineBase(finding), resource, before };
    if (bytesSize === null) {
      if (refs.count === 0) {
        return needsPerson(
          finding,
          resource,
          'no bytes and no file references the hash: nothing to repair',
          [],
        );
      }
      const lost = `no bytes for this hash on the ${blobs.backend} backend and ${refs.count} file(s) reference it`;
      if (other === null) {
        return needsPerson(
          finding,
          resource,
          `${lost}: the content is lost unless a person restores it (no other backend is configured)`,
          affected,
        );
      }
      const copy = row === null ? await storedDigest(other.hasher, hash) : null;
      if (copy === null || copy.hash !== hash) {
        const seen =
          row !== null
            ? 'its row is present (storage_consistency missing_blob_bytes restores such bytes)'
            : copy === null
              ? `the ${other.blobs.backend} backend holds no copy either`
              : `the copy on the ${other.blobs.backend} backend hashes to ${copy.hash} (${bytes(copy.size)} bytes), not to the key`;
        return needsPerson(
          finding,
          resource,
          `${lost}, and ${seen}: the content is lost unless a person restores it`,
          affected,
        );
      }
      return {
        ...base,
        action: restoreRowActionName(other.blobs.backend),
        summary: `blob ${short(hash)} row and bytes missing → restore ${bytes(copy.size)} bytes from ${other.blobs.backend} (BLAKE3 verified), insert the row (ref_count ${refs.count})`,
        before: { ...before, copy: { backend: other.blobs.backend, size: copy.size, hash: copy.hash } },
        after: { row: { size: copy.size, ref_count: refs.count, deleting: false }, bytes_size: copy.size },
        derived: [
          {
            type: 'blob_bytes',
            id: hash,
            before: { backend: blobs.backend, size: null },
            after: { backend: blobs.backend, size: copy.size, hash },
          },
        ],
      };
    }
    if (row === null && refs.count > 0) {
      const digest = await hasher.hashStoredBlob(hash);
      if (digest.hash !== hash || digest.size !== bytesSize) {
        return needsPerson(
          finding,
          resource,
          `the stored bytes hash to ${digest.hash} (${digest.size} bytes), not to their key: a row would vouch for corrupt content`,
          affected,
        );
      }
      const line: ActionLine = {
        ...base,
        action: 'insert_blob_row',
        summary: `blob ${short(hash)} row missing → insert (${bytes(bytesSize)} bytes, ref_count ${refs.count})`,
        after: { row: { size: bytesSize, ref_count: refs.count, deleting: false } },
        derived: [],
      };
      return line;
    }
    if (byGc && refs.count === 0 && row === null) {
      return {
        ...base,
        action: HAND_ORPHAN_BYTES_TO_GC,
        summary: `blob ${short(hash)} ${bytes(bytesSize)} bytes without a row or a reference → a row at ref_count 0 with orphaned_at now: dedup_gc moves them to its quarantine past its grace`,
        after: { row: { size: bytesSize, ref_count: 0, orphaned: true } },
        derived: [],
      };
    }
    if (byGc && refs.count === 0 && row !== null && row.ref_count === 0) {
      return needsPerson(
        finding,
        resource,
        "the row is at ref_count 0 and nothing references it: it is dedup_gc's (past its grace it moves the bytes to its quarantine); nothing for a repair to do",
        [],
      );
    }
    if (refs.count === 0 && (row === null || (row.ref_count === 0 && !row.deleting))) {
      return {
        ...base,
        action: row === null ? 'delete_orphan_bytes' : 'delete_orphan_blob',
        summary: `blob ${short(hash)} ${bytes(bytesSize)} bytes without a reference → delete through the deletion protocol`,
        after: { row: null, bytes_size: null },
        derived: [{ type: 'blob_bytes', id: hash, before: { size: bytesSize }, after: { size: null } }],
      };
    }
    return needsPerson(
      finding,
      resource,
      `the hash is no longer in a repairable state (row ${row === null ? 'missing' : 'present'}, ${refs.count} reference(s)); run the check again`,
      affected,
    );
  }

  async function apply(line: ActionLine, tx: RepairTx): Promise<ApplyOutcome> {
    const hash = line.resource.id;
    const { copy, ...planned } = line.before;
    const now = await blobState(tx, blobs, hash, true);
    const changed = changedSincePlan(planned, now);
    if (changed !== null) {
      // A replay after the copy landed (its transaction was killed while the
      // bytes were already in): as planned except the bytes, present with the
      // copy's size; restoreAndInsert verifies their digest, then inserts the row.
      const size = (copy as { size?: number } | undefined)?.size;
      const replay =
        copy !== undefined &&
        now['bytes_size'] === size &&
        changedSincePlan({ ...planned, bytes_size: size }, now) === null;
      if (!replay) return skipped(`blob ${hash} ${changed}`);
      return restoreAndInsert(line, tx, now, copy as { size: number }, changed);
    }
    if (copy !== undefined) return restoreAndInsert(line, tx, now, copy as { size: number }, null);
    const size = now['bytes_size'] as number;
    switch (line.action) {
      case 'insert_blob_row': {
        const status = await tx.reserveBlobRow(hash, size);
        const row = await tx.blobRow(hash, false);
        return {
          status: 'applied',
          before: now,
          after: {
            row: row && { size: row.size, ref_count: row.refCount, deleting: row.deleting },
            reserve: status,
          },
        };
      }
      case HAND_ORPHAN_BYTES_TO_GC: {
        if (!byGc) return skipped(`blob ${hash}: ${line.action} is not possible on this storage domain`);
        if (!(await tx.insertMarkedBlobRow(hash, size))) {
          return skipped(`blob ${hash}: a row or a reference appeared under the lock`);
        }
        return { status: 'applied', before: now, after: { row: { size, ref_count: 0, orphaned: true } } };
      }
      case 'delete_orphan_bytes':
      case 'delete_orphan_blob': {
        if (byGc)
          return skipped(
            `blob ${hash}: ${line.action} needs the deletion protocol, which this storage domain has not`,
          );
        const marked =
          line.action === 'delete_orphan_bytes'
            ? await tx.insertMarkedBlobRow(hash, size)
            : await tx.markBlobForDeletion(hash);
        if (!marked) return skipped(`blob ${hash}: a row or a reference appeared under the lock`);
        return {
          status: 'applied',
          before: now,
          after: { row: { size, ref_count: 0, deleting: true } },
          afterCommit: async () => {
            const gone = await store.finishBlobDeletion(hash, async (h) => {
              await blobs.delete(h);
            });
            return gone ? { row: null, bytes_size: null } : { row: 'kept: referenced meanwhile' };
          },
        };
      }
      default:
        return skipped(`unknown blob action ${line.action}`);
    }
  }

  /** `restore_bytes_and_row_from_<backend>`: the verified copy in, re-hashed, then the row through reserve. */
  async function restoreAndInsert(
    line: ActionLine,
    tx: RepairTx,
    now: RepairState,
    copy: { size: number },
    /** Set on a replay whose bytes are already in (what changed): no copy, only their digest is checked. */
    replayed: string | null,
  ): Promise<ApplyOutcome> {
    const hash = line.resource.id;
    if (other === null || line.action !== restoreRowActionName(other.blobs.backend)) {
      return skipped(
        `blob ${hash}: ${line.action} is not possible here (the other backend is ${other?.blobs.backend ?? 'not configured'})`,
      );
    }
    if (replayed !== null) {
      const present = await storedDigest(hasher, hash);
      if (present?.hash !== hash || present.size !== copy.size) return skipped(`blob ${hash} ${replayed}`);
      const status = await tx.reserveBlobRow(hash, present.size);
      const row = await tx.blobRow(hash, false);
      return {
        status: 'applied',
        before: { ...now, copy },
        after: {
          row: row && { size: row.size, ref_count: row.refCount, deleting: row.deleting },
          bytes_size: present.size,
          reserve: status,
          restored_from: other.blobs.backend,
          note: 'the bytes already hashed to the key (restored by an earlier attempt): nothing copied',
        },
      };
    }
    const copied = await copyVerifiedBlob(other.blobs, blobs, hash, copy.size);
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
    const written = await storedDigest(hasher, hash);
    if (written?.hash !== hash || written.size !== copy.size) {
      await blobs.delete(hash);
      throw new Error(
        `blob ${hash}: after the copy the ${blobs.backend} backend holds ${written === null ? 'no bytes' : `bytes hashing to ${written.hash}`}; removed them again`,
      );
    }
    const status = await tx.reserveBlobRow(hash, written.size);
    const row = await tx.blobRow(hash, false);
    return {
      status: 'applied',
      before: { ...now, copy },
      after: {
        row: row && { size: row.size, ref_count: row.refCount, deleting: row.deleting },
        bytes_size: written.size,
        reserve: status,
        restored_from: other.blobs.backend,
      },
    };
  }

  async function verify(line: ActionLine, tx: RepairTx): Promise<string | null> {
    const hash = line.resource.id;
    const row = await tx.blobRow(hash, false);
    const bytes = await blobs.head(hash);
    if (line.action === 'insert_blob_row' || line.action.startsWith('restore_bytes_and_row_from_')) {
      if (row === null || row.deleting) return 'the blob row is missing or being deleted';
      return bytes === null ? 'the bytes are gone' : null;
    }
    if (bytes !== null && row === null) return 'bytes without a row remain';
    return null;
  }

  return { kinds: [ORPHAN_BLOB, MISSING_BLOB], plan, apply, verify };
}
