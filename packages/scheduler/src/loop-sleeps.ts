/** setTimeout's largest delay (about 24.8 days); longer sleeps are re-armed by the loop. */
export const MAX_DELAY_MS = 2_147_483_647;

/** One timer of {@link LoopSleeps}. */
export interface Sleep {
  readonly done: Promise<void>;
  cancel(): void;
}

/**
 * The supervisor loop's timers: each resolves after its delay or, when
 * wakeable, as soon as the loop is woken (a job registered, the registry
 * stopping), so the loop re-picks the next due job at once.
 */
export class LoopSleeps {
  readonly #wakeable = new Set<Sleep>();

  /** A timer that resolves after `ms` (clamped to 0..{@link MAX_DELAY_MS}) or, when `wakeable`, at {@link wake}. */
  sleep(ms: number, wakeable = true): Sleep {
    let finish: () => void = () => undefined;
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(() => finish(), Math.min(Math.max(0, ms), MAX_DELAY_MS));
      finish = () => {
        clearTimeout(timer);
        this.#wakeable.delete(sleep);
        resolve();
      };
    });
    const sleep: Sleep = { done, cancel: () => finish() };
    if (wakeable) this.#wakeable.add(sleep);
    return sleep;
  }

  /** Ends every wakeable timer now. */
  wake(): void {
    for (const sleep of [...this.#wakeable]) sleep.cancel();
  }
}
