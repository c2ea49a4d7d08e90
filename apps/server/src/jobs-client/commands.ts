import type { AdminClient, PageOptions } from './admin-client.js';
import type { ApiOutcomeEnvelope, ApiRunStarted } from './api-types.js';
import type { CliIo } from './cli-io.js';
import { DEFAULT_WAITED_TRIGGER_TIMEOUT_SECONDS } from './cli-values.js';
import { requireDeclaredKind } from './declared-kinds.js';
import { type FollowOptions, followBatch, followRun } from './follow.js';
import {
  formatCancelAnswer,
  formatFindings,
  formatJobs,
  formatRun,
  formatRuns,
  formatTriggerAnswer,
} from './format.js';
import { EXIT_CODES, JobsClientError } from './jobs-client-error.js';
import { triggerParamsNote } from './trigger-params-note.js';

/** What every `jobs` command runs with. */
export interface JobsCommandContext {
  readonly client: AdminClient;
  readonly io: CliIo;
  /** `--json`: print the API's JSON document as it came. */
  readonly json: boolean;
}

/** The batch job whose `--follow` polls the listing for its children's runs. */
export const BATCH_JOB = 'consistency_batch';

function printRaw(ctx: JobsCommandContext, raw: string): void {
  ctx.io.stdout.write(raw.endsWith('\n') ? raw : `${raw}\n`);
}

/** `jobs list`. */
export async function listCommand(ctx: JobsCommandContext): Promise<number> {
  const answer = await ctx.client.listJobs();
  if (ctx.json) printRaw(ctx, answer.raw);
  else ctx.io.stdout.write(formatJobs(answer.body, ctx.io.now()));
  return EXIT_CODES.ok;
}

/** Flags of `jobs trigger`. */
export interface TriggerFlags {
  readonly force?: boolean;
  readonly deep?: boolean;
  readonly params?: Record<string, unknown>;
  readonly follow?: boolean;
  /** `--timeout` in seconds, when given. */
  readonly timeout?: number;
  /** How a followed run is shown. */
  readonly followOptions: Omit<FollowOptions, 'json'>;
}

/**
 * `jobs trigger <name>`: a Part 1 job prints its outcome (exit 0 ok, 1 err);
 * a recoverable job prints its run (exit 0), and with `--follow` follows it
 * (0 Completed, 1 Failed, 3 Paused). `consistency_batch --follow` triggers
 * with `wait=false` and follows its children through the listing.
 */
export async function triggerCommand(
  ctx: JobsCommandContext,
  name: string,
  flags: TriggerFlags,
): Promise<number> {
  const { client, io } = ctx;
  if (flags.params !== undefined || flags.deep) await refuseWhatTheJobIgnores(client, name, flags);
  const followOptions: FollowOptions = { ...flags.followOptions, json: ctx.json };
  const common = {
    ...(flags.force !== undefined ? { force: flags.force } : {}),
    ...(flags.deep !== undefined ? { deep: flags.deep } : {}),
    ...(flags.params !== undefined ? { params: flags.params } : {}),
  };
  if (flags.follow && name === BATCH_JOB) {
    const before = await client.listJobs();
    const answer = await client.trigger(name, { ...common, wait: false });
    const body = answer.body as ApiOutcomeEnvelope;
    const outcome = 'outcome' in body ? body.outcome : undefined;
    const skipped = outcome?.kind === 'ok' && outcome.extra?.['skipped'] === 'already_running';
    if (outcome && !skipped) return printOutcome(ctx, name, answer.raw, body);
    if (!ctx.json) {
      io.stdout.write(
        skipped
          ? `${name}: a run is already in flight; following it\n`
          : `${name}: accepted; following its checks\n`,
      );
    }
    return followBatch(client, name, before.body, io, followOptions);
  }
  const answer = await client.trigger(name, {
    ...common,
    timeoutMs: (flags.timeout ?? DEFAULT_WAITED_TRIGGER_TIMEOUT_SECONDS) * 1000,
  });
  const started = answer.body as ApiRunStarted;
  if (typeof started.run_id === 'string') {
    if (!flags.follow) {
      if (ctx.json) printRaw(ctx, answer.raw);
      else io.stdout.write(formatTriggerAnswer(name, started) + triggerParamsNote(name, started));
      return EXIT_CODES.ok;
    }
    if (!ctx.json) {
      io.stdout.write(
        formatTriggerAnswer(name, started).replace(/; follow it with .*$/s, '\n') +
          triggerParamsNote(name, started),
      );
    }
    return followRun(client, name, started.run_id, io, followOptions);
  }
  return printOutcome(ctx, name, answer.raw, answer.body as ApiOutcomeEnvelope);
}

