/**
 * What a recoverable run returns.
 * - `completed`: walked the whole space; the engine writes `Completed`.
 * - `paused`: cooperative pause (cancel poll or shutdown); the engine persists
 *   `cursor` and writes `Paused` so a later resume picks up here.
 * - `failed`: irrecoverable; the cursor is not advanced, the engine writes
 *   `Failed` with the message.
 */
export type RunOutcome =
  | { readonly kind: 'completed' }
  | {
      readonly kind: 'paused';
      readonly cursor: Uint8Array;
      /** Why it paused, kept in the run's pause history (the engine supplies one when absent). */
      readonly reason?: string;
    }
  | { readonly kind: 'failed'; readonly message: string };

export const completed = (): RunOutcome => ({ kind: 'completed' });
export const paused = (cursor: Uint8Array, reason?: string): RunOutcome =>
  reason === undefined ? { kind: 'paused', cursor } : { kind: 'paused', cursor, reason };
export const failed = (message: string): RunOutcome => ({ kind: 'failed', message });
