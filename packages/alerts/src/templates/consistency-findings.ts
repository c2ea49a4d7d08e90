import { SEVERITIES, type Severity, severityRank } from '@oxicloud/consistency/severity';
import { escapeHtml, joinUrl, oneLine } from '../html.js';
import { htmlFrame, type RenderedEmail } from './rendered-email.js';

/** Severity of a finding: the consistency package's `Severity` (its one list, worst first). */
export type AlertSeverity = Severity;

/** Worst first: the consistency package's `SEVERITIES`. */
export const SEVERITY_ORDER: readonly AlertSeverity[] = SEVERITIES;

/** How many findings of one (kind, severity) a run recorded. */
export interface FindingCount {
  readonly kind: string;
  readonly severity: AlertSeverity;
  readonly count: number;
}

/** One finding shown as an example. */
export interface FindingExample {
  readonly kind: string;
  readonly severity: AlertSeverity;
  readonly resourceId: string;
  readonly detail: Readonly<Record<string, unknown>>;
}

/** What the `consistency_findings` template shows. */
export interface ConsistencyFindingsData {
  readonly job: string;
  readonly runId: string;
  /** Counts per (kind, severity); duplicates are summed. */
  readonly counts: readonly FindingCount[];
  /** Candidate examples; the worst-severity one is shown (first one on ties). */
  readonly examples: readonly FindingExample[];
  readonly at: Date;
  /** When set, the mail links to `<publicBaseUrl>/admin/jobs/<job>/runs/<runId>`. */
  readonly publicBaseUrl?: string | undefined;
}

const rank = severityRank;

/** Counts merged per (kind, severity), sorted worst severity first, then biggest count, then kind. */
export function groupFindingCounts(counts: readonly FindingCount[]): FindingCount[] {
  const merged = new Map<string, FindingCount>();
  for (const entry of counts) {
    const key = `${entry.severity}\u0000${entry.kind}`;
    const previous = merged.get(key);
    merged.set(key, {
      kind: entry.kind,
      severity: entry.severity,
      count: (previous?.count ?? 0) + entry.count,
    });
  }
  return [...merged.values()]
    .filter((entry) => entry.count > 0)
    .sort(
      (a, b) =>
        rank(a.severity) - rank(b.severity) ||
        b.count - a.count ||
        (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0),
    );
}

/** The example with the worst severity (earliest in `SEVERITIES`); first on ties. */
export function worstExample(examples: readonly FindingExample[]): FindingExample | undefined {
  let worst: FindingExample | undefined;
  for (const example of examples) {
    if (worst === undefined || rank(example.severity) < rank(worst.severity)) worst = example;
  }
  return worst;
}

function detailJson(detail: Readonly<Record<string, unknown>>): string {
  try {
    return JSON.stringify(
      detail,
      (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value),
      2,
    );
  } catch {
    return '(detail could not be serialised)';
  }
}

/**
 * The `consistency_findings` mail: subject `[OxiCloud] <job> found N
 * inconsistencies`, then the run id, the counts grouped by (kind, severity),
 * the worst-severity example and a link to the run on the admin page. Every
 * value is escaped in the HTML part.
 */
export function renderConsistencyFindings(data: ConsistencyFindingsData): RenderedEmail {
  const groups = groupFindingCounts(data.counts);
  const total = groups.reduce((sum, group) => sum + group.count, 0);
  const noun = total === 1 ? 'inconsistency' : 'inconsistencies';
  const subject = oneLine(`[OxiCloud] ${data.job} found ${total} ${noun}`);
  const example = worstExample(data.examples);
  const at = data.at.toISOString();
  const link =
    data.publicBaseUrl === undefined
      ? undefined
      : joinUrl(
          data.publicBaseUrl,
          `/admin/jobs/${encodeURIComponent(data.job)}/runs/${encodeURIComponent(data.runId)}`,
        );

  const text = [
    `The consistency check ${data.job} found ${total} ${noun}.`,
    '',
    `Job: ${data.job}`,
    `Run id: ${data.runId}`,
    `Logged at: ${at}`,
    '',
    'Findings by kind and severity:',
    ...groups.map((group) => `  ${group.severity}  ${group.kind}: ${group.count}`),
    ...(example === undefined
      ? []
      : [
          '',
          `Worst example (${example.severity}, ${example.kind}):`,
          `  resource: ${example.resourceId}`,
          `  detail: ${detailJson(example.detail).replace(/\n/g, '\n  ')}`,
        ]),
    ...(link === undefined ? [] : ['', `Run on the admin page: ${link}`]),
    '',
  ].join('\n');

  const cell = 'style="text-align: left; padding: 2px 12px 2px 0;"';
  const html = htmlFrame(
    escapeHtml(subject),
    [
      `<h2>${escapeHtml(data.job)} found ${total} ${noun}</h2>`,
      `<p>Run id <code>${escapeHtml(data.runId)}</code>, logged at <code>${escapeHtml(at)}</code>.</p>`,
      '<table style="border-collapse: collapse;">',
      `<tr><th ${cell}>Severity</th><th ${cell}>Kind</th><th ${cell}>Count</th></tr>`,
      ...groups.map(
        (group) =>
          `<tr><td ${cell}>${escapeHtml(group.severity)}</td><td ${cell}><code>${escapeHtml(group.kind)}</code></td>` +
          `<td ${cell}>${escapeHtml(group.count)}</td></tr>`,
      ),
      '</table>',
      example === undefined
        ? ''
        : `<h3>Worst example: ${escapeHtml(example.severity)} <code>${escapeHtml(example.kind)}</code></h3>` +
          `<p>Resource <code>${escapeHtml(example.resourceId)}</code></p>` +
          `<pre style="background: #f4f4f4; padding: 8px;">${escapeHtml(detailJson(example.detail))}</pre>`,
      link === undefined
        ? ''
        : `<p><a href="${escapeHtml(link)}">Open this run on the admin jobs page</a></p>`,
    ].join(''),
  );

  return { subject, text, html };
}
