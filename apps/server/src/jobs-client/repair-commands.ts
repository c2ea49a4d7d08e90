import type { JobsCommandContext } from './commands.js';
import { renderTable } from './format.js';
import { EXIT_CODES, JobsClientError } from './jobs-client-error.js';

/** One line of a plan as `/api/admin/repairs` serves it. */
export interface RepairLineJson {
  readonly type: 'action' | 'needs_person';
  readonly findingId: string;
  readonly fingerprint: { readonly checkName: string; readonly kind: string; readonly resourceId: string };
  readonly resource: { readonly type: string; readonly id: string };
  readonly action?: string;
  readonly summary?: string;
  readonly reason?: string;
  readonly derived?: readonly { readonly type: string; readonly id: string }[];
  readonly choices?: readonly { readonly id: string; readonly description: string }[];
  readonly choice?: string | null;
  readonly status: string;
  readonly skip_reason: string | null;
  readonly verified?: string | null;
}

/** A repair plan as `/api/admin/repairs` serves it. */
export interface RepairPlanJson {
  readonly id: string;
  readonly hash: string;
  readonly state: string;
  readonly created_by: string;
  readonly approved_by: string | null;
  readonly run_id: string | null;
  readonly unchosen: number;
  readonly lines: readonly RepairLineJson[];
}

function what(line: RepairLineJson): string {
  if (line.type === 'needs_person') return `needs a person: ${line.reason ?? ''}`;
  const choice =
    line.choices === undefined
      ? ''
      : line.choice
        ? ` [choice: ${line.choice}]`
        : ` [choose: ${line.choices.map((c) => c.id).join(' | ')}]`;
  const derived = line.derived && line.derived.length > 0 ? ` (+${line.derived.length} rows)` : '';
  return `${line.summary ?? line.action ?? ''}${derived}${choice}`;
}

/** The STATUS cell: the item's status in words (`already consistent`). */
function statusText(line: RepairLineJson): string {
  return line.status.replaceAll('_', ' ');
}

/**
 * The VERIFIED cell: after the run, whether the line's resource passed the
 * re-check of the check that found it (`yes`: the finding is fixed; `no`: the
 * NOTE says why); `-` before the run or for a line that was not applied.
 */
function verifiedText(line: RepairLineJson): string {
  if (line.verified === undefined || line.verified === null) return '-';
  return line.verified === 'passed' ? 'yes' : 'no';
}

function note(line: RepairLineJson): string {
  if (line.skip_reason) return line.skip_reason;
  if (line.verified && line.verified !== 'passed') return `re-check: ${line.verified}`;
  return '';
}

/** A plan as a table: one row per line, then the hash and how to apply it. */
export function formatRepairPlan(plan: RepairPlanJson): string {
  const rows = plan.lines.map((l, i) => [
    String(i),
    l.findingId,
    l.fingerprint.kind,
    statusText(l),
    verifiedText(l),
    what(l),
    note(l),
  ]);
  let out = `plan ${plan.id} (${plan.state}, by ${plan.created_by}${plan.approved_by ? `, approved by ${plan.approved_by}` : ''})\n`;
  out +=
    rows.length === 0
      ? 'no open findings match\n'
      : renderTable(['#', 'FINDING', 'KIND', 'STATUS', 'VERIFIED', 'WHAT', 'NOTE'], rows);
  out += `hash ${plan.hash}\n`;
  if (plan.run_id) out += `run ${plan.run_id} (${followHint(plan.run_id)})\n`;
  if (plan.state === 'planned') {
    if (plan.unchosen > 0)
      out += `${plan.unchosen} line(s) need a choice: oxijobs repair choose ${plan.id} <finding>=<choice>\n`;
    out += `apply: oxijobs repair apply ${plan.id} --hash ${plan.hash}\n`;
  }
  return out;
}

/** How to follow a repair run. */
function followHint(runId: string): string {
  return `follow: oxijobs jobs run repair ${runId} --follow`;
}

function print(ctx: JobsCommandContext, answer: { raw: string; body: RepairPlanJson }): number {
  if (ctx.json) ctx.io.stdout.write(answer.raw.endsWith('\n') ? answer.raw : `${answer.raw}\n`);
  else ctx.io.stdout.write(formatRepairPlan(answer.body));
  return EXIT_CODES.ok;
}

/** `repair plan`: plans findings by ids or a filter. */
export async function repairPlanCommand(
  ctx: JobsCommandContext,
  input: {
    readonly findingIds: readonly string[];
    readonly filter: { readonly check?: string; readonly kind?: string; readonly severity?: string };
    readonly choices: Readonly<Record<string, string>>;
  },
): Promise<number> {
  const body = {
    ...(input.findingIds.length > 0 ? { finding_ids: input.findingIds } : { filter: input.filter }),
    ...(Object.keys(input.choices).length > 0 ? { choices: input.choices } : {}),
  };
  return print(ctx, await ctx.client.planRepair(body));
}

/** `repair show <id>`. */
export async function repairShowCommand(ctx: JobsCommandContext, id: string): Promise<number> {
  return print(ctx, await ctx.client.getRepairPlan(id));
}

/** `repair choose <id> <finding>=<choice>…`. */
export async function repairChooseCommand(
  ctx: JobsCommandContext,
  id: string,
  choices: Readonly<Record<string, string>>,
): Promise<number> {
  return print(ctx, await ctx.client.chooseRepair(id, choices));
}

/** `repair apply <id> --hash <hash>`: approves and starts the run. */
export async function repairApplyCommand(ctx: JobsCommandContext, id: string, hash: string): Promise<number> {
  const answer = await ctx.client.applyRepair(id, hash);
  if (ctx.json) ctx.io.stdout.write(`${answer.raw.trimEnd()}\n`);
  else ctx.io.stdout.write(`started run ${answer.body.run_id} (${followHint(answer.body.run_id)})\n`);
  return EXIT_CODES.ok;
}

/** Parses `finding=choice` arguments. */
export function parseChoices(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0 || at === pair.length - 1) {
      throw new JobsClientError('USAGE', `a choice is <finding id>=<choice>, got ${JSON.stringify(pair)}`);
    }
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}
