/** What one batch did to the run's findings. */
export interface FindingTally {
  /** Findings new in this run (a replayed finding is not counted again). */
  readonly recorded: number;
  /** Findings deleted because their resource became consistent again (Pass 2). */
  readonly dropped: number;
  /** New findings per kind. */
  readonly byKind: Readonly<Record<string, number>>;
}

/** A tally of nothing. */
export const EMPTY_TALLY: FindingTally = { recorded: 0, dropped: 0, byKind: {} };

/** Adds tallies up. */
export function addTallies(...tallies: readonly FindingTally[]): FindingTally {
  let recorded = 0;
  let dropped = 0;
  const byKind: Record<string, number> = {};
  for (const t of tallies) {
    recorded += t.recorded;
    dropped += t.dropped;
    for (const [kind, n] of Object.entries(t.byKind)) byKind[kind] = (byKind[kind] ?? 0) + n;
  }
  return { recorded, dropped, byKind };
}

/**
 * The `stats` counters a tally adds at a checkpoint: `findings`,
 * `findings_dropped`, and `findings_<kind>` (zeros left out).
 */
export function tallyCounters(tally: FindingTally): Record<string, number> {
  const counters: Record<string, number> = {};
  if (tally.recorded > 0) counters['findings'] = tally.recorded;
  if (tally.dropped > 0) counters['findings_dropped'] = tally.dropped;
  for (const [kind, n] of Object.entries(tally.byKind)) if (n > 0) counters[`findings_${kind}`] = n;
  return counters;
}
