/**
 * The address of the `/admin/jobs` page: `/admin/jobs/<name>[/runs/<id>[/findings]]`
 * opens a job's drawer (on a run, on its findings tab) and `?highlight=<name>`
 * marks a row. The page reads it once at start and keeps it in step with the
 * drawer.
 */
import { state, type Tab } from './page-state.ts';

export const PAGE = '/admin/jobs';

/** The address as the page reads it. */
export interface Route {
  readonly name: string | null;
  readonly runId: string | null;
  readonly tab: Tab;
  readonly highlight: string | null;
}

export function parseRoute(): Route {
  const rest = location.pathname.startsWith(PAGE) ? location.pathname.slice(PAGE.length) : '';
  const parts = rest
    .split('/')
    .filter(Boolean)
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  const params = new URLSearchParams(location.search);
  return {
    name: parts[0] || null,
    runId: parts[1] === 'runs' && parts[2] ? parts[2] : null,
    tab: parts[3] === 'findings' || params.get('tab') === 'findings' ? 'findings' : 'overview',
    highlight: params.get('highlight'),
  };
}

export function syncUrl(): void {
  const d = state.drawer;
  let path = PAGE;
  if (d) {
    path += `/${encodeURIComponent(d.name)}`;
    if (d.runId && (d.explicitRun || d.tab === 'findings')) {
      path += `/runs/${encodeURIComponent(d.runId)}${d.tab === 'findings' ? '/findings' : ''}`;
    }
  }
  const params = new URLSearchParams(location.search);
  params.delete('tab');
  const search = params.toString();
  history.replaceState(null, '', path + (search ? `?${search}` : ''));
}
