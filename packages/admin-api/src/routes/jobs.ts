import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { JobRunArgs, Logger } from '@oxicloud/scheduler';
import { auditAllowed } from '../audit/audit-log.js';
import { AdminApiError } from '../errors.js';
import type { AdminEnv } from '../http/admin-env.js';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import type { JobCatalog, JobSummary } from '../ports/job-catalog.js';
import {
  booleanQueryFlag,
  errorResponses,
  flagValue,
  JobSummarySchema,
  OutcomeEnvelopeSchema,
} from './schemas.js';

/** The JSON of a {@link JobSummary}: the listed fields only, `running_since` defaulting to `null`. */
export function jobSummaryJson(job: JobSummary): z.infer<typeof JobSummarySchema> {
  const last = job.last_outcome;
  return {
    name: job.name,
    interval_ms: job.interval_ms,
    timeout_ms: job.timeout_ms,
    next_run_at: job.next_run_at,
    running: job.running,
    running_since: job.running_since ?? null,
    last_outcome: last
      ? {
          at: last.at,
          outcome: { ...last.outcome },
          ...(last.cause !== undefined ? { cause: last.cause } : {}),
          ...(last.elapsed_ms !== undefined ? { elapsed_ms: last.elapsed_ms } : {}),
          ...(last.source !== undefined ? { source: last.source } : {}),
        }
      : null,
  };
}

const listJobs = createRoute({
  method: 'get',
  path: '/api/admin/jobs',
  tags: ['jobs'],
  summary: 'List the registered jobs with their cadence and last outcome',
  security: [{ bearerAuth: [] }],
  responses: {
    200: {
      description: 'every registered job',
      content: { 'application/json': { schema: z.array(JobSummarySchema) } },
    },
    ...errorResponses([401, 403, 503]),
  },
});

const triggerJob = createRoute({
  method: 'post',
  path: '/api/admin/jobs/{name}/trigger',
  tags: ['jobs'],
  summary: 'Run a job once now',
  description:
    'Dispatches through the registry (exclusivity, timeout, throw containment apply). ' +
    'A run refused because one is in flight answers ok with outcome.extra.skipped = "already_running".',
  security: [{ bearerAuth: [] }],
  request: {
    params: z.object({
      name: z
        .string()
        .min(1)
        .openapi({ param: { name: 'name', in: 'path' }, example: 'trash_cleanup' }),
    }),
    query: z.object({
      force: booleanQueryFlag('force', 'acceleration semantics (grace windows of 0); default false'),
      deep: booleanQueryFlag('deep', 'consistency checks re-hash bytes and sniff mime types; default false'),
    }),
    body: {
      required: false,
      description: 'optional run parameters (validated by the job that reads them)',
      content: {
        'application/json': {
          schema: z.object({ params: z.record(z.string(), z.unknown()).optional() }).openapi('TriggerBody'),
        },
      },
    },
  },
  responses: {
    200: {
      description: 'the outcome of the run, in the uniform envelope',
      content: { 'application/json': { schema: OutcomeEnvelopeSchema } },
    },
    ...errorResponses([400, 401, 403, 404, 503]),
  },
});

function unknownJob(name: string): AdminApiError {
  return new AdminApiError(
    'JOB_NOT_FOUND',
    `no job named "${name}"; GET /api/admin/jobs lists the registered jobs`,
  );
}

/** Registers the `jobs` resource: list and trigger (cancel comes with the recoverable routes). */
export function registerJobRoutes(
  app: OpenAPIHono<AdminEnv>,
  deps: { readonly jobs: JobCatalog; readonly logger: Logger },
): void {
  const { jobs, logger } = deps;

  app.openapi(listJobs, (c) => c.json(jobs.list().map(jobSummaryJson), 200));
  methodNotAllowed(app, '/api/admin/jobs', ['GET']);

  app.openapi(triggerJob, async (c) => {
    const { name } = c.req.valid('param');
    const query = c.req.valid('query');
    // The body is optional: without a JSON content type the validator is skipped.
    const body = c.req.valid('json') as { params?: Record<string, unknown> } | undefined;
    if (!jobs.list().some((job) => job.name === name)) throw unknownJob(name);
    const args: JobRunArgs = {
      force: flagValue(query.force) ?? false,
      deep: flagValue(query.deep) ?? false,
      ...(body?.params ? { params: body.params } : {}),
    };
    auditAllowed(logger, c, { args });
    const outcome = await jobs.trigger(name, args);
    if (outcome === undefined) throw unknownJob(name);
    return c.json({ ok: outcome.kind === 'ok', outcome: { ...outcome } }, 200);
  });
  methodNotAllowed(app, '/api/admin/jobs/:name/trigger', ['POST']);
}
