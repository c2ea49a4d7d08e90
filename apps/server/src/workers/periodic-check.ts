/**
 * A check the server runs every `intervalMs` (the freshness and queue
 * monitors): one pass at a time (a call while one runs shares it), a pass
 * that throws is handed to `onError` and never rejects, and `stop` ends the
 * timer and waits for a pass in flight.
 */
export class PeriodicCheck {
  readonly #pass: () => Promise<void>;
  readonly #onError: (error: Error) => void;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;

  constructor(pass: () => Promise<void>, onError: (error: Error) => void) {
    this.#pass = pass;
    this.#onError = onError;
  }

  /** One pass now. Never rejects; overlapping calls share one pass. */
  run(): Promise<void> {
    this.#running ??= this.#pass()
      .catch((error: unknown) => this.#onError(error as Error))
      .finally(() => {
        this.#running = null;
      });
    return this.#running;
  }

  /** Starts the timer (unref'd) when `intervalMs` > 0 and it is not running yet; `true` when it started. */
  start(intervalMs: number): boolean {
    if (intervalMs <= 0 || this.#timer !== null) return false;
    this.#timer = setInterval(() => void this.run(), intervalMs);
    this.#timer.unref();
    return true;
  }

  /** Stops the timer and waits for a pass in flight. */
  stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    return this.#running ?? Promise.resolve();
  }
}
