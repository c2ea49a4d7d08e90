import type { FindingDetailJson, TrackedFindingJson } from '@oxicloud/admin-api';
import type { JobsCommandContext } from './commands.js';
import { requireDeclaredKind } from './declared-kinds.js';
import { compactJson, formatCount, relativeTime, renderTable } from './format.js';
import { EXIT_CODES, JobsClientError } from './jobs-client-error.js';

/** The states a finding across runs can be in (the API's `FindingState`). */
export const FINDING_STATES = ['open', 'fixed', 'reopened', 'accepted', 'false_positive'] as const;

function printRaw(ctx: JobsCommandContext, raw: string): void {
  ctx.io.stdout.write(raw.endsWith('\n') ? raw : `${raw}\n`);
}

/** Bytes as `1,234 B (1.2 KiB)`. */
export function formatBytes(bytes: number): string {
  const abs = Math.abs(bytes);
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = abs;
  let unit = '';
  for (const u of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = u;
  }
  const sign = bytes < 0 ? '-' : '';
  return unit === ''
    ? `${sign}${formatCount(abs)} B`
    : `${sign}${formatCount(abs)} B (${sign}${value.toFixed(1)} ${unit})`;
}

/** `findings list`: one page of findings across runs, worst first. */
export async function findingsListCommand(
  ctx: JobsCommandContext,
  filters: {
    readonly state?: string;
    readonly severity?: string;
    readonly kind?: string;
    readonly check?: string;
    readonly cursor?: string;
    readonly limit?: number;
  },
): Promise<number> {
  if (filters.kind !== undefined) await requireDeclaredKind(ctx.client, filters.kind, filters.check);
  const answer = await ctx.client.listTrackedFindings(filters);
  if (ctx.json) {
    printRaw(ctx, answer.raw);
    return EXIT_CODES.ok;
  }
  const now = ctx.io.now();
  const { findings, next_cursor: next } = answer.body;
  if (findings.length === 0) {
    ctx.io.stdout.write('no findings match\n');
    return EXIT_CODES.ok;
  }
  ctx.io.stdout.write(
    renderTable(
      ['ID', 'STATE', 'SEVERITY', 'CHECK', 'KIND', 'RESOURCE', 'LAST SEEN'],
      findings.map((f: TrackedFindingJson) => [
        f.id,
        f.state,
        f.severity,
        f.check,
        f.kind,
        f.resource_id,
        relativeTime(f.last_seen_at, now),
      ]),
    ),
  );
  if (next) ctx.io.stdout.write(`more: oxijobs findings list --cursor ${next}\n`);
  return EXIT_CODES.ok;
}

/** `findings show <id>`: the finding as readable fields, then its history. */
export async function findingsShowCommand(ctx: JobsCommandContext, id: string): Promise<number> {
  const answer = await ctx.client.getTrackedFinding(id);
  if (ctx.json) {
    printRaw(ctx, answer.raw);
    return EXIT_CODES.ok;
  }
  ctx.io.stdout.write(formatFindingDetail(answer.body, ctx.io.now()));
  return EXIT_CODES.ok;
}

/** A finding as `label: value` lines, then its state changes and sightings. */
export function formatFindingDetail(f: FindingDetailJson, now: number): string {
  // The unit its check declares for the kind (`kind_declaration`; absent from an older server: a plain number).
  const inBytes = f.kind_declaration?.magnitude === 'bytes';
  const rows: Array<[string, string]> = [
    ['finding', f.id],
    ['state', f.state + (f.accept_until ? ` until ${f.accept_until}` : '')],
    ['check', f.check],
    ['kind', f.kind + (f.kind_declaration ? `: ${f.kind_declaration.meaning}` : '')],
    ['resource', f.resource_id],
    ['severity', f.severity + (f.highest_severity !== f.severity ? ` (was ${f.highest_severity})` : '')],
    ['magnitude', f.magnitude === null ? '-' : inBytes ? formatBytes(f.magnitude) : formatCount(f.magnitude)],
    ['first seen', `${relativeTime(f.first_seen_at, now)} (run ${f.first_seen_run_id ?? 'pruned'})`],
    ['last seen', `${relativeTime(f.last_seen_at, now)} (run ${f.last_seen_run_id ?? 'pruned'})`],
    ['changed', `${relativeTime(f.state_changed_at, now)} by ${f.state_changed_by}`],
    ['comment', f.comment ?? '-'],
    ['detail', compactJson(f.detail, 400)],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  const out = rows.map(([label, value]) => `${`${label}:`.padEnd(width + 2)}${value}\n`);
  if (f.events.length > 0) {
    out.push('\nhistory:\n');
    out.push(
      renderTable(
        ['WHEN', 'EVENT', 'STATE', 'BY', 'COMMENT'],
        f.events.map((e) => [relativeTime(e.at, now), e.event, e.state, e.actor, e.comment ?? '']),
      ),
    );
  }
  if (f.sightings.length > 0) {
    out.push('\nseen by runs:\n');
    out.push(
      renderTable(
        ['RUN', 'FOUND', 'SEVERITY', 'CHANGE'],
        f.sightings.map((s) => [s.run_id, relativeTime(s.found_at, now), s.severity, s.change ?? '']),
      ),
    );
  }
  return out.join('');
}

/** `findings accept|false-positive|reopen <id> --comment …`. */
export async function findingsDecideCommand(
  ctx: JobsCommandContext,
  decision: 'accept' | 'false-positive' | 'reopen',
  id: string,
  input: { readonly comment?: string; readonly until?: string },
): Promise<number> {
  if (input.comment === undefined || input.comment.trim() === '') {
    throw new JobsClientError('USAGE', `findings ${decision} needs --comment "<why>" (1-2000 characters)`);
  }
  const answer = await ctx.client.decideFinding(id, decision, {
    comment: input.comment,
    ...(input.until !== undefined ? { until: input.until } : {}),
  });
  if (ctx.json) printRaw(ctx, answer.raw);
  else {
    const f = answer.body;
    ctx.io.stdout.write(
      `finding ${f.id} (${f.kind} on ${f.resource_id}) is now ${f.state}${f.accept_until ? ` until ${f.accept_until}` : ''}\n`,
    );
  }
  return EXIT_CODES.ok;
}
