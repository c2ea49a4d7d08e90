/**
 * What the operator starts from the `/admin/jobs` page: Run, Run deep and
 * Resume (`POST /api/admin/jobs/{name}/trigger`) and Cancel (`POST …/cancel`).
 * Each says what happened in the notice live region, then reloads the page's
 * data (the poll's refresh, given to {@link startJobActions}).
 */
import type {
  CancelResultJson,
  OutcomeEnvelopeJson,
  RunTriggeredJson,
  TriggerAcceptedJson,
} from '../../routes/wire-types.ts';
import { api, describe, isAuthError } from './api.ts';
import { byId as $ } from './dom.ts';
import { fmt, shortId } from './format.ts';
import { isRecoverable } from './job-status.ts';
import { state } from './page-state.ts';

type TriggerAnswer = RunTriggeredJson | OutcomeEnvelopeJson | TriggerAcceptedJson;

let refresh: () => Promise<void> = () => Promise.resolve();

/** Says `message` in the notice live region (the actions' answers and the table's status changes). */
export function announce(message: string): void {
  $('notice').textContent = message;
}

export async function trigger(name: string, deep: boolean, button?: HTMLButtonElement): Promise<void> {
  const job = state.jobs.find((j) => j.name === name);
  const query = new URLSearchParams();
  if (!isRecoverable(job)) query.set('wait', 'false');
  if (deep) query.set('deep', 'true');
  const qs = query.toString();
  if (button) button.disabled = true;
  try {
    const result = await api<TriggerAnswer | null>(
      `/${encodeURIComponent(name)}/trigger${qs ? `?${qs}` : ''}`,
      { method: 'POST' },
    );
    if (result && 'run_id' in result) {
      const what = result.already_running ? 'already running' : result.resumed ? 'resumed' : 'started';
      announce(`${name}: run ${shortId(result.run_id)} ${what}${deep ? ' (deep)' : ''}.`);
      if (state.drawer && state.drawer.name === name) state.drawer.runId = result.run_id;
    } else if (result && 'outcome' in result) {
      const o = result.outcome;
      const skipped = o.kind === 'ok' ? o.extra['skipped'] : undefined;
      announce(
        `${name}: ${
          o.kind === 'ok'
            ? skipped
              ? `skipped (${String(skipped)})`
              : `ok, count ${fmt(o.count)}`
            : `failed: ${o.message}`
        }`,
      );
    } else {
      announce(`${name}: started${deep ? ' (deep)' : ''}.`);
    }
    await refresh();
  } catch (error) {
    if (!isAuthError(error)) announce(`${name}: could not start: ${describe(error)}`);
  } finally {
    if (button) button.disabled = false;
  }
}

export async function cancel(name: string, button?: HTMLButtonElement): Promise<void> {
  if (button) button.disabled = true;
  try {
    const result = await api<CancelResultJson | null>(`/${encodeURIComponent(name)}/cancel`, {
      method: 'POST',
    });
    announce(
      `${name}: run ${shortId(result?.run_id)} ${
        result?.status === 'Paused' ? 'is paused.' : 'cancel requested; it pauses at its next batch boundary.'
      }`,
    );
    await refresh();
  } catch (error) {
    if (!isAuthError(error)) announce(`${name}: could not cancel: ${describe(error)}`);
  } finally {
    if (button) button.disabled = false;
  }
}

/** Wires the actions; `reload` is the page's refresh, run after each action. */
export function startJobActions(reload: () => Promise<void>): void {
  refresh = reload;
}
