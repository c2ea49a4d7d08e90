import type { FindingSink } from './finding-sink.js';
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
 * still hold (with their final detail). Those are staged for recording; every
 * candidate `reverify` did not confirm transitioned (row deleted, blob landed,
 * counter caught up) and is dropped silently, with a staged `dropFinding` for
 * anything recorded for it earlier in this run (a finding of an earlier batch).
 * The staged writes commit with the batch's checkpoint.
 *
 * Findings `reverify` returns for resources that were not candidates are
 * ignored: Pass 2 confirms, it does not discover. Resolves with the number of
 * findings confirmed.
 *
 * @example
 * ```ts
 * await twoPass(store, candidates, async (cs) => {
 *   const still = await scan.reverify(cs.map((c) => c.resourceId));
 *   return still.map(toFinding);
 * });
 * ```
 */
export async function twoPass<C extends Candidate>(
  sink: FindingSink,
  candidates: readonly C[],
  reverify: (candidates: readonly C[]) => Promise<readonly Inconsistency[]>,
): Promise<number> {
  if (candidates.length === 0) return 0;
  const wanted = new Map<string, C>(candidates.map((c) => [keyOf(c), c]));
  const confirmed = new Set<string>();
  // Record in the order Pass 2 returns (a check may sort by impact, biggest first).
  for (const finding of await reverify(candidates)) {
    const key = keyOf(finding);
    if (!wanted.has(key) || confirmed.has(key)) continue;
    confirmed.add(key);
    sink.recordFinding(finding);
  }
  for (const [key, candidate] of wanted) {
    if (!confirmed.has(key)) sink.dropFinding(candidate.kind, candidate.resourceId);
  }
  return confirmed.size;
}
