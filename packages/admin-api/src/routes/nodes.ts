import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AdminEnv } from '../http/admin-env.js';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import type { ClusterView } from '../ports/cluster-view.js';
import { ClusterNodeSchema, PeriodicRunSchema } from './cluster-schemas.js';
import type { JobDirectory } from './job-directory.js';
import { errorResponses, paginationQuery } from './schemas.js';

/** The most runs one page of `GET …/periodic-runs` holds. */
export const MAX_PERIODIC_RUNS_LIMIT = 500;

const listNodes = createRoute({
  method: 'get',
  path: '/api/admin/nodes',
  operationId: 'listNodes',
  tags: ['cluster'],
  summary: 'The server processes on this database, with their heartbeat and the runs they own',
  description:
    'Every registered node (oldest first): when it started, its last heartbeat (database clock), the ' +
    'recoverable runs it owns and the periodic jobs it runs now. A node that stops gracefully leaves the list; ' +
    'one that died stays until its heartbeat is older than the prune age.',
  security: [{ bearerAuth: [] }],
  responses: {
    200: {
      description: 'every node',
      content: { 'application/json': { schema: z.array(ClusterNodeSchema) } },
    },
    ...errorResponses([401, 403, 503]),
  },
});

const listPeriodicRuns = createRoute({
  method: 'get',
  path: '/api/admin/jobs/{name}/periodic-runs',
  operationId: 'listPeriodicRuns',
  tags: ['jobs'],
  summary: "A periodic job's runs (ticks and triggers) from every node, newest first",
  description:
    'The history every node writes: one row per run, with its slot (ticks), node, times and outcome. Rows older ' +
    'than the retention (OXICLOUD_PERIODIC_HISTORY_DAYS) are pruned. A job that never ran here answers [].',
  security: [{ bearerAuth: [] }],
  request: {
    params: z.object({
      name: z
        .string()
        .min(1)
        .openapi({ param: { name: 'name', in: 'path' }, example: 'storage_reconcile' }),
    }),
    query: z.object({
      limit: paginationQuery('limit', 1, MAX_PERIODIC_RUNS_LIMIT, 'runs per page; default 50'),
      offset: paginationQuery('offset', 0, 1_000_000_000, 'runs to skip; default 0'),
    }),
  },
  responses: {
    200: {
      description: 'one page of runs',
      content: { 'application/json': { schema: z.array(PeriodicRunSchema) } },
    },
    ...errorResponses([400, 401, 403, 404, 503]),
  },
});

/** Registers `GET /api/admin/nodes` and `GET /api/admin/jobs/{name}/periodic-runs`. */
export function registerClusterRoutes(
  app: OpenAPIHono<AdminEnv>,
  deps: { readonly cluster: ClusterView; readonly directory: JobDirectory },
): void {
  const { cluster, directory } = deps;
  app.openapi(listNodes, async (c) => c.json([...(await cluster.nodes())], 200));
  methodNotAllowed(app, '/api/admin/nodes', ['GET']);

  app.openapi(listPeriodicRuns, async (c) => {
    const { name } = c.req.valid('param');
    const query = c.req.valid('query');
    directory.require(name);
    const runs = await cluster.periodicRuns(name, {
      limit: query.limit ?? 50,
      offset: query.offset ?? 0,
    });
    return c.json([...runs], 200);
  });
  methodNotAllowed(app, '/api/admin/jobs/:name/periodic-runs', ['GET']);
}
