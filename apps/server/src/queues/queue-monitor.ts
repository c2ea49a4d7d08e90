import type { AlertResult, QueueStalledEvent } from '@oxicloud/alerts';
import type { Logger } from '@oxicloud/scheduler';
import { PeriodicCheck } from '../workers/periodic-check.js';
import { type QueueBacklogReader, QueueStallTracker, type QueueState } from './queue-stall.js';

/** The log target of the queue lines. */
export const QUEUES_TARGET = 'oxicloud::queues';

/** The alert port the monitor mails through (`JobAlerts` as it is). */
export interface QueueAlerts {
  queueStalled(event: QueueStalledEvent): Promise<AlertResult>;
}

/** Options of {@link QueueMonitor}. */
export interface QueueMonitorOptions {
  readonly reader: QueueBacklogReader;
  readonly alerts: QueueAlerts;
  readonly logger: Logger;
  /** How long a queue's oldest row may stay at its head; `null` = no stall judged, nothing mailed. */
  readonly stallMs: number | null;
  /** How often the queues are read and stalls mailed (0 = never by itself: only the scrapes read). */
  readonly checkIntervalMs: number;
  /** @defaultValue `() => new Date()` */
  readonly now?: () => Date;
}

/**
 * OxiCloud's queues as a core worker (outside the job registry, like the
 * freshness monitor): they are read, never checked as findings. Every
 * `checkIntervalMs` (and at each scrape, through {@link snapshot}) it reads
 * each queue's backlog and lowest id; a queue whose oldest row stayed at its
 * head for `stallMs` is stalled, and its stall is mailed (`queue_stalled`)
 * once; the stall ends when the oldest row moves or the queue empties (its
 * drainer works again), and a later stall is mailed again (subject to the
 * alerts' 6 h dedup per queue). The clocks are this process's: each node
 * judges and mails on its own.
 */
export class QueueMonitor {
  readonly #o: QueueMonitorOptions;
  readonly #now: () => Date;
  readonly #tracker: QueueStallTracker;
  /** Queue → the oldest row whose stall was mailed (or is being mailed). */
  readonly #alerted = new Map<string, number>();
  readonly #periodic: PeriodicCheck;

  constructor(options: QueueMonitorOptions) {
    this.#o = options;
    this.#now = options.now ?? (() => new Date());
    this.#tracker = new QueueStallTracker(options.stallMs);
    this.#periodic = new PeriodicCheck(
      () => this.#check(),
      (error) => {
        this.#o.logger.warn(
          { target: QUEUES_TARGET, event: 'queue.check_failed', error: error.message },
          `could not read OxiCloud's queues: ${error.message}`,
        );
      },
    );
  }

  /** The threshold in ms, `null` when none is set. */
  get stallMs(): number | null {
    return this.#o.stallMs;
  }

  /** Starts the periodic check (and runs one now) when there is a threshold and an interval. */
  start(): void {
    if (this.#o.stallMs === null) return;
    if (this.#periodic.start(this.#o.checkIntervalMs)) void this.check();
  }

  stop(): Promise<void> {
    return this.#periodic.stop();
  }

  /** Every queue now, read from the database and judged (this reading also moves the stall clocks). */
  async snapshot(): Promise<QueueState[]> {
    const at = this.#now();
    const backlogs = await this.#o.reader.read();
    return this.#tracker.observe(backlogs, at);
  }

  /** One pass: mails each stall not mailed yet. Never rejects; overlapping calls share one pass. */
  check(): Promise<void> {
    return this.#periodic.run();
  }

  async #check(): Promise<void> {
    for (const state of await this.snapshot()) {
      const alerted = this.#alerted.get(state.queue);
      if (alerted !== undefined && alerted !== state.oldestId) {
        this.#alerted.delete(state.queue);
        this.#o.logger.info(
          {
            target: QUEUES_TARGET,
            event: 'queue.draining',
            queue: state.queue,
            rows: state.rows,
            stalled_oldest_id: alerted,
            oldest_id: state.oldestId,
          },
          `${state.table} is draining again: ${state.oldestId === null ? 'it is empty' : `its oldest row is now id ${state.oldestId}`} (${state.rows} row(s))`,
        );
      }
      if (!state.stalled || state.oldestId === null || state.headSince === null) continue;
      if (this.#alerted.has(state.queue)) continue;
      this.#alerted.set(state.queue, state.oldestId);
      this.#o.logger.warn(
        {
          target: QUEUES_TARGET,
          event: 'queue.stalled',
          queue: state.queue,
          rows: state.rows,
          rows_exact: state.exact,
          oldest_id: state.oldestId,
          head_since: state.headSince.toISOString(),
          stall_ms: this.#o.stallMs,
        },
        `${state.table} is not draining: its oldest row (id ${state.oldestId}) has not moved since ${state.headSince.toISOString()}, ${state.exact ? '' : 'about '}${state.rows} row(s) wait; drained by ${state.drainer}`,
      );
      const result = await this.#o.alerts.queueStalled({
        table: state.table,
        drainer: state.drainer,
        rows: state.rows,
        exact: state.exact,
        oldestId: state.oldestId,
        headSince: state.headSince,
        stallMs: this.#o.stallMs ?? 0,
      });
      // Not sent: the next check tries again (as an overdue job's claim is released).
      if (result === 'failed' || result === 'no_recipients') this.#alerted.delete(state.queue);
    }
  }
}
