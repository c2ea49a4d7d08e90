import type { JobStore, RunOutcome } from '@oxicloud/recoverable';
import type { FindingKind } from './finding-kind.js';
import type { FindingSink } from './finding-sink.js';

/**
 * The store a check runs against: the engine's `JobStore` plus a
 * {@link FindingSink} whose findings commit with the next checkpoint.
 */
export interface CheckStore extends JobStore, FindingSink {}

/** Options a check run gets from its trigger. */
export interface CheckOptions {
  /** `?force=true`: every grace window (deep's included) is 0. */
  readonly force: boolean;
  /** `?deep=true`: deep mode (re-hash bytes, sniff mime types) where the check has one. */
  readonly deep: boolean;
  /**
   * Rows per batch (`?batch_size=`, 1..10000). The batch driver also shrinks a
   * batch that took longer than 30 s.
   * @defaultValue 1000
   */
  readonly batchSize?: number;
  /**
   * Pause between batches in milliseconds (`?throttle_ms=`, 0..60000), so live
   * traffic keeps its latency during a long scan.
   * @defaultValue 0
   */
  readonly throttleMs?: number;
}

/**
 * A single consistency check with a resumable, cursor-based scan. It runs as
 * an ordinary recoverable job of the engine (job name = {@link ConsistencyCheck.name}).
 *
 * # For implementors
 *
 * Every implementation must decide five things before the first line of
 * code. Answer them in comments at the top of the implementation:
 *
 * 1. **Direction.** Backward (storage → DB) surfaces orphans; forward
 *    (DB → storage) surfaces missing. Most checks do BOTH: sequence them and
 *    encode the current phase in the cursor (a phase byte, then the key).
 *
 * 2. **Severity per finding kind.** `DataLoss` (user impact) /
 *    `Reclaimable` (disk waste) / `Regenerable` (auto-heals) / `Drift`
 *    (accounting). The most common mistake is treating something the user
 *    provided (a missing user-uploaded thumbnail) as `Regenerable`: the
 *    server cannot recreate it, it is `DataLoss`.
 *
 * 3. **Cursor format.** Opaque bytes to the framework, yours to serialise.
 *    Content-addressed blobs → the hash; UUID rows → the 16-byte UUID; path
 *    rows → the path bytes. A multi-phase check prepends a phase byte
 *    (see `encodePhaseCursor` in `@oxicloud/recoverable`).
 *
 * 4. **Grace window.** Default 1 h (matches dedup GC); deep checks (hash
 *    verification) use 24 h. Grace ALWAYS counts back from the run's
 *    `startedAt`, never from `Date.now()`: a scan that runs for six hours
 *    would otherwise flip young items to "old" half-way through and report
 *    false positives against itself (trap 1). `force` makes it 0.
 *
 * 5. **Batch boundary.** 1000 items or 30 s, whichever comes first: run
 *    the scan on `runBatches` of `@oxicloud/recoverable` (it checkpoints and
 *    polls the status between batches). A batch's findings commit with its
 *    checkpoint; cancellation is cooperative, never an abort mid-batch.
 *
 * # Two-pass discipline
 *
 * Pass 1: build a candidate list from a snapshot read, excluding items
 * younger than the grace window.
 *
 * Pass 2: per candidate, re-read the OTHER side's state right before
 * flagging. If it transitioned (a reference arrived, the blob just landed,
 * the row was deleted), silently drop it, and `dropFinding` anything recorded
 * for it earlier in this run.
 *
 * Pass 1 alone LOOKS complete but produces false positives on every race.
 * Never skip Pass 2. With both passes, no check needs a maintenance mode.
 *
 * # Canonical example
 *
 * `storage_consistency` in `@oxicloud/tenants` exercises every axis: it
 * walks the blob backend in hash order (cursor = phase byte + hash),
 * reports orphans (`Reclaimable`) and missing bytes (`DataLoss`) in two
 * phases, honours the grace window and the orphaned-but-not-yet-collected
 * state, re-verifies each candidate, and re-hashes in deep mode with a 24 h
 * grace.
 */
export interface ConsistencyCheck {
  /** Machine-readable snake_case name: the job name, the URL slug, the audit `event` (`consistency.<name>.finding`). */
  readonly name: string;
  /** The subsystem this check belongs to (matches a {@link StatefulAdapter.subsystem}). */
  readonly subsystem: string;
  /**
   * Its place in `consistency_batch` (ascending; ties by name): cheap
   * accounting checks first, the blob backend last.
   */
  readonly order: number;
  /**
   * What a run's `count` means, in words: shown by the admin API
   * (`check.count_meaning`) and the docs. The count is the findings the run
   * found (each once), not only those new since the previous run: say
   * "findings this run found: …".
   */
  readonly countMeaning: string;
  /** `true` when `deep: true` changes what the check does (re-hash bytes, sniff mime types). @defaultValue false */
  readonly deep?: boolean;
  /**
   * Every finding kind the check records, with its severity, meaning,
   * magnitude unit and repair: the one list of its kinds. The admin API lists
   * it (`finding_kinds` in `GET /api/admin/jobs`, a finding's
   * `kind_declaration`), the CLI validates `--kind` against it, the page and
   * the CLI show magnitudes in its unit. `checkJob` validates it once; a run
   * that records a kind not declared here, or with another severity, fails.
   */
  readonly kinds: readonly FindingKind[];
  /** Grace window in milliseconds, counted back from the run's `startedAt`. Default 1 h. */
  graceWindowMs(options: CheckOptions): number;
  /**
   * Optional, for the closing step (findings across runs): the kinds whose
   * grace window differs from {@link graceWindowMs} in a run with `options`
   * (ms, `force` already applied), and `null` for kinds such a run does not
   * examine at all (deep-only kinds of a normal run): a run never fixes a
   * finding of a kind it did not look at.
   */
  kindGraceMs?(options: CheckOptions): Readonly<Record<string, number | null>>;
  /**
   * `true` → safe against live traffic (grace window + two-pass re-verify).
   * `false` only for a check that needs a quiescent database.
   */
  concurrentSafe(): boolean;
  /**
   * Optional: the number of rows the whole scan will examine, when cheap to
   * estimate (planner statistics), for progress and ETA; `null` when unknown.
   */
  estimateTotal?(options: CheckOptions): Promise<number | null>;
  /**
   * Optional: the tables the check reads, schema-qualified
   * (`storage.files`). A host holds them against the schema it expects
   * before each run (`checkJob`'s `preflight`): beside a newer OxiCloud, a
   * check whose columns or triggers changed is refused, not run.
   */
  readonly reads?: readonly string[];
  /**
   * Optional: what the check assumes of the world it reads, verified at each
   * run's start (fresh or resumed), before any batch; `startedAt` is the
   * run's (grace counts back from it, as everywhere). `null` when it holds;
   * otherwise the reason the check must not run, and the run fails with it
   * without recording a finding. `storage_consistency` proves here that the
   * configured store and key are the ones the rows were written to (a
   * canary): a wrong root would otherwise be reported as every object lost.
   */
  preflight?(options: CheckOptions, startedAt: Date, signal: AbortSignal): Promise<string | null>;
  /**
   * Runs or resumes the scan. `store.loadCursor()` is `null` on a fresh run.
   * Must checkpoint and poll `store.status()` between batches and return
   * `paused` with the current cursor on `CancelRequested` or when `signal` fires.
   */
  runResumable(store: CheckStore, options: CheckOptions, signal: AbortSignal): Promise<RunOutcome>;
}
