import type { BatchWrites, BatchWritesResult } from '@oxicloud/recoverable';
import { type Logger, silentLogger } from '@oxicloud/scheduler';
import type { FindingKey, FindingSink, FindingWriter } from './finding-sink.js';
import type { Inconsistency } from './inconsistency.js';

/** Log target of the consistency layer's operational lines. */
export const CONSISTENCY_LOG_TARGET = 'oxicloud::consistency';

/** The alert a consistency check raises when a run completes with findings (a capability every check declares). */
export const CONSISTENCY_FINDINGS_ALERT = 'consistency_findings';

type Staged =
  | { readonly op: 'record'; readonly finding: Inconsistency; readonly countIfNew?: string | undefined }
  | { readonly op: 'drop'; readonly kind: string; readonly resourceId: string };

/** Options of {@link FindingBatch}. */
export interface FindingBatchOptions {
  readonly runId: string;
  /** The job the findings belong to (`consistency.<job>.finding` in the logs). */
  readonly checkName: string;
  readonly writer: FindingWriter;
  /** Receives the audit and `oxicloud::consistency` lines. @defaultValue silentLogger */
  readonly logger?: Logger | undefined;
  /**
   * `true` for a consistency check: the findings the run found (each once, a
   * replayed batch not again) are the run's count, and the
   * counters `findings`, `findings_dropped`, `findings_<kind>` are added.
   * `false` (a job that records findings on the side): only `countIfNew` counters.
   */
  readonly tally: boolean;
  /**
   * `startedAt − grace` of the run (a check's): stored with each finding it
   * reports, so the closing step knows the resource was old enough.
   * @defaultValue the write's `now()`
   */
  readonly graceBoundary?: Date | undefined;
}

/**
 * The findings of the batch in progress: a {@link FindingSink} that stages,
 * and the {@link BatchWrites} that writes what was staged inside the
 * checkpoint's transaction and returns the counts. After the commit,
 * {@link FindingBatch.committed} logs each new finding once, as an audit
 * record (`target: 'audit'`, `event: 'consistency.<check>.finding'`, its
 * severity, kind, resource and detail); a finding already in the run is
 * logged on `oxicloud::consistency` with `replayed: true`; a dropped one logs
 * `consistency.<check>.finding_dropped`. One line per event.
 */
export class FindingBatch implements FindingSink {
  readonly #options: FindingBatchOptions;
  readonly #logger: Logger;
  #staged = new Map<string, Staged>();
  #written: Array<{ staged: Staged; changed: boolean }> = [];

  constructor(options: FindingBatchOptions) {
    this.#options = options;
    this.#logger = options.logger ?? silentLogger;
  }

  recordFinding(finding: Inconsistency, options: { readonly countIfNew?: string } = {}): void {
    this.#staged.set(keyOf(finding), { op: 'record', finding, countIfNew: options.countIfNew });
  }

  dropFinding(kind: string, resourceId: string): void {
    this.#staged.set(keyOf({ kind, resourceId }), { op: 'drop', kind, resourceId });
  }

  /** `true` when the batch staged something to write. */
  get pending(): boolean {
    return this.#staged.size > 0;
  }

  /** Writes what was staged (in the checkpoint's transaction) and returns what to add to the run's counters. */
  readonly writes: BatchWrites = async (tx): Promise<BatchWritesResult> => {
    const staged = [...this.#staged.values()];
    this.#staged = new Map();
    const records = staged.filter((s) => s.op === 'record');
    const drops = staged.filter((s) => s.op === 'drop');
    const result = await this.#options.writer.writeFindings(
      tx,
      this.#options.runId,
      records.map((r) => r.finding),
      drops as readonly FindingKey[],
      {
        checkName: this.#options.checkName,
        ...(this.#options.graceBoundary ? { graceBoundary: this.#options.graceBoundary } : {}),
      },
    );
    const counters: Record<string, number> = {};
    const add = (key: string, n = 1) => {
      counters[key] = (counters[key] ?? 0) + n;
    };
    let recorded = 0;
    this.#written = [];
    records.forEach((r, i) => {
      const isNew = result.recordedNew[i] === true;
      this.#written.push({ staged: r, changed: isNew });
      if (!isNew) return;
      recorded++;
      if (r.countIfNew) add(r.countIfNew);
      if (this.#options.tally) {
        add('findings');
        add(`findings_${r.finding.kind}`);
      }
    });
    drops.forEach((d, i) => {
      const existed = result.dropped[i] === true;
      this.#written.push({ staged: d, changed: existed });
      if (existed && this.#options.tally) add('findings_dropped');
    });
    return this.#options.tally ? { count: recorded, counters } : { counters };
  };

  /** Logs what the last {@link writes} committed. Call once the checkpoint committed. */
  committed(): void {
    const { runId, checkName } = this.#options;
    const logger = this.#logger;
    for (const { staged, changed } of this.#written) {
      if (staged.op === 'record') {
        const finding = staged.finding;
        // One line per finding. A new one is an audit record (the audit
        // convention's `target: 'audit'`, `event: 'consistency.<check>.finding'`);
        // a replayed one (already in the run) is operational only.
        logger.info(
          {
            target: changed ? 'audit' : CONSISTENCY_LOG_TARGET,
            event: `consistency.${checkName}.finding`,
            run_id: runId,
            check: checkName,
            kind: finding.kind,
            severity: finding.severity,
            resource_id: finding.resourceId,
            detail: finding.detail,
            ...(changed ? {} : { replayed: true }),
          },
          `${checkName}: ${finding.severity} ${finding.kind} on ${finding.resourceId}${changed ? '' : ' (replayed)'}`,
        );
      } else if (changed) {
        logger.info(
          {
            target: CONSISTENCY_LOG_TARGET,
            event: `consistency.${checkName}.finding_dropped`,
            run_id: runId,
            check: checkName,
            kind: staged.kind,
            resource_id: staged.resourceId,
          },
          `${checkName}: dropped ${staged.kind} on ${staged.resourceId}, the resource is consistent again`,
        );
      }
    }
    this.#written = [];
  }
}

const keyOf = (k: FindingKey): string => `${k.kind}\u0000${k.resourceId}`;

/**
 * How many findings a consistency run recorded, from its counters (the
 * `findings` counter this package's {@link FindingBatch} adds): the one
 * place that knows the counter's name.
 */
export function findingCount(counters: Readonly<Record<string, unknown>>): number {
  const n = counters['findings'];
  return typeof n === 'number' && Number.isFinite(n) ? n : 0;
}
