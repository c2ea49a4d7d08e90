import type { FindingSink } from './finding-sink.js';
import type { FindingTally } from './finding-tally.js';
import type { Inconsistency } from './inconsistency.js';

/** A Pass 1 candidate: what it would be recorded as. */
export interface Candidate {
  readonly kind: string;
  readonly resourceId: string;
}

const keyOf = (c: Candidate): string => `${c.kind}\u0000${c.resourceId}`;

/**
 * The two-pass discipline as one call. `candidates` come from Pass 1 (a
 * snapshot read, young items already excluded); `reverify` is Pass 2: it
 * re-reads the OTHER side's state right now and returns the findings that
 * still hold (with their final detail). Those are recorded; every candidate
 * `reverify` did not confirm transitioned (row deleted, blob landed, counter
 * caught up) and is dropped silently, with `dropFinding` for anything recorded
 * for it earlier in this run (a batch replayed after a resume).
 *
 * Findings `reverify` returns for resources that were not candidates are
 * ignored: Pass 2 confirms, it does not discover.
 *
 * @example
 * ```ts
 * const tally = await twoPass(store, candidates, async (cs) => {
 *   const still = await scan.reverify(cs.map((c) => c.resourceId));
 *   return still.map(toFinding);
 * });
 * ```
 */
export async function twoPass<C extends Candidate>(
  sink: FindingSink,
  candidates: readonly C[],
  reverify: (candidates: readonly C[]) => Promise<readonly Inconsistency[]>,
): Promise<FindingTally> {
  if (candidates.length === 0) return { recorded: 0, dropped: 0, byKind: {} };
  const wanted = new Map<string, C>(candidates.map((c) => [keyOf(c), c]));
  const confirmed = new Set<string>();
  let recorded = 0;
  let dropped = 0;
  const byKind: Record<string, number> = {};
  // Record in the order Pass 2 returns (a check may sort by impact, biggest first).
  for (const finding of await reverify(candidates)) {
    const key = keyOf(finding);
    if (!wanted.has(key) || confirmed.has(key)) continue;
    confirmed.add(key);
    if (await sink.recordFinding(finding)) {
      recorded++;
      byKind[finding.kind] = (byKind[finding.kind] ?? 0) + 1;
    }
  }
  for (const [key, candidate] of wanted) {
    if (confirmed.has(key)) continue;
    if (await sink.dropFinding(candidate.kind, candidate.resourceId)) dropped++;
  }
  return { recorded, dropped, byKind };
}
