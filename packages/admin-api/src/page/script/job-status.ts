/**
 * A job's and a run's status as the `/admin/jobs` page shows them: the
 * status badge, "Overdue", and which status and last-run time a job has
 * (a recoverable job follows its latest run, a periodic one its last outcome).
 */
import type { JobSummaryJson, RunStatusJson } from '../../routes/wire-types.ts';
import { h } from './dom.ts';
import { outcomeStatus } from './labels.ts';

/** Statuses the page polls a run's details for. */
export const ACTIVE: ReadonlySet<string> = new Set<RunStatusJson>(['Running', 'CancelRequested']);

const STATUS_TEXT: Readonly<Record<RunStatusJson | 'ok' | 'err', string>> = {
  ok: 'ok',
  err: 'err',
  Running: 'Running',
  Paused: 'Paused',
  CancelRequested: 'Cancel requested',
  Completed: 'Completed',
  Failed: 'Failed',
};

export function statusText(status: string): string | undefined {
  return Object.hasOwn(STATUS_TEXT, status) ? STATUS_TEXT[status as keyof typeof STATUS_TEXT] : undefined;
}

export function badge(status: string | null | undefined): HTMLElement {
  if (!status) return h('span', { class: 'badge none', text: '—' });
  const known = statusText(status);
  return h('span', { class: `badge ${known ? status : 'none'}`, 'data-status': status }, known ?? status);
}

/** "Overdue": no success within 1.5 × the expected cadence (the title says since when). */
export function overdueBadge(overdue: NonNullable<JobSummaryJson['overdue']>): HTMLElement {
  const last = overdue.last_success_at ? `last success ${overdue.last_success_at}` : 'never succeeded';
  return h('span', {
    class: 'badge overdue',
    title: `${overdue.deep ? 'deep run ' : ''}overdue since ${overdue.overdue_since} (${last})`,
    text: overdue.deep ? 'Overdue (deep)' : 'Overdue',
  });
}

export function isRecoverable(job: JobSummaryJson | undefined): boolean {
  return job?.kind === 'recoverable';
}

/** The status the table shows: recoverable jobs follow their latest run, others their last outcome. */
export function jobStatus(job: JobSummaryJson): string | null {
  if (isRecoverable(job) && job.latest_run) return job.latest_run.status;
  if (job.running) return 'Running';
  if (job.last_outcome?.outcome) return outcomeStatus(job.last_outcome.outcome);
  return null;
}

export function lastRunAt(job: JobSummaryJson): string | null {
  const run = isRecoverable(job) ? job.latest_run : null;
  if (run) {
    return ACTIVE.has(run.status)
      ? run.started_at
      : run.completed_at || run.last_progress_at || run.started_at;
  }
  if (job.running && job.running_since) return job.running_since;
  return job.last_outcome ? job.last_outcome.at : null;
}
