/** Where a `jobs` command writes and how it waits: the process's streams and clock, or a test's. */
export interface CliIo {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  /** Epoch milliseconds. */
  now(): number;
  /** Resolves after `ms`, or at once when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Aborted on Ctrl-C while following a run. */
  readonly signal?: AbortSignal;
}

/** The part of a writable stream the CLI uses (cli-progress needs a real stream when `isTTY`). */
export interface OutputStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  /** Terminal width, when a terminal. */
  readonly columns?: number;
}

/** Resolves after `ms`, or at once when `signal` aborts; never rejects. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The process's own streams and clock. */
export function processIo(signal?: AbortSignal): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    now: () => Date.now(),
    sleep,
    ...(signal ? { signal } : {}),
  };
}
