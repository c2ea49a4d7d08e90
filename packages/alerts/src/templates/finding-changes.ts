import { type Severity, severityRank } from '@oxicloud/consistency/severity';
import { escapeHtml, joinUrl, oneLine } from '../html.js';
import { htmlFrame, type RenderedEmail } from './rendered-email.js';

/** What a run changed about one finding: only these are mailed. */
export type MailedChange = 'new' | 'reopened' | 'worse' | 'expired';

/** One changed finding in the mail. */
export interface ChangedFinding {
  readonly id: string;
  readonly kind: string;
  readonly severity: Severity;
  readonly resourceId: string;
  readonly change: MailedChange;
  readonly magnitude: number | null;
}

/** What the `finding_changes` template shows. */
export interface FindingChangesData {
  readonly job: string;
  readonly runId: string;
  /** The changed findings (at most a page of them; `counts` has the totals), worst first. */
  readonly changed: readonly ChangedFinding[];
  readonly counts: {
    readonly new: number;
    readonly reopened: number;
    readonly worse: number;
    readonly expired: number;
    readonly stillOpen: number;
    readonly fixed: number;
  };
  readonly at: Date;
  /** When set, the mail links to `<publicBaseUrl>/admin/jobs/<job>/runs/<runId>` and each finding. */
  readonly publicBaseUrl?: string | undefined;
}

const LABEL: Record<MailedChange, string> = {
  new: 'new',
  reopened: 'reopened (was fixed)',
  worse: 'worse than when accepted',
  expired: 'acceptance expired',
};

/** How many changes the mail is about: new + reopened + worse + expired. */
export function changedTotal(counts: FindingChangesData['counts']): number {
  return counts.new + counts.reopened + counts.worse + counts.expired;
}

/**
 * The findings mail of a run: only what changed. Subject `[OxiCloud] <job>:
 * N new or reopened finding(s)`; the changed findings worst first, then the
 * counts of what is still open and what this run fixed. Every value is
 * escaped in the HTML part.
 */
export function renderFindingChanges(data: FindingChangesData): RenderedEmail {
  const total = changedTotal(data.counts);
  const noun = total === 1 ? 'finding' : 'findings';
  const subject = oneLine(`[OxiCloud] ${data.job}: ${total} new or reopened ${noun}`);
  const at = data.at.toISOString();
  const rows = [...data.changed].sort((a, b) => severityRank(a.severity) - severityRank(b.severity));
  const runLink =
    data.publicBaseUrl === undefined
      ? undefined
      : joinUrl(
          data.publicBaseUrl,
          `/admin/jobs/${encodeURIComponent(data.job)}/runs/${encodeURIComponent(data.runId)}`,
        );
  const summary = [
    `${data.counts.new} new`,
    `${data.counts.reopened} reopened`,
    `${data.counts.worse} worse`,
    ...(data.counts.expired > 0 ? [`${data.counts.expired} acceptance(s) expired`] : []),
    `${data.counts.stillOpen} still open`,
    `${data.counts.fixed} fixed by this run`,
  ].join(', ');
  const text = [
    `The consistency check ${data.job} reports what changed since its previous runs.`,
    '',
    `Job: ${data.job}`,
    `Run id: ${data.runId}`,
    `Logged at: ${at}`,
    `Summary: ${summary}`,
    '',
    'Changed findings:',
    ...rows.map((f) => `  ${f.severity}  ${f.kind}  ${f.resourceId}  (${LABEL[f.change]})`),
    ...(rows.length < total ? [`  … and ${total - rows.length} more`] : []),
    ...(runLink === undefined ? [] : ['', `Run on the admin page: ${runLink}`]),
    '',
  ].join('\n');
  const cell = 'style="text-align: left; padding: 2px 12px 2px 0;"';
  const html = htmlFrame(
    escapeHtml(subject),
    [
      `<h2>${escapeHtml(data.job)}: ${total} new or reopened ${noun}</h2>`,
      `<p>Run id <code>${escapeHtml(data.runId)}</code>, logged at <code>${escapeHtml(at)}</code>.</p>`,
      `<p>${escapeHtml(summary)}.</p>`,
      '<table style="border-collapse: collapse;">',
      `<tr><th ${cell}>Severity</th><th ${cell}>Kind</th><th ${cell}>Resource</th><th ${cell}>Change</th></tr>`,
      ...rows.map(
        (f) =>
          `<tr><td ${cell}>${escapeHtml(f.severity)}</td><td ${cell}><code>${escapeHtml(f.kind)}</code></td>` +
          `<td ${cell}><code>${escapeHtml(f.resourceId)}</code></td><td ${cell}>${escapeHtml(LABEL[f.change])}</td></tr>`,
      ),
      '</table>',
      rows.length < total ? `<p>… and ${escapeHtml(total - rows.length)} more.</p>` : '',
      runLink === undefined
        ? ''
        : `<p><a href="${escapeHtml(runLink)}">Open this run on the admin jobs page</a></p>`,
    ].join(''),
  );
  return { subject, text, html };
}
