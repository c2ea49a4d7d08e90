import type { Command } from 'commander';
import { ServerError } from '../server-error.js';

/**
 * SEAM: the `oxijobs jobs …` command group, a client of a running server's
 * admin API (`GET /api/admin/jobs`, `POST /api/admin/jobs/{name}/trigger`, …).
 * A later issue fills it; until then the group exists and says so.
 */
export function registerJobsCommands(program: Command): void {
  program
    .command('jobs')
    .description('client of a running server’s admin API (list, trigger, runs): not available yet')
    .allowUnknownOption()
    .argument('[args...]')
    .action(() => {
      throw new ServerError(
        'NOT_AVAILABLE',
        'the `jobs` commands are not available yet; meanwhile use curl with a token from `oxijobs token --user admin`',
      );
    });
}
