import { setTimeout as sleep } from 'node:timers/promises';

/** Options of {@link waitUntil}. */
export interface WaitUntilOptions {
  /** How long to wait before giving up. @defaultValue 30 000 ms */
  readonly ms?: number;
  /** Pause between probes. @defaultValue 100 ms */
  readonly everyMs?: number;
  /** A probe that throws counts as "not yet" (a process still starting). @defaultValue false */
  readonly retryOnError?: boolean;
}

/**
 * Probes until `probe` returns a value (not `undefined`) and returns it; an
 * error naming `what` once the deadline passes. For the state of another
 * process (a line, a mail, a metric), not for time itself.
 */
export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  options: WaitUntilOptions = {},
): Promise<T> {
  const { ms = 30_000, everyMs = 100, retryOnError = false } = options;
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await (retryOnError ? probe().catch(() => undefined) : probe());
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}
