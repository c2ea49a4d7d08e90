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
  | { readonly kind: 'paused'; readonly cursor: Uint8Array }
  | { readonly kind: 'failed'; readonly message: string };

export const completed = (): RunOutcome => ({ kind: 'completed' });
export const paused = (cursor: Uint8Array): RunOutcome => ({ kind: 'paused', cursor });
export const failed = (message: string): RunOutcome => ({ kind: 'failed', message });
