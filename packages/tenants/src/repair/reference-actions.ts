import type { ReferenceRowState, RepairTx } from '../ports/repair-store.js';
import { DELETABLE_REFERENCE_KINDS } from '../references-consistency/references-consistency-check.js';
import { type RepairAction, short, skipped } from './repair-action.js';
import { type ActionLine, changedSincePlan, lineBase, needsPerson } from './repair-line.js';

function state(s: ReferenceRowState) {
  return { item_type: s.itemType, item_id: s.itemId, reason: s.reason };
}

/**
 * references_consistency's dangling favorites, recent items, magic links and
 * NextCloud ids (OxiCloud §12 item 25) → delete the row: it names a file or
 * folder that does not exist, and OxiCloud never deletes it (listings skip
 * it). Apply re-reads the row under its lock and skips when it is gone, names
 * another item, or its item exists again (a restore from trash brings a
 * file back under the same id). A share whose item is gone is not here: its
 * token grant goes with it, a person's call.
 */
export const deleteDanglingReference: RepairAction = {
  kinds: Object.keys(DELETABLE_REFERENCE_KINDS),
  async plan(finding, tx: RepairTx) {
    const source = DELETABLE_REFERENCE_KINDS[finding.kind];
    const resource = { type: source ?? 'reference', id: finding.resourceId };
    if (
      source === undefined ||
      tx.referenceRow === undefined ||
      tx.deleteReference === undefined ||
      !(tx.deletableReferences ?? []).includes(source)
    ) {
      return needsPerson(finding, resource, `this storage domain does not delete ${finding.kind} rows`);
    }
    const s = await tx.referenceRow(source, finding.resourceId, false);
    if (s === null) return needsPerson(finding, resource, 'the row no longer exists');
    if (s.reason === null) {
      return needsPerson(finding, resource, `its ${s.itemType} ${s.itemId} exists again: nothing to delete`);
    }
    const line: ActionLine = {
      type: 'action',
      ...lineBase(finding),
      action: 'delete_dangling_reference',
      resource,
      summary: `${source} row ${short(finding.resourceId)} deleted: it names ${s.itemType ?? 'no type'} ${s.itemId ?? 'nothing'} (${s.reason})`,
      before: state(s),
      after: { deleted: true },
      derived: [],
    };
    return line;
  },
  async apply(line, tx) {
    const source = DELETABLE_REFERENCE_KINDS[line.fingerprint.kind];
    if (source === undefined || tx.referenceRow === undefined || tx.deleteReference === undefined) {
      return skipped(`this storage domain does not delete ${line.fingerprint.kind} rows`);
    }
    const s = await tx.referenceRow(source, line.resource.id, true);
    if (s === null) return skipped('the row no longer exists');
    const now = state(s);
    const changed = changedSincePlan(line.before, now);
    if (changed !== null) return skipped(`${source} row ${line.resource.id} ${changed}`);
    await tx.deleteReference(source, line.resource.id);
    return { status: 'applied', before: now, after: { deleted: true } };
  },
  async verify(line, tx) {
    const source = DELETABLE_REFERENCE_KINDS[line.fingerprint.kind];
    if (source === undefined || tx.referenceRow === undefined) return null;
    const s = await tx.referenceRow(source, line.resource.id, false);
    return s === null || s.reason === null ? null : `the row still names a missing item (${s.reason})`;
  },
};
