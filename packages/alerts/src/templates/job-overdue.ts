import { escapeHtml, joinUrl, oneLine } from '../html.js';
import { htmlFrame, type RenderedEmail } from './rendered-email.js';

/** What the `job_overdue` template shows. */
export interface JobOverdueData {
  readonly job: string;
  /** `true` when the overdue cadence is the job's deep one (deep `storage_consistency`). */
  readonly deep?: boolean | undefined;
  /** The expected cadence: a success is due at least this often. */
  readonly maxAgeMs: number;
  /** The last success, or `null` when the job never succeeded on this database. */
  readonly lastSuccessAt: Date | null;
  /** When the job was first registered on this database (the clock of a job that never succeeded). */
  readonly firstRegisteredAt: Date;
  /** When it turned overdue: the last success (else the registration) + 1.5 × the cadence. */
  readonly overdueSince: Date;
  /** When set, the mail links to `<publicBaseUrl>/admin/jobs?highlight=<job>`. */
  readonly publicBaseUrl?: string | undefined;
}

function hours(ms: number): string {
  const h = ms / 3_600_000;
  if (h >= 48) return `${Math.round((h / 24) * 10) / 10} days`;
  if (h >= 1) return `${Math.round(h * 10) / 10} h`;
  return `${Math.round(ms / 100) / 10} s`;
}

/**
 * The `job_overdue` mail: subject `[OxiCloud] Job <name> is overdue`, then
 * the job, its expected cadence, its last success (or "never", with the
 * registration time the age is counted from) and since when it is overdue.
 * Every value is escaped in the HTML part.
 */
export function renderJobOverdue(data: JobOverdueData): RenderedEmail {
  const label = data.deep === true ? `${data.job} (deep)` : data.job;
  const subject = oneLine(`[OxiCloud] Job ${label} is overdue`);
  const link =
    data.publicBaseUrl === undefined
      ? undefined
      : joinUrl(data.publicBaseUrl, `/admin/jobs?highlight=${encodeURIComponent(data.job)}`);
  const rows: Array<[string, string]> = [
    ['Job', label],
    ['Expected cadence', `a success at least every ${hours(data.maxAgeMs)}`],
    [
      'Last success',
      data.lastSuccessAt === null
        ? `never (registered on this database at ${data.firstRegisteredAt.toISOString()})`
        : data.lastSuccessAt.toISOString(),
    ],
    ['Overdue since', data.overdueSince.toISOString()],
  ];
  const text = [
    `The job ${label} has not succeeded within 1.5 times its expected cadence.`,
    '',
    ...rows.map(([name, value]) => `${name}: ${value}`),
    '',
    'Trigger it, or look at its failures: this mail is sent once per overdue episode; a successful run clears it.',
    ...(link === undefined ? [] : ['', `Admin page: ${link}`]),
    '',
  ].join('\n');
  const html = htmlFrame(
    escapeHtml(subject),
    [
      `<h2 style="color: #b06000;">Job ${escapeHtml(label)} is overdue</h2>`,
      '<table style="border-collapse: collapse;">',
      ...rows.map(
        ([name, value]) =>
          `<tr><th style="text-align: left; padding: 2px 12px 2px 0; vertical-align: top;">${escapeHtml(name)}</th>` +
          `<td style="padding: 2px 0;"><code style="white-space: pre-wrap;">${escapeHtml(value)}</code></td></tr>`,
      ),
      '</table>',
      '<p>It has not succeeded within 1.5 times its expected cadence. A successful run clears it.</p>',
      link === undefined
        ? ''
        : `<p><a href="${escapeHtml(link)}">Open ${escapeHtml(data.job)} on the admin jobs page</a></p>`,
    ].join(''),
  );
  return { subject, text, html };
}