/** A periodic job takes `--force` only (and `--deep` when it supports it): refuse what it would ignore. */
async function refuseWhatTheJobIgnores(
  client: AdminClient,
  name: string,
  flags: TriggerFlags,
): Promise<void> {
  const listed = (await client.listJobs()).body;
  const job = listed.find((j) => j.name === name);
  if (job === undefined) return; // the trigger answers UNKNOWN_JOB with the list of jobs
  const takes = job.supports_deep ? '--force and --deep' : '--force';
  // The jobs whose declaration says they have a deep mode (the listing's supports_deep), never a list of names.
  const deepJobs = listed.filter((j) => j.supports_deep).map((j) => j.name);
  const deepIsFor = `--deep is for jobs with a deep mode: ${deepJobs.length > 0 ? deepJobs.join(', ') : '(none)'}`;
  if (job.kind === 'periodic' && flags.params !== undefined) {
    throw new JobsClientError(
      'USAGE',
      `${name} is a periodic job: it takes ${takes} only; --params is for recoverable jobs (see \`oxijobs jobs list\`)`,
    );
  }
  if (flags.deep && job.supports_deep === false) {
    throw new JobsClientError(
      'USAGE',
      job.kind === 'periodic'
        ? `${name} is a periodic job: it takes --force only; ${deepIsFor}`
        : `${name} has no deep mode; ${deepIsFor}`,
    );
  }
}

function printOutcome(ctx: JobsCommandContext, name: string, raw: string, body: ApiOutcomeEnvelope): number {
  if (ctx.json) printRaw(ctx, raw);
  else ctx.io.stdout.write(formatTriggerAnswer(name, body));
  return body.ok === false ? EXIT_CODES.failed : EXIT_CODES.ok;
}

/** `jobs cancel <name>`. */
export async function cancelCommand(ctx: JobsCommandContext, name: string): Promise<number> {
  const answer = await ctx.client.cancel(name);
  if (ctx.json) printRaw(ctx, answer.raw);
  else ctx.io.stdout.write(formatCancelAnswer(name, answer.body));
  return EXIT_CODES.ok;
}

/** `jobs runs <name>`. */
export async function runsCommand(ctx: JobsCommandContext, name: string, page: PageOptions): Promise<number> {
  const answer = await ctx.client.listRuns(name, page);
  if (ctx.json) printRaw(ctx, answer.raw);
  else ctx.io.stdout.write(formatRuns(answer.body, ctx.io.now()));
  return EXIT_CODES.ok;
}

/** `jobs run <name> <id>`: the run's details, or with `--follow` its live progress until it stops. */
export async function runCommand(
  ctx: JobsCommandContext,
  name: string,
  runId: string,
  flags: { readonly follow?: boolean; readonly followOptions: Omit<FollowOptions, 'json'> },
): Promise<number> {
  if (flags.follow)
    return followRun(ctx.client, name, runId, ctx.io, { ...flags.followOptions, json: ctx.json });
  const answer = await ctx.client.getRun(name, runId);
  if (ctx.json) printRaw(ctx, answer.raw);
  else ctx.io.stdout.write(formatRun(answer.body, ctx.io.now()));
  return EXIT_CODES.ok;
}

/** `jobs findings <name> <id>`. */
export async function findingsCommand(
  ctx: JobsCommandContext,
  name: string,
  runId: string,
  filters: {
    readonly severity?: string;
    readonly kind?: string;
    readonly limit?: number;
    readonly offset?: number;
  },
): Promise<number> {
  // The kinds the job declares, as the server lists them (never a list of the CLI's own).
  if (filters.kind !== undefined) await requireDeclaredKind(ctx.client, filters.kind, name);
  const answer = await ctx.client.listFindings(name, runId, filters);
  if (ctx.json) {
    printRaw(ctx, answer.raw);
    return EXIT_CODES.ok;
  }
  // The count table shows what the filters select, like the list below it.
  const counts = answer.body.counts.filter(
    (c) =>
      (filters.severity === undefined || c.severity === filters.severity) &&
      (filters.kind === undefined || c.kind === filters.kind),
  );
  ctx.io.stdout.write(formatFindings({ ...answer.body, counts }, filters.offset ?? 0, ctx.io.now()));
  return EXIT_CODES.ok;
}
