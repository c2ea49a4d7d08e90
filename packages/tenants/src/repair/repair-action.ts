import type { RepairTx } from '../ports/repair-store.js';
import type { ActionLine, ApplyOutcome, RepairFinding, RepairLine } from './repair-line.js';

/**
 * One repair action: a small unit that plans without writing and applies
 * under a row lock.
 *
 * - `plan(finding, tx)` reads (in a read-only transaction) and returns the
 *   line: the action with before/after/derived rows, or "needs a person"
 *   with why.
 * - `apply(line, tx)` runs inside the item's transaction: it reads the
 *   resource again under its row lock and returns `skipped` with the reason
 *   when anything differs from the line's `before`; otherwise it writes the
 *   line's `after` and returns `applied`. It never writes when it skips.
 */
export interface RepairAction {
  /** The finding kinds it handles. */
  readonly kinds: readonly string[];
  plan(finding: RepairFinding, tx: RepairTx): Promise<RepairLine>;
  apply(line: ActionLine, tx: RepairTx): Promise<ApplyOutcome>;
  /**
   * Re-checks just the line's resource with the predicate of the check that
   * found it (after the run): `null` when it passes, else why not.
   */
  verify(line: ActionLine, tx: RepairTx): Promise<string | null>;
  /**
   * `true` when `verify` is an exact test of the resource's values (counters
   * recomputed from the data, no grace window): apply then runs it first, and
   * a resource that already passes is `already_consistent` (nothing written;
   * its finding is fixed). Actions whose check has a grace window or a
   * planned-before guard that means more than "right now" (an orphan inside
   * its grace, a path a user renamed) leave it unset and skip with the reason.
   */
  readonly verifyFirst?: true;
}

/** The `skipped` outcome. */
export function skipped(reason: string): ApplyOutcome {
  return { status: 'skipped', reason };
}

/** Formats a byte count with thousands separators (`10,485,760`). */
export function bytes(n: number): string {
  return n.toLocaleString('en-US');
}

/** An id for summaries: a UUID's last 12 digits, else (a blob hash) its first 8 characters. */
export function short(id: string): string {
  // A UUIDv7 starts with its creation time (rows made together share their first 8 digits): show its random tail.
  if (UUID.test(id)) return `…${id.slice(-12)}`;
  return id.length > 8 ? `${id.slice(0, 8)}…` : id;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
