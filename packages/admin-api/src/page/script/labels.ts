/**
 * The page's words for ids, users and outcomes, without the DOM (unit-tested
 * in `../labels.test.ts`): an id by the part that tells it apart, a user by
 * name, a last outcome by what it says.
 */
import type { JobOutcomeJson } from '../../routes/wire-types.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * An id by the part that tells it apart: a UUID by its last 12 digits,
 * `…8000000000a1` (UUIDv7s made close together share their leading
 * digits, the time); a long one (a blob's hash) by its first 12; a short
 * one as it is.
 */
export function idEnd(id: string): string {
  if (UUID.test(id)) return `…${id.slice(-12)}`;
  return id.length > 24 ? `${id.slice(0, 12)}…` : id;
}

/** Who did something: the user name the API resolved, else the id (`system`) or a user id's end. */
export function userLabel(id: string | null | undefined, name?: string | null): string {
  return id ? (name ?? idEnd(id)) : '—';
}

/**
 * What a last outcome says: `err`; `Paused` for a run that stopped with its
 * cursor saved (cancelled, or out of time), not done; `skipped`; else `ok`.
 */
export function outcomeStatus(outcome: JobOutcomeJson): string {
  if (outcome.kind === 'err') return 'err';
  if (outcome.extra['paused'] === true) return 'Paused';
  return outcome.extra['skipped'] ? 'skipped' : 'ok';
}
