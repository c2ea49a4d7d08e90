import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Logger } from '@oxicloud/scheduler';
import { auditAllowed } from '../audit/audit-log.js';
import type { AdminEnv } from '../http/admin-env.js';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import type { FindingsReader } from '../ports/findings-reader.js';
import type { JobDirectory } from './job-directory.js';
import { runListEntry } from './run-list-entry.js';
import {
  CancelResultSchema,
  errorResponses,
  FindingsPageSchema,
  paginationQuery,
  RunListEntrySchema,
  RunSummarySchema,
  SeveritySchema,
  textQuery,
} from './schemas.js';

/** The most runs one page of `GET …/runs` holds (the engine's limit). */
export const MAX_RUNS_LIMIT = 500;
/** The most findings one page of `GET …/findings` holds. */
export const MAX_FINDINGS_LIMIT = 1000;

const SEVERITY_VALUES = SeveritySchema.options;

const nameParam = z
  .string()
  .min(1)
  .openapi({ param: { name: 'name', in: 'path' }, example: 'files_consistency' });
const idParam = z
  .string()
  .min(1)
  .openapi({ param: { name: 'id', in: 'path' }, format: 'uuid', description: 'a run id (UUID)' });

const cancelRun = createRoute({
  method: 'post',
  path: '/api/admin/jobs/{name}/cancel',
  tags: ['runs'],
  summary: "Ask a recoverable job's active run to pause",
  description:
    'Cooperative: the run lands Paused with its cursor at its next batch boundary; trigger resumes it. ' +
    'A Paused run is returned as it is.',
  security: [{ bearerAuth: [] }],
  request: { params: z.object({ name: nameParam }) },
  responses: {
    200: {
      description: 'the cancel was requested (or the run is already paused)',
      content: { 'application/json': { schema: CancelResultSchema } },
    },
    ...errorResponses([401, 403, 404, 409, 503]),
  },
});

const listRuns = createRoute({
  method: 'get',
  path: '/api/admin/jobs/{name}/runs',
  tags: ['runs'],
  summary: "A recoverable job's runs, newest first",
  description:
    'Each run is a bounded listing entry (`params_summary` instead of `params`, bounded `stats`, ' +
    '`error_message` and `cursor_hex`, `truncated` when anything was cut), so a page of 500 stays under 1 MiB; ' +
    '`GET …/runs/{id}` has the full run.',
  security: [{ bearerAuth: [] }],
  request: {
    params: z.object({ name: nameParam }),
    query: z.object({
      limit: paginationQuery('limit', 1, MAX_RUNS_LIMIT, 'runs per page; default 50'),
      offset: paginationQuery('offset', 0, Number.MAX_SAFE_INTEGER, 'runs to skip; default 0'),
    }),
  },
  responses: {
    200: {
      description: 'one page of runs',
      content: { 'application/json': { schema: z.array(RunListEntrySchema) } },
    },
    ...errorResponses([400, 401, 403, 404, 409, 503]),
  },
});

const getRun = createRoute({
  method: 'get',
  path: '/api/admin/jobs/{name}/runs/{id}',
  tags: ['runs'],
  summary: 'One run, with its cursor, stats, params and progress',
  security: [{ bearerAuth: [] }],
  request: { params: z.object({ name: nameParam, id: idParam }) },
  responses: {
    200: { description: 'the run', content: { 'application/json': { schema: RunSummarySchema } } },
    ...errorResponses([400, 401, 403, 404, 409, 503]),
  },
});

