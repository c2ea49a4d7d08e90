/**
 * One queue's backlog at one instant: what a {@link QueueBacklogReader} gives
 * (`OxiQueueBacklog` of `@oxicloud/storage/oxicloud` on OxiCloud's domain).
 */
export interface QueueBacklog {
  /** The queue's name, the metrics' `queue` label (e.g. `tree_etag_dirty`). */
  readonly queue: string;
  /** Its table, e.g. `storage.tree_etag_dirty`. */
  readonly table: string;
  /** The service that should drain it, in words (for the mail). */
  readonly drainer: string;
  /** Rows now (exact, or an estimate when {@link exact} is `false`). */
  readonly rows: number;
  readonly exact: boolean;
  /** The lowest id in the queue (its oldest row); `null` when empty. */
  readonly oldestId: number | null;
}

/** The port the server reads OxiCloud's queues through (read-only). */
export interface QueueBacklogReader {
  read(): Promise<readonly QueueBacklog[]>;
}

/** A queue's backlog judged against the time its oldest row has been seen at its head. */
export interface QueueState extends QueueBacklog {
  /** When this process first saw {@link oldestId} as the oldest row; `null` when empty. */
  readonly headSince: Date | null;
  /** The reading's time − {@link headSince} in ms: a lower bound of the oldest row's age (0 when empty). */
  readonly headAgeMs: number;
  /** Non-empty, and the same oldest row for at least the threshold (never without one). */
  readonly stalled: boolean;
}

/**
 * The stall signal of a queue whose table has no timestamp: the lowest id.
 * A drainer that works takes the oldest rows, so the lowest id changes (or
 * the queue empties) between two readings seconds apart; a lowest id that
 * stays the same for `stallMs` means the drainer stopped. The clock of an
 * oldest row starts at the first reading that saw it, so after a restart of
 * this process a stall is judged `stallMs` later at the earliest.
 */
export class QueueStallTracker {
  readonly #stallMs: number | null;
  readonly #heads = new Map<string, { readonly id: number; readonly since: Date }>();
  #lastAt = Number.NEGATIVE_INFINITY;

  /** @param stallMs The threshold; `null`: nothing is ever stalled (the ages are still kept). */
  constructor(stallMs: number | null) {
    this.#stallMs = stallMs;
  }

  /**
   * Judges the readings taken at `at` and remembers each queue's oldest row.
   * A reading older than one already observed (two reads overlapped) is
   * judged but changes nothing remembered.
   */
  observe(backlogs: readonly QueueBacklog[], at: Date): QueueState[] {
    const latest = at.getTime() >= this.#lastAt;
    if (latest) this.#lastAt = at.getTime();
    return backlogs.map((backlog) => {
      let head = this.#heads.get(backlog.queue);
      if (backlog.oldestId === null) {
        if (latest) this.#heads.delete(backlog.queue);
        head = undefined;
      } else if (head?.id !== backlog.oldestId) {
        head = { id: backlog.oldestId, since: at };
        if (latest) this.#heads.set(backlog.queue, head);
      }
      const headAgeMs = head === undefined ? 0 : Math.max(0, at.getTime() - head.since.getTime());
      return {
        ...backlog,
        headSince: head?.since ?? null,
        headAgeMs,
        stalled: head !== undefined && this.#stallMs !== null && headAgeMs >= this.#stallMs,
      };
    });
  }
}
