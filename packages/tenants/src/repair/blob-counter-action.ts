import type { BlobCounterState, RepairTx } from '../ports/repair-store.js';
import { type RepairAction, short, skipped } from './repair-action.js';
import { type ActionLine, changedSincePlan, lineBase, needsPerson } from './repair-line.js';

/** blobs_consistency: `ref_count` differs from the referencing files (resource = hash). */
const REF_COUNT_MISMATCH = 'ref_count_mismatch';
/** blobs_consistency: the counter is right, `orphaned_at` is wrong (resource = hash). */
const ORPHANED_AT_MISMATCH = 'orphaned_at_mismatch';

function state(s: BlobCounterState) {
  return { ref_count: s.refCount, file_count: s.fileCount, orphaned_at: s.orphanedAt, deleting: s.deleting };
}

/** What the row holds after the repair: the counted references, and the mark they imply. */
function target(s: BlobCounterState) {
  return {
    ref_count: s.fileCount,
    orphaned_at: s.fileCount > 0 ? null : (s.orphanedAt ?? 'now()'),
  };
}

/** `null` when the row agrees with its files (blobs_consistency's predicate), else why not. */
function disagreement(s: BlobCounterState): string | null {
  if (s.refCount !== s.fileCount)
    return `ref_count ${s.refCount} ≠ ${s.fileCount} ${s.countBasis ?? 'referencing file(s)'}`;
  if (s.refCount > 0 && s.orphanedAt !== null && s.markOnlyAtZero !== true)
    return `orphaned_at ${s.orphanedAt} set while referenced`;
  if (s.refCount === 0 && s.orphanedAt === null) return 'orphaned_at unset while unreferenced';
  return null;
}

/**
 * `ref_count_mismatch` and `orphaned_at_mismatch` → set the blob row's
 * `ref_count` to the files counted under the row's lock, and `orphaned_at`
 * consistently: `NULL` while referenced; when unreferenced, the recorded
 * mark is kept, or set to now when there is none (so `dedup_gc` collects the
 * bytes only after its full grace from the repair, never earlier).
 *
 * Apply locks the row first, then counts: a file written meanwhile changes
 * the count and the item is skipped (planned count ≠ count now); an upload
 * whose trigger waits on the lock adds its reference to the corrected
 * counter after the commit. A row marked for deletion belongs to the
 * deletion protocol (`dedup_gc` finishes it): "needs a person" when planned,
 * skipped when marked since. No derived rows: only the row itself changes.
 *
 * Where the store says `refuseLowering` (OxiCloud's domain), a count above
 * the expected one is never written lower: its line is "needs a person"
 * (a leak), and apply refuses any line that would lower it. There
 * `fileCount` is the expected count of fact sheet §12 item 15 and a mark on
 * a referenced row is no disagreement (`markOnlyAtZero`).
 */
export const recountBlobRow: RepairAction = {
  verifyFirst: true,
  kinds: [REF_COUNT_MISMATCH, ORPHANED_AT_MISMATCH],
  async plan(finding, tx: RepairTx) {
    const hash = finding.resourceId;
    const resource = { type: 'blob', id: hash };
    const s = await tx.blobCounters(hash, false);
    if (s === null) return needsPerson(finding, resource, 'the blob row no longer exists');
    if (s.deleting) {
      return needsPerson(
        finding,
        resource,
        'the blob row is marked for deletion: the deletion protocol owns it (dedup_gc finishes it); run the check again after dedup_gc',
      );
    }
    const wrong = disagreement(s);
    if (wrong === null) {
      return needsPerson(finding, resource, 'the row agrees with its files now: nothing to repair');
    }
    if (s.refuseLowering === true && s.refCount > s.fileCount) {
      return needsPerson(
        finding,
        resource,
        `ref_count ${s.refCount} is above the ${s.fileCount} ${s.countBasis ?? 'referencing file(s)'}: a leak ` +
          '(the GC never collects a row counted above 0). A repair never lowers a count here: an upload in flight ' +
          'may hold the difference, and a count below the references lets the GC take content still in use. ' +
          'A person decides (e.g. lowers it once no upload of the content is running)',
        [{ hash, ref_count: s.refCount, expected: s.fileCount }],
      );
    }
    const after = target(s);
    const line: ActionLine = {
      type: 'action',
      ...lineBase(finding),
      action: 'recount_blob_ref_count',
      resource,
      summary: `blob ${short(hash)} ref_count ${s.refCount} → ${after.ref_count}, orphaned_at ${s.orphanedAt ?? 'null'} → ${after.orphaned_at ?? 'null'} (${wrong})`,
      before: state(s),
      after,
      derived: [],
    };
    return line;
  },
  async apply(line, tx) {
    const hash = line.resource.id;
    const s = await tx.blobCounters(hash, true);
    if (s === null) return skipped('the blob row no longer exists');
    const now = state(s);
    const changed = changedSincePlan(line.before, now);
    if (changed !== null) return skipped(`blob ${hash} ${changed}`);
    if (s.refuseLowering === true && s.fileCount < s.refCount) {
      return skipped(
        `blob ${hash}: ref_count ${s.refCount} would be lowered to ${s.fileCount}; never lowered here`,
      );
    }
    await tx.setBlobRefCount(hash, s.fileCount);
    const written = await tx.blobCounters(hash, false);
    return {
      status: 'applied',
      before: now,
      after: { ref_count: written?.refCount ?? null, orphaned_at: written?.orphanedAt ?? null },
    };
  },
  async verify(line, tx) {
    const s = await tx.blobCounters(line.resource.id, false);
    if (s === null || s.deleting) return null; // gone or being deleted: blobs_consistency has nothing to say
    return disagreement(s);
  },
};
