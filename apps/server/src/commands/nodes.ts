import type { Command } from 'commander';
import type { PageOptions } from '../jobs-client/admin-client.js';

import { formatNodes, formatPeriodicRuns } from '../jobs-client/cluster-format.js';
import type { JobsCommandContext } from '../jobs-client/commands.js';
import { EXIT_CODES } from '../jobs-client/jobs-client-error.js';
import { action, addCommonOptions, addRunPageOptions, exitCodesHelp, runPageOf } from './jobs.js';

type Env = Readonly<Record<string, string | undefined>>;

function print(ctx: JobsCommandContext, raw: string, text: string): void {
  if (ctx.json) ctx.io.stdout.write(raw.endsWith('\n') ? raw : `${raw}\n`);
  else ctx.io.stdout.write(text);
}

/** `oxijobs nodes`. */
export async function nodesCommand(ctx: JobsCommandContext): Promise<number> {
  const answer = await ctx.client.listNodes();
  print(ctx, answer.raw, formatNodes(answer.body, ctx.io.now()));
  return EXIT_CODES.ok;
}

/** `oxijobs jobs history <name>`. */
export async function historyCommand(
  ctx: JobsCommandContext,
  name: string,
  page: PageOptions,
): Promise<number> {
  const answer = await ctx.client.listPeriodicRuns(name, page);
  print(ctx, answer.raw, formatPeriodicRuns(answer.body, ctx.io.now()));
  return EXIT_CODES.ok;
}

/**
 * `oxijobs nodes` (the server processes on the database) and
 * `oxijobs jobs history <name>` (a periodic job's runs from every node):
 * clients of `GET /api/admin/nodes` and `GET /api/admin/jobs/{name}/periodic-runs`.
 */
export function registerClusterCommands(program: Command, env: Env = process.env): void {
  addCommonOptions(
    program
      .command('nodes')
      .description('the server processes on this database: started, last heartbeat, the runs they own'),
  )
    .addHelpText('after', exitCodesHelp())
    .action(action(env, (ctx) => nodesCommand(ctx)));

  const jobs = program.commands.find((command) => command.name() === 'jobs');
  if (jobs === undefined) return;
  addCommonOptions(
    addRunPageOptions(
      jobs
        .command('history')
        .description("a periodic job's runs (ticks and triggers) from every node, newest first")
        .argument('<name>', 'job name'),
    ),
  )
    .addHelpText('after', exitCodesHelp())
    .action(action(env, (ctx, flags, name: string) => historyCommand(ctx, name, runPageOf(flags))));
}
