/**
 * The poll of the `/admin/jobs` page: every 5 s while the page is visible
 * (and at once when it shows again) it reloads the jobs, applies the
 * address's route, the health cards, the open drawer and the nodes. One
 * refresh runs at a time: a second call shares the one in flight.
 */
import type { JobSummaryJson } from '../../routes/wire-types.ts';
import { ApiError, api, describe, isAuthError, token } from './api.ts';
import { refreshNodes } from './cluster.ts';
import { byId as $ } from './dom.ts';
import { refreshDrawer } from './drawer.ts';
import { refreshHealth } from './health-view.ts';
import { applyPendingRoute, renderJobs } from './jobs-table.ts';
import { state } from './page-state.ts';

const POLL_MS = 5000;

let timer: ReturnType<typeof setTimeout> | undefined;
let refreshing: Promise<void> | null = null;

export function stopPolling(): void {
  clearTimeout(timer);
  timer = undefined;
}

function schedule(): void {
  stopPolling();
  if (token() && document.visibilityState === 'visible') timer = setTimeout(tick, POLL_MS);
}

export async function tick(): Promise<void> {
  stopPolling();
  if (!token() || document.visibilityState !== 'visible') return;
  await refresh();
  schedule();
}

export function refresh(): Promise<void> {
  if (!refreshing) {
    refreshing = (async () => {
      try {
        const jobs = await api<JobSummaryJson[]>('');
        state.jobs = Array.isArray(jobs) ? jobs : [];
        $('error').textContent = '';
        renderJobs();
        $('updated').textContent = `Updated ${new Date().toLocaleTimeString()}`;
        applyPendingRoute();
        void refreshHealth();
        if (state.drawer) await refreshDrawer(false);
        await refreshNodes(api);
      } catch (error) {
        if (!isAuthError(error) && !(error instanceof ApiError && error.code === 'STALE')) {
          $('error').textContent = `Could not load the jobs: ${describe(error)}. Retrying every 5 s.`;
        }
      } finally {
        refreshing = null;
      }
    })();
  }
  return refreshing;
}

/** Polls while the page is visible: stops when it hides, refreshes at once when it shows again. */
export function startPolling(): void {
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') void tick();
    else stopPolling();
  });
}
