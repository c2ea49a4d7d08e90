import { escapeHtml, joinUrl, oneLine } from '../html.js';
import { htmlFrame, type RenderedEmail } from './rendered-email.js';

/** Why the run failed, as the scheduler records it. */
export type JobFailureCause = 'handler' | 'timeout' | 'panicked';

/** What the `job_failed` template shows. */
export interface JobFailedData {
  readonly job: string;
  readonly cause: JobFailureCause;
  /** The error message of the run. */
  readonly message: string;
  /** Part 2 (recoverable) runs only. */
  readonly runId?: string | undefined;
  readonly elapsedMs: number;
  /** The time of the run's `job.run` log line (for grep). */
  readonly at: Date;
  /** When set, the mail links to `<publicBaseUrl>/admin/jobs?highlight=<job>`. */
  readonly publicBaseUrl?: string | undefined;
}

/**
 * The `job_failed` mail: subject `[OxiCloud] Job <name> failed`, then job,
 * cause, message, run id (Part 2), elapsed time, log timestamp and a link to
 * the admin page. Every value is escaped in the HTML part.
 */
export function renderJobFailed(data: JobFailedData): RenderedEmail {
  const subject = oneLine(`[OxiCloud] Job ${data.job} failed`);
  const at = data.at.toISOString();
  const link =
    data.publicBaseUrl === undefined
      ? undefined
      : joinUrl(data.publicBaseUrl, `/admin/jobs?highlight=${encodeURIComponent(data.job)}`);

  const rows: Array<[string, string]> = [
    ['Job', data.job],
    ['Cause', data.cause],
    ['Message', data.message],
  ];
  if (data.runId !== undefined) rows.push(['Run id', data.runId]);
  rows.push(['Elapsed', `${data.elapsedMs} ms`], ['Logged at', at]);

  const text = [
    `The job ${data.job} failed.`,
    '',
    ...rows.map(([label, value]) => `${label}: ${value}`),
    '',
    `Find the log line with: event=job.run job=${data.job} at ${at}`,
    ...(link === undefined ? [] : ['', `Admin page: ${link}`]),
    '',
  ].join('\n');

  const html = htmlFrame(
    escapeHtml(subject),
    [
      `<h2 style="color: #b00020;">Job ${escapeHtml(data.job)} failed</h2>`,
      '<table style="border-collapse: collapse;">',
      ...rows.map(
        ([label, value]) =>
          `<tr><th style="text-align: left; padding: 2px 12px 2px 0; vertical-align: top;">${escapeHtml(label)}</th>` +
          `<td style="padding: 2px 0;"><code style="white-space: pre-wrap;">${escapeHtml(value)}</code></td></tr>`,
      ),
      '</table>',
      link === undefined
        ? ''
        : `<p><a href="${escapeHtml(link)}">Open ${escapeHtml(data.job)} on the admin jobs page</a></p>`,
    ].join(''),
  );

  return { subject, text, html };
}
