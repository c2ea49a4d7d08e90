import type { FindingKindJson } from '@oxicloud/admin-api';
import type { AdminClient } from './admin-client.js';
import type { ApiJob } from './api-types.js';
import { JobsClientError } from './jobs-client-error.js';

/**
 * The finding kinds the server declares, by job: each listed job's
 * `finding_kinds` (`GET /api/admin/jobs`, from the checks' declarations).
 * The CLI keeps no list of its own: a new check's kinds are accepted as
 * soon as the server lists them. A job that lists none (or a server too old
 * to list them) is absent, and its `--kind` is not checked here.
 */
export function declaredKinds(listing: readonly ApiJob[]): ReadonlyMap<string, readonly FindingKindJson[]> {
  const out = new Map<string, readonly FindingKindJson[]>();
  for (const job of listing) {
    const kinds = job.finding_kinds ?? [];
    if (kinds.length > 0) out.set(job.name, kinds);
  }
  return out;
}

/**
 * `--kind`, checked against the server's declarations before the request:
 * the kinds of `job` when given and listed, else those of every listed job.
 *
 * @throws {JobsClientError} `USAGE` naming the kind and the allowed ones.
 */
export async function requireDeclaredKind(
  client: AdminClient,
  kind: string,
  job: string | undefined,
): Promise<void> {
  const declared = declaredKinds((await client.listJobs()).body);
  const own = job === undefined ? undefined : declared.get(job);
  if (own !== undefined) {
    if (!own.some((k) => k.kind === kind)) {
      throw new JobsClientError(
        'USAGE',
        `unknown finding kind "${kind}" for ${job}; allowed: ${own.map((k) => k.kind).join(', ')}`,
      );
    }
    return;
  }
  if (job !== undefined || declared.size === 0) return; // not a job that declares kinds: the server answers
  const all = [...new Set([...declared.values()].flatMap((kinds) => kinds.map((k) => k.kind)))];
  if (!all.includes(kind)) {
    throw new JobsClientError(
      'USAGE',
      `unknown finding kind "${kind}"; the jobs declare: ${all.join(', ')} (\`oxijobs jobs list --json\` shows each job's finding_kinds)`,
    );
  }
}
