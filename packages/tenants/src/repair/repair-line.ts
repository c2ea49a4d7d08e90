/**
 * A repair plan's line: what one action will do to one finding's resource,
 * computed without writing (`plan`), and what applying it did (`apply`).
 *
 * Glossary:
 * - **before**: the state of the resource and of what the fix is computed
 *   from, as the plan read it. `apply` reads it again under a row lock and
 *   refuses when anything differs.
 * - **after**: the state the action writes.
 * - **derived**: the rows the action changes beyond the resource itself (a
 *   path repair rewrites the subtree below; a size repair changes the drive's
 *   and the user's usage).
 * - **choices**: the alternatives the operator picks from before approval;
 *   `choice` is the one picked (part of the plan and its hash).
 */

/** The finding a line repairs, as the findings ledger holds it. */
export interface RepairFinding {
  readonly id: string;
  readonly checkName: string;
  readonly kind: string;
  readonly resourceId: string;
  /** The run that last reported it (part of the plan's hash). */
  readonly lastSeenRunId: string | null;
  readonly detail: Readonly<Record<string, unknown>>;
}

/** A JSON-safe state snapshot. */
export type RepairState = Readonly<Record<string, unknown>>;

/** A row the action changes beyond its resource. */
export interface DerivedRow {
  /** `drive`, `user`, `folder`, `file`, `blob`, `blob_bytes`. */
  readonly type: string;
  readonly id: string;
  readonly before: RepairState;
  readonly after: RepairState;
}

/** One alternative of a line that offers a choice. */
export interface RepairChoice {
  readonly id: string;
  readonly description: string;
  readonly derived: readonly DerivedRow[];
  readonly after: RepairState;
}

/** What the plan will do for one finding. */
export interface ActionLine {
  readonly type: 'action';
  readonly findingId: string;
  readonly fingerprint: { readonly checkName: string; readonly kind: string; readonly resourceId: string };
  readonly lastSeenRunId: string | null;
  /** The action's name, e.g. `recompute_drive_used_bytes`. */
  readonly action: string;
  /** The resource the finding names (`drive 0193…`). */
  readonly resource: { readonly type: string; readonly id: string };
  /** One line of text for a table: `used_bytes 10485760 → 10489856`. */
  readonly summary: string;
  readonly before: RepairState;
  readonly after: RepairState;
  readonly derived: readonly DerivedRow[];
  /** Present when the operator must choose; `after`/`derived` then come from the chosen one. */
  readonly choices?: readonly RepairChoice[];
  /** The picked choice's id; `null` until the operator chooses (apply refuses a line without one). */
  readonly choice?: string | null;
}

/** A finding with no safe action. */
export interface NeedsPersonLine {
  readonly type: 'needs_person';
  readonly findingId: string;
  readonly fingerprint: { readonly checkName: string; readonly kind: string; readonly resourceId: string };
  readonly lastSeenRunId: string | null;
  readonly resource: { readonly type: string; readonly id: string };
  /** Why no action is safe. */
  readonly reason: string;
  /** What a person needs to decide (affected files and their owners, …). */
  readonly affected: readonly RepairState[];
}

/** One line of a repair plan. */
export type RepairLine = ActionLine | NeedsPersonLine;

/** What {@link RepairAction.apply} did. */
export type ApplyOutcome =
  | {
      readonly status: 'applied';
      readonly before: RepairState;
      readonly after: RepairState;
      /**
       * Work that must follow the commit of the item's transaction (the
       * deletion protocol deletes bytes only after the mark committed). A
       * crash before it leaves a marked row that `dedup_gc` finishes.
       */
      readonly afterCommit?: () => Promise<RepairState>;
    }
  | AlreadyConsistent
  | { readonly status: 'skipped'; readonly reason: string };

/**
 * The outcome of a line whose resource re-verified as already right when the
 * run reached it (another job, such as `storage_reconcile`, or a person fixed
 * it since the plan): nothing is written, and its finding is fixed like an
 * applied line's.
 */
export interface AlreadyConsistent {
  readonly status: 'already_consistent';
}

/** The shared fields of a line for `finding`. */
export function lineBase(finding: RepairFinding) {
  return {
    findingId: finding.id,
    fingerprint: { checkName: finding.checkName, kind: finding.kind, resourceId: finding.resourceId },
    lastSeenRunId: finding.lastSeenRunId,
  };
}

/** A line for a finding no action can fix. */
export function needsPerson(
  finding: RepairFinding,
  resource: { type: string; id: string },
  reason: string,
  affected: readonly RepairState[] = [],
): NeedsPersonLine {
  return { type: 'needs_person', ...lineBase(finding), resource, reason, affected };
}

/** A stable JSON text (keys sorted), for comparing states and hashing plans. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(
        Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      );
    }
    return v;
  });
}

/**
 * `null` when `now` equals `planned`, else the reason naming each field that
 * changed since the plan (`used_bytes: planned 10, now 12`).
 */
export function changedSincePlan(planned: RepairState, now: RepairState): string | null {
  const keys = [...new Set([...Object.keys(planned), ...Object.keys(now)])].sort();
  const diffs = keys
    .filter((k) => stableJson(planned[k]) !== stableJson(now[k]))
    .map((k) => `${k}: planned ${stableJson(planned[k])}, now ${stableJson(now[k])}`);
  return diffs.length === 0 ? null : `changed since the plan (${diffs.join('; ')})`;
}
