import { Gauge, type Registry } from 'prom-client';
import type { QueueState } from '../queues/queue-stall.js';

/** Where the queue facts come from: OxiCloud's queues read and judged now (`QueueMonitor`). */
export interface QueueFacts {
  snapshot(): Promise<readonly QueueState[]>;
  /** The stall threshold in ms, `null` when none is set (no `oxicloud_queue_stalled` then). */
  readonly stallMs: number | null;
}

/**
 * OxiCloud's queues (`storage.tree_etag_dirty`, `storage.search_index_dirty`)
 * as gauges, read at each scrape: the backlog, how long the oldest row has
 * been at the head as this process saw it, and whether the queue is stalled.
 * A failed read drops the queue series and leaves the other metrics alone
 * (the monitor's periodic check logs the failure).
 */
export class QueueGauges {
  readonly #queues: QueueFacts;
  readonly #rows: Gauge<'queue'>;
  readonly #age: Gauge<'queue'>;
  readonly #stalled: Gauge<'queue'>;

  constructor(deps: { readonly registry: Registry; readonly queues: QueueFacts }) {
    this.#queues = deps.queues;
    const registers = [deps.registry];
    const gauge = (name: string, help: string) =>
      new Gauge<'queue'>({ name, help, labelNames: ['queue'], registers });
    this.#rows = gauge(
      'oxicloud_queue_backlog_rows',
      "Rows waiting in OxiCloud's queue storage.<queue>, drained by OxiCloud itself (counted up to 10000 rows, the planner's estimate above)",
    );
    this.#age = gauge(
      'oxicloud_queue_oldest_row_age_seconds',
      "How long the queue's oldest row (lowest id) has been at its head as this process saw it: a lower bound of its age (the table has no timestamp); 0 when empty",
    );
    this.#stalled = gauge(
      'oxicloud_queue_stalled',
      '1 when the queue is not empty and its oldest row stayed at its head for OXIJOBS_QUEUE_STALL_SECONDS or more (its drainer stopped), else 0; absent without a threshold',
    );
  }

  /** Reads the queues and sets every gauge; a failed read leaves no queue series. */
  async refresh(): Promise<void> {
    let states: readonly QueueState[];
    try {
      states = await this.#queues.snapshot();
    } catch {
      states = [];
    }
    for (const g of [this.#rows, this.#age, this.#stalled]) g.reset();
    const judged = this.#queues.stallMs !== null;
    for (const s of states) {
      const labels = { queue: s.queue };
      this.#rows.set(labels, s.rows);
      this.#age.set(labels, s.headAgeMs / 1000);
      if (judged) this.#stalled.set(labels, s.stalled ? 1 : 0);
    }
  }
}
