import type { DerivedFileColumn, RepairTx } from '../ports/repair-store.js';
import { type RepairAction, short, skipped } from './repair-action.js';
import { type ActionLine, changedSincePlan, lineBase, needsPerson } from './repair-line.js';

/** files_consistency's kinds of a derived column (OxiCloud §12 items 22 and 23), by the column they name. */
const COLUMN_OF: Readonly<Record<string, DerivedFileColumn>> = {
  category_order_mismatch: 'category_order',
  media_sort_date_mismatch: 'media_sort_date',
};

/**
 * `category_order_mismatch` and `media_sort_date_mismatch` → write what
 * OxiCloud's formula gives: the "sort by type" bucket of the file's name
 * and type (a rename never recomputes it, a folder copy leaves 9999), and
 * the timeline date, the capture date else the creation (a deleted
 * metadata row leaves the old one). Apply takes the file row's lock, reads
 * the column and the formula again, and skips when either changed since the
 * plan (a rename, a metadata write); nothing else of the row changes.
 */
export const recomputeDerivedColumn: RepairAction = {
  verifyFirst: true,
  kinds: Object.keys(COLUMN_OF),
  async plan(finding, tx: RepairTx) {
    const column = COLUMN_OF[finding.kind] as DerivedFileColumn;
    const resource = { type: 'file', id: finding.resourceId };
    if (tx.derivedFileColumn === undefined || tx.setDerivedFileColumn === undefined) {
      return needsPerson(finding, resource, `this storage domain has no ${column} to recompute`);
    }
    const s = await tx.derivedFileColumn(finding.resourceId, column, false);
    if (s === null) return needsPerson(finding, resource, 'the file no longer exists');
    if (s.recorded === s.expected) {
      return needsPerson(finding, resource, `${column} is ${s.expected} already: nothing to repair`);
    }
    const line: ActionLine = {
      type: 'action',
      ...lineBase(finding),
      action: `recompute_${column}`,
      resource,
      summary: `file ${short(finding.resourceId)} ${column} ${s.recorded} → ${s.expected}`,
      before: { [column]: s.recorded, expected: s.expected },
      after: { [column]: s.expected },
      derived: [],
    };
    return line;
  },
  async apply(line, tx) {
    const column = COLUMN_OF[line.fingerprint.kind];
    if (column === undefined || tx.derivedFileColumn === undefined || tx.setDerivedFileColumn === undefined) {
      return skipped(`this storage domain has no ${line.fingerprint.kind} column to recompute`);
    }
    const s = await tx.derivedFileColumn(line.resource.id, column, true);
    if (s === null) return skipped('the file no longer exists');
    const now = { [column]: s.recorded, expected: s.expected };
    const changed = changedSincePlan(line.before, now);
    if (changed !== null) return skipped(`file ${line.resource.id} ${changed}`);
    await tx.setDerivedFileColumn(line.resource.id, column);
    const written = await tx.derivedFileColumn(line.resource.id, column, false);
    return { status: 'applied', before: now, after: { [column]: written?.recorded ?? null } };
  },
  async verify(line, tx) {
    const column = COLUMN_OF[line.fingerprint.kind];
    if (column === undefined || tx.derivedFileColumn === undefined) return null;
    const s = await tx.derivedFileColumn(line.resource.id, column, false);
    if (s === null) return null;
    return s.recorded === s.expected ? null : `${column} ${s.recorded} ≠ ${s.expected}`;
  },
};
