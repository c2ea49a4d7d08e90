import type { ManifestCounterState, RepairTx } from '../ports/repair-store.js';
import { type RepairAction, short, skipped } from './repair-action.js';
import { type ActionLine, changedSincePlan, lineBase, needsPerson } from './repair-line.js';

/** manifests_consistency: `ref_count` below the files naming the manifest (resource = file hash). */
const MANIFEST_REF_COUNT_LOW = 'manifest_ref_count_low';

/** Files listed on a line: the ones at risk while the count was low. */
const AT_RISK_LISTED = 100;

function state(s: ManifestCounterState) {
  return { ref_count: s.refCount, file_count: s.fileCount };
}

/** `null` when the count is not below the files (the only direction a repair writes), else why not. */
function tooLow(s: ManifestCounterState): string | null {
  return s.refCount < s.fileCount ? `ref_count ${s.refCount} < ${s.fileCount} file(s) naming it` : null;
}

/**
 * `manifest_ref_count_low` → raise the manifest's `ref_count` to the files
 * (live and trashed) that name it, counted under the row's lock (OxiCloud
 * §12 item 14). OxiCloud deletes a manifest whose count is at most 1 when
 * one of its files goes, so every other file naming it would become
 * unreadable: the line lists those files (the first 100), the ones that
 * were at risk. An upload whose `ref_count + 1` waits on the lock adds its
 * reference to the raised counter after the commit; a file written or
 * deleted meanwhile changes the count and the item is skipped.
 *
 * A count above the files is never lowered here (`apply` re-reads under
 * the lock and skips): `manifest_ref_count_high` is one of the kinds that
 * need a person (`needs-person-kinds.ts`).
 */
export const raiseManifestRefCount: RepairAction = {
  verifyFirst: true,
  kinds: [MANIFEST_REF_COUNT_LOW],
  async plan(finding, tx: RepairTx) {
    const hash = finding.resourceId;
    const resource = { type: 'manifest', id: hash };
    if (tx.manifestCounters === undefined || tx.raiseManifestRefCount === undefined) {
      return needsPerson(finding, resource, 'this storage domain has no chunk manifests to repair');
    }
    const s = await tx.manifestCounters(hash, false, AT_RISK_LISTED);
    if (s === null) return needsPerson(finding, resource, 'the manifest no longer exists');
    const wrong = tooLow(s);
    if (wrong === null) {
      return needsPerson(
        finding,
        resource,
        `ref_count ${s.refCount} is not below the ${s.fileCount} file(s) naming it now: nothing to raise`,
      );
    }
    const line: ActionLine = {
      type: 'action',
      ...lineBase(finding),
      action: 'raise_manifest_ref_count',
      resource,
      summary:
        `manifest ${short(hash)} ref_count ${s.refCount} → ${s.fileCount} (${wrong}); at risk until now: ` +
        `${s.fileIds.length < s.fileCount ? `the first ${s.fileIds.length} of ` : ''}${s.fileCount} file(s)`,
      before: { ...state(s), files_at_risk: s.fileIds },
      after: { ref_count: s.fileCount },
      derived: [],
    };
    return line;
  },
  async apply(line, tx) {
    const hash = line.resource.id;
    if (tx.manifestCounters === undefined || tx.raiseManifestRefCount === undefined) {
      return skipped('this storage domain has no chunk manifests');
    }
    const s = await tx.manifestCounters(hash, true, AT_RISK_LISTED);
    if (s === null) return skipped('the manifest no longer exists');
    const now = state(s);
    const { files_at_risk: _listed, ...planned } = line.before as Record<string, unknown>;
    const changed = changedSincePlan(planned, now);
    if (changed !== null) return skipped(`manifest ${hash} ${changed}`);
    await tx.raiseManifestRefCount(hash, s.fileCount);
    const written = await tx.manifestCounters(hash, false, 0);
    return { status: 'applied', before: now, after: { ref_count: written?.refCount ?? null } };
  },
  async verify(line, tx) {
    const s = await tx.manifestCounters?.(line.resource.id, false, 0);
    if (s === null || s === undefined) return null; // gone: manifests_consistency has nothing to say
    return tooLow(s);
  },
};
