/**
 * The cluster parts of the `/admin/jobs` page: the nodes table
 * (`GET /api/admin/nodes`) and a periodic job's runs from every node
 * (`GET /api/admin/jobs/{name}/periodic-runs`). Rendered with `h()` only.
 */
import type { ClusterNodeJson, PeriodicRunJson } from '../../routes/wire-types.ts';
import { byId as $, h } from './dom.ts';
import { timeEl } from './format.ts';

/** Fetches JSON from the admin API with the page's token (the page's `api`). */
export type ApiGet = <T>(path: string) => Promise<T>;

function outcomeText(run: PeriodicRunJson): string {
  const o = run.outcome;
  if (o.kind === 'err')
    return `err${run.cause && run.cause !== 'handler' ? ` (${run.cause})` : ''}: ${o.message}`;
  if (o.extra['skipped'] === 'already_running') return 'skipped: already running';
  return `ok, count ${o.count}`;
}

/** Renders the nodes table; hides the section when the server has no cluster routes (404). */
export async function refreshNodes(api: ApiGet): Promise<void> {
  const section = $('nodes-section');
  let nodes: ClusterNodeJson[];
  try {
    nodes = await api<ClusterNodeJson[]>('/api/admin/nodes');
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status === 404) {
      section.hidden = true;
      return;
    }
    $('nodes-message').textContent = `Could not load the nodes: ${(error as Error).message}`;
    return;
  }
  section.hidden = false;
  $('nodes-message').textContent = '';
  $('nodes-body').replaceChildren(
    ...nodes.map((node) => {
      const owns = [
        ...node.runs.map((run) => `${run.job_name} (${run.status})`),
        ...node.periodic_jobs.map((job) => `${job} (periodic)`),
      ];
      return h(
        'tr',
        { 'data-node': node.id },
        h(
          'th',
          { scope: 'row' },
          node.id,
          node.self ? h('span', { class: 'meta', text: ' (this server)' }) : null,
        ),
        h('td', null, timeEl(node.started_at)),
        h('td', null, `${Math.round(node.heartbeat_age_ms / 1000)} s ago`),
        h('td', null, owns.length > 0 ? owns.join(', ') : '—'),
      );
    }),
  );
}

/** Renders a periodic job's recent runs from every node into the drawer; hides them for other jobs. */
export async function refreshPeriodicRuns(api: ApiGet, name: string | null): Promise<void> {
  const section = $('periodic-section');
  if (name === null) {
    section.hidden = true;
    return;
  }
  let runs: PeriodicRunJson[];
  try {
    runs = await api<PeriodicRunJson[]>(`/api/admin/jobs/${encodeURIComponent(name)}/periodic-runs?limit=20`);
  } catch {
    section.hidden = true;
    return;
  }
  section.hidden = false;
  $('periodic-runs').replaceChildren(
    runs.length === 0
      ? h('p', { class: 'empty', text: 'No runs recorded yet.' })
      : h(
          'table',
          null,
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              h('th', { scope: 'col' }, 'Finished'),
              h('th', { scope: 'col' }, 'Source'),
              h('th', { scope: 'col' }, 'Node'),
              h('th', { scope: 'col' }, 'Outcome'),
            ),
          ),
          h(
            'tbody',
            null,
            runs.map((run) =>
              h(
                'tr',
                null,
                h('td', null, timeEl(run.finished_at)),
                h('td', null, run.slot ? `tick ${new Date(run.slot).toLocaleTimeString()}` : run.source),
                h('td', null, run.node),
                h('td', null, outcomeText(run)),
              ),
            ),
          ),
        ),
  );
}
