import type { JobHandler, JobOutcome, JobRunArgs } from './job-handler.js';
import { err } from './job-handler.js';
import type { RunCause } from './job-summary.js';
import { messageOf } from './scheduler-error.js';

/** How a supervised run ended: its outcome and, on `err`, why. */
export interface SupervisedOutcome {
  readonly outcome: JobOutcome;
  readonly cause: RunCause | undefined;
}

type Settlement =
  | { readonly kind: 'returned'; readonly outcome: JobOutcome }
  | { readonly kind: 'threw'; readonly message: string }
  | { readonly kind: 'timeout' };

/**
 * Runs one handler under the supervisor's two rules, and never rejects:
 *
 * - **Timeout.** With `timeoutMs`, the run ends as `err('job <name> timed
 *   out after N ms')` (cause `timeout`) when it trips, and `controller`
 *   aborts the handler's signal; the caller gets the outcome at that moment
 *   even if the handler ignores the signal.
 * - **Containment.** A throw, a rejection or a return that is not a
 *   `JobOutcome` ends as `err(message)` (cause `panicked`); a returned `err`
 *   has cause `handler`.
 *
 * The handler's own promise is put in `inFlight` until it settles (it may
 * outlive its timeout), so a stop can wait for it.
 */
export async function superviseRun(
  handler: JobHandler,
  args: JobRunArgs,
  options: {
    readonly controller: AbortController;
    readonly timeoutMs: number | null;
    readonly inFlight: Set<Promise<unknown>>;
  },
): Promise<SupervisedOutcome> {
  const { controller, timeoutMs, inFlight } = options;
  const handlerRun = invoke(handler, args, controller.signal);
  inFlight.add(handlerRun);
  void handlerRun.then(() => inFlight.delete(handlerRun));

  let timer: ReturnType<typeof setTimeout> | undefined;
  const contenders: Promise<Settlement>[] = [handlerRun];
  if (timeoutMs !== null) {
    contenders.push(
      new Promise((resolve) => {
        timer = setTimeout(() => resolve({ kind: 'timeout' }), timeoutMs);
      }),
    );
  }
  const settlement = await Promise.race(contenders);
  if (timer !== undefined) clearTimeout(timer);

  switch (settlement.kind) {
    case 'returned':
      return {
        outcome: settlement.outcome,
        cause: settlement.outcome.kind === 'err' ? 'handler' : undefined,
      };
    case 'threw':
      return { outcome: err(settlement.message), cause: 'panicked' };
    case 'timeout': {
      const outcome = err(`job ${handler.name} timed out after ${timeoutMs} ms`);
      controller.abort(new Error(outcome.message));
      return { outcome, cause: 'timeout' };
    }
  }
}

/** Runs the handler; never rejects (throws become `threw`). */
async function invoke(handler: JobHandler, args: JobRunArgs, signal: AbortSignal): Promise<Settlement> {
  try {
    const outcome: unknown = await handler.run(args, signal);
    if (!isJobOutcome(outcome)) {
      return {
        kind: 'threw',
        message: `handler returned ${describe(outcome)} instead of a JobOutcome ({ kind: 'ok' | 'err', … })`,
      };
    }
    return { kind: 'returned', outcome };
  } catch (error) {
    return { kind: 'threw', message: messageOf(error) };
  }
}

function isJobOutcome(value: unknown): value is JobOutcome {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as { kind?: unknown; count?: unknown; extra?: unknown; message?: unknown };
  if (candidate.kind === 'ok') {
    return (
      typeof candidate.count === 'number' && typeof candidate.extra === 'object' && candidate.extra !== null
    );
  }
  return candidate.kind === 'err' && typeof candidate.message === 'string';
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  return typeof value;
}