const listFindings = createRoute({
  method: 'get',
  path: '/api/admin/jobs/{name}/runs/{id}/findings',
  tags: ['runs'],
  summary: "One page of a run's findings, worst first",
  description:
    'Ordered by severity (DataLoss, Reclaimable, Regenerable, Drift), then impact (a missing_blob referenced by ' +
    'more files, then more bytes, first), then discovery order. `total` counts the findings matching the ' +
    'filters; `counts` covers the whole run.',
  security: [{ bearerAuth: [] }],
  request: {
    params: z.object({ name: nameParam, id: idParam }),
    query: z.object({
      severity: z
        .enum(SEVERITY_VALUES, {
          error: (issue) =>
            `must be one of ${SEVERITY_VALUES.join(', ')}, got ${JSON.stringify(issue.input)}`,
        })
        .optional()
        .openapi({ param: { name: 'severity', in: 'query' }, description: 'only this severity' }),
      kind: textQuery('kind', 100, 'only this kind', 'missing_blob'),
      limit: paginationQuery('limit', 1, MAX_FINDINGS_LIMIT, 'findings per page; default 100'),
      offset: paginationQuery('offset', 0, Number.MAX_SAFE_INTEGER, 'findings to skip; default 0'),
    }),
  },
  responses: {
    200: {
      description: 'one page of findings',
      content: { 'application/json': { schema: FindingsPageSchema } },
    },
    ...errorResponses([400, 401, 403, 404, 409, 503]),
  },
});

/**
 * Registers the run-level routes of recoverable jobs: cancel, the run
 * history, one run, and a run's findings. A periodic job answers 409
 * `NOT_RECOVERABLE`, an unknown one 404 `JOB_NOT_FOUND`.
 */
export function registerRunRoutes(
  app: OpenAPIHono<AdminEnv>,
  deps: {
    readonly directory: JobDirectory;
    readonly findings: FindingsReader | undefined;
    readonly logger: Logger;
  },
): void {
  const { directory, findings, logger } = deps;

  app.openapi(cancelRun, async (c) => {
    const { name } = c.req.valid('param');
    const runs = directory.requireRecoverable(name, 'cancel');
    auditAllowed(logger, c, { kind: 'recoverable' });
    const result = await runs.cancel(name);
    return c.json({ run_id: result.run_id, status: result.status }, 200);
  });
  methodNotAllowed(app, '/api/admin/jobs/:name/cancel', ['POST']);

  app.openapi(listRuns, async (c) => {
    const { name } = c.req.valid('param');
    const { limit, offset } = c.req.valid('query');
    const runs = directory.requireRecoverable(name, 'list');
    const page = await runs.listRuns(name, {
      ...(limit === undefined ? {} : { limit }),
      ...(offset === undefined ? {} : { offset }),
    });
    return c.json(page.map(runListEntry), 200);
  });
  methodNotAllowed(app, '/api/admin/jobs/:name/runs', ['GET']);

  app.openapi(getRun, async (c) => {
    const { name, id } = c.req.valid('param');
    const runs = directory.requireRecoverable(name, 'show');
    const run = await runs.getRun(name, id);
    return c.json({ ...run, stats: { ...run.stats }, params: { ...run.params } }, 200);
  });
  methodNotAllowed(app, '/api/admin/jobs/:name/runs/:id', ['GET']);

  app.openapi(listFindings, async (c) => {
    const { name, id } = c.req.valid('param');
    const query = c.req.valid('query');
    const runs = directory.requireRecoverable(name, 'list findings of');
    // Checks the job, the id's shape and that the run is this job's (404 RUN_NOT_FOUND otherwise).
    const run = await runs.getRun(name, id);
    if (!findings) return c.json({ run_id: run.run_id, total: 0, counts: [], findings: [] }, 200);
    const [counts, page] = await Promise.all([
      findings.summarize(run.run_id),
      findings.list(run.run_id, {
        ...(query.severity ? { severity: query.severity } : {}),
        ...(query.kind ? { kind: query.kind } : {}),
        limit: query.limit ?? 100,
        offset: query.offset ?? 0,
      }),
    ]);
    const total = counts
      .filter((n) => (query.severity ? n.severity === query.severity : true))
      .filter((n) => (query.kind ? n.kind === query.kind : true))
      .reduce((sum, n) => sum + n.count, 0);
    return c.json(
      {
        run_id: run.run_id,
        total,
        counts: counts.map((n) => ({ kind: n.kind, severity: n.severity, count: n.count })),
        findings: page.map((f) => ({
          id: f.id,
          kind: f.kind,
          severity: f.severity,
          resource_id: f.resourceId,
          detail: { ...f.detail },
          found_at: f.foundAt.toISOString(),
        })),
      },
      200,
    );
  });
  methodNotAllowed(app, '/api/admin/jobs/:name/runs/:id/findings', ['GET']);
}
