import type { ApiNode, ApiPeriodicRun } from './api-types.js';
import { describeOutcome, formatDuration, relativeTime, renderTable } from './format.js';

/** The `oxijobs nodes` table: each node, its age, its last heartbeat and what it runs. */
export function formatNodes(nodes: readonly ApiNode[], nowMs: number): string {
  if (nodes.length === 0) return 'no nodes are registered\n';
  const rows = nodes.map((node) => {
    const owns = [
      ...node.runs.map((run) => `${run.job_name} ${run.run_id}`),
      ...node.periodic_jobs.map((job) => `${job} (periodic)`),
    ];
    return [
      `${node.id}${node.self ? ' (this)' : ''}`,
      node.version,
      relativeTime(node.started_at, nowMs),
      `${formatDuration(node.heartbeat_age_ms)} ago`,
      owns.length > 0 ? owns.join(', ') : '-',
    ];
  });
  return renderTable(['NODE', 'VERSION', 'STARTED', 'LAST HEARTBEAT', 'RUNS'], rows);
}

/** The `oxijobs jobs history` table: a periodic job's runs from every node, newest first. */
export function formatPeriodicRuns(runs: readonly ApiPeriodicRun[], nowMs: number): string {
  if (runs.length === 0) return 'no runs recorded\n';
  const rows = runs.map((run) => [
    relativeTime(run.finished_at, nowMs),
    run.source,
    run.slot ?? '-',
    run.node,
    formatDuration(run.elapsed_ms),
    describeOutcome(run.outcome),
  ]);
  return renderTable(['FINISHED', 'SOURCE', 'SLOT', 'NODE', 'TOOK', 'OUTCOME'], rows);
}
