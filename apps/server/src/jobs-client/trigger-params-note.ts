import type { ApiRunStarted } from './api-types.js';
import { compactJson } from './format.js';

/**
 * The line under a recoverable trigger's answer when the run is not fresh: a
 * resumed (or already active) run keeps its stored params, so say which it
 * uses and which of the ones asked for were not applied. `''` for a fresh run,
 * or when the server sent no params (an older server).
 *
 * @example
 * ```ts
 * triggerParamsNote('files_consistency', { …, resumed: true, params: { batch_size: 50 }, params_not_applied: { batch_size: 500 } });
 * // → 'files_consistency: the resumed run keeps its stored params {"batch_size":50}; not applied: {"batch_size":500}\n'
 * ```
 */
export function triggerParamsNote(name: string, body: ApiRunStarted): string {
  if (!body.resumed && !body.already_running) return '';
  if (body.params === undefined) return '';
  const which = body.resumed ? 'the resumed run keeps its stored params' : 'the active run keeps its params';
  const notApplied = body.params_not_applied ?? {};
  const ignored =
    Object.keys(notApplied).length > 0
      ? `; not applied: ${compactJson(notApplied, 200)} (cancel it and trigger again for a fresh run with them)`
      : '';
  return `${name}: ${which} ${compactJson(body.params, 200)}${ignored}\n`;
}
