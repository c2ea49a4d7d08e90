import type { Pool } from 'pg';
import {
  completed,
  type JobStore,
  type ParamsValidation,
  paused,
  type RecoverableJobHandler,
  type RunOptions,
  type RunOutcome,
} from '../src/index.js';

/** A logger that keeps every line. */
export { CapturingLogger } from '@oxicloud/test-support';

/** A door a handler waits at between batches; the test opens it. */
export class Gate {
  #open = false;
  #waiters: Array<() => void> = [];
  open() {
    this.#open = true;
    for (const w of this.#waiters.splice(0)) w();
  }
  close() {
    this.#open = false;
  }
  wait(): Promise<void> {
    if (this.#open) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function encodeCursor(n: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n);
  return out;
}

export function decodeCursor(bytes: Uint8Array | null): number {
  if (bytes === null) return 0;
  if (bytes.byteLength !== 4) throw new Error(`cursor must be 4 bytes, got ${bytes.byteLength}`);
  return new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0);
}

export interface WalkerOptions {
  total: number;
  batch: number;
  /** Awaited before each batch. */
  gate?: Gate;
  /** Called after each checkpoint with the new position. */
  onBatch?: (position: number, store: JobStore) => void | Promise<void>;
  delayMs?: number;
  estimate?: number | null;
  validateParams?: (raw: unknown) => ParamsValidation;
  validateTriggerParams?: (raw: unknown) => ParamsValidation;
  /** Ignore the abort signal and status polls. */
  stubborn?: boolean;
}

/**
 * A recoverable job that walks 0..total in batches: cursor = 4-byte
 * position, one checkpoint per batch, polls the status and the signal
 * between batches. Records what each run saw.
 */
export function walker(name: string, options: WalkerOptions) {
  const seen: Array<{
    runId: string;
    startCursor: number;
    params: Readonly<Record<string, unknown>>;
    options: RunOptions;
  }> = [];
  const handler: RecoverableJobHandler & { seen: typeof seen } = {
    name,
    seen,
    ...(options.validateParams ? { validateParams: options.validateParams } : {}),
    ...(options.validateTriggerParams ? { validateTriggerParams: options.validateTriggerParams } : {}),
    ...(options.estimate !== undefined ? { estimateTotal: async () => options.estimate ?? null } : {}),
    async runResumable(store: JobStore, signal: AbortSignal): Promise<RunOutcome> {
      let position = decodeCursor(await store.loadCursor());
      seen.push({ runId: store.runId, startCursor: position, params: store.params, options: store.options });
      while (position < options.total) {
        await options.gate?.wait();
        if (!options.stubborn && (signal.aborted || (await store.status()) === 'CancelRequested')) {
          return paused(encodeCursor(position));
        }
        if (options.delayMs) await sleep(options.delayMs);
        const step = Math.min(options.batch, options.total - position);
        position += step;
        await store.checkpoint(encodeCursor(position), step);
        await options.onBatch?.(position, store);
      }
      return completed();
    },
  };
  return handler;
}

export async function runRow(pool: Pool, runId: string) {
  const { rows } = await pool.query(
    'SELECT id, job_name, status, cursor, stats, params, error_message, completed_at, pauses, active_ms FROM jobs.recoverable_runs WHERE id = $1',
    [runId],
  );
  return rows[0] as
    | {
        id: string;
        job_name: string;
        status: string;
        cursor: Buffer | null;
        stats: Record<string, unknown>;
        params: Record<string, unknown>;
        error_message: string | null;
        completed_at: Date | null;
        pauses: Array<{ at: string; reason: string }>;
        active_ms: string;
      }
    | undefined;
}

export async function waitFor(predicate: () => Promise<boolean> | boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error('waitFor: condition not met in time');
    await sleep(10);
  }
}
