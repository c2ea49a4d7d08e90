import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { triggerOptions } from '@oxicloud/recoverable';
import type { JobRunArgs, Logger } from '@oxicloud/scheduler';
import type { Context } from 'hono';
import { auditAllowed } from '../audit/audit-log.js';
import { AdminApiError } from '../errors.js';
import type { AdminEnv } from '../http/admin-env.js';
import { parseParamsBody } from '../http/json-input.js';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import type { PeriodicJobs } from '../ports/job-catalog.js';
import type { JobDirectory } from './job-directory.js';
import {
  booleanQueryFlag,
  errorResponses,
  flagValue,
  JobSummarySchema,
  OutcomeEnvelopeSchema,
  RunTriggeredSchema,
  TriggerAcceptedSchema,
} from './schemas.js';

const listJobs = createRoute({
  method: 'get',
  path: '/api/admin/jobs',
  operationId: 'listJobs',
  tags: ['jobs'],
  summary: 'List the jobs (periodic and recoverable) with their cadence, last outcome and latest run',
  security: [{ bearerAuth: [] }],
  responses: {
    200: {
      description: 'every registered job, in a stable order',
      content: { 'application/json': { schema: z.array(JobSummarySchema) } },
    },
    ...errorResponses([401, 403, 503]),
  },
});

const nameParam = z.object({
  name: z
    .string()
    .min(1)
    .openapi({ param: { name: 'name', in: 'path' }, example: 'trash_cleanup' }),
});

const triggerJob = createRoute({
  method: 'post',
  path: '/api/admin/jobs/{name}/trigger',
  operationId: 'triggerJob',
  tags: ['jobs'],
  summary: 'Run a job once now (periodic) or start / resume its run (recoverable)',
  description:
    'Periodic job: dispatches through the registry (exclusivity, timeout, throw containment apply) and answers ' +
    'the outcome (200), or with `wait=false` answers 202 at once while the run goes on in the background. A run ' +
    'refused because one is in flight answers ok with outcome.extra.skipped = "already_running". ' +
    'Recoverable job: answers 202 at once with the run (started fresh, a Paused run resumed with its stored ' +
    'params, or the active run with already_running = true); `wait` is ignored.',
  security: [{ bearerAuth: [] }],
  request: {
    params: nameParam,
    query: z.object({
      force: booleanQueryFlag('force', 'acceleration semantics (grace windows of 0); default false'),
      deep: booleanQueryFlag('deep', 'consistency checks re-hash bytes and sniff mime types; default false'),
      wait: booleanQueryFlag(
        'wait',
        'periodic jobs: wait for the outcome (default true) or answer 202 at once',
      ),
    }),
    // A plain (non-zod) schema: documented here, parsed by the handler, so an empty body with a JSON content
    // type, or a body without one, gets the same clear answers.
    body: {
      required: false,
      description:
        'optional run params, a JSON object validated by the job (e.g. `{ "batch_size": 500, "throttle_ms": 50 }`, ' +
        '`{ "target": "s3" }`); a new run refuses keys its job does not know; a resumed run keeps its stored ' +
        'params; periodic jobs receive it as `args.params`. At most 64 KiB (configurable), nested at most 8 ' +
        'levels, strings without NUL or lone surrogates, `force` / `deep` JSON booleans.',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            additionalProperties: true,
            example: { batch_size: 500, throttle_ms: 50 },
          },
        },
      },
    },
  },
  responses: {
    200: {
      description: 'periodic job: the outcome of the run, in the uniform envelope',
      content: { 'application/json': { schema: OutcomeEnvelopeSchema } },
    },
    202: {
      description: 'periodic job with wait=false: accepted; recoverable job: the run',
      content: { 'application/json': { schema: z.union([RunTriggeredSchema, TriggerAcceptedSchema]) } },
    },
    ...errorResponses([400, 401, 403, 404, 413, 503]),
  },
});

/**
 * Reads the optional JSON-object body of a trigger; `undefined` when there is
 * none. The body limit already ran (middleware); {@link parseParamsBody}
 * refuses bad UTF-8, bad JSON, deep nesting, unsafe strings and non-boolean
 * `force` / `deep`.
 */
async function readParams(c: Context<AdminEnv>): Promise<Record<string, unknown> | undefined> {
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  if (bytes.every((byte) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09))
    return undefined;
  const type = c.req.header('content-type');
  if (type !== undefined && !/^application\/([a-z0-9.+-]*\+)?json\b/i.test(type.trim())) {
    throw new AdminApiError(
      'MALFORMED_JSON',
      `the request body must be JSON (Content-Type: application/json), got Content-Type ${type.slice(0, 100)}`,
    );
  }
  return parseParamsBody(bytes);
}

/** Registers `GET /api/admin/jobs` and `POST /api/admin/jobs/{name}/trigger`. */
export function registerJobRoutes(
  app: OpenAPIHono<AdminEnv>,
  deps: { readonly directory: JobDirectory; readonly jobs: PeriodicJobs; readonly logger: Logger },
): void {
  const { directory, jobs, logger } = deps;

  app.openapi(listJobs, async (c) => c.json(await directory.list(), 200));
  methodNotAllowed(app, '/api/admin/jobs', ['GET']);

  app.openapi(triggerJob, async (c) => {
    const { name } = c.req.valid('param');
    const query = c.req.valid('query');
    const force = flagValue(query.force);
    const deep = flagValue(query.deep);
    const wait = flagValue(query.wait) ?? true;
    const params = await readParams(c);
    const job = directory.require(name);
    const kind = job.kind;
    // The run options, validated once here: a query flag wins over a body key of the same name.
    const options = triggerOptions({ params, force, deep });
    if (!options.ok) throw new AdminApiError('INVALID_PARAMS', options.message);
    if (options.options.deep && !job.capabilities.deep) {
      const deepJobs = directory.deepJobs();
      throw new AdminApiError(
        'INVALID_PARAMS',
        `${name} has no deep mode: deep=true is refused; jobs with a deep mode (supports_deep in GET /api/admin/jobs): ${
          deepJobs.length > 0 ? deepJobs.join(', ') : '(none)'
        }`,
      );
    }
    const ownParams = params === undefined ? undefined : options.params;

    if (kind === 'recoverable' && directory.runs) {
      const args = {
        ...(force === undefined ? {} : { force }),
        ...(deep === undefined ? {} : { deep }),
        ...(params ? { params } : {}),
      };
      auditAllowed(logger, c, { kind, args });
      // Only the options the caller gave (a flag or a body key): a run resumed
      // with its stored options must not read the defaults as a change asked for.
      const givenForce = force !== undefined || params?.['force'] !== undefined;
      const givenDeep = deep !== undefined || params?.['deep'] !== undefined;
      const run = await directory.runs.trigger(name, {
        ...(givenForce ? { force: options.options.force } : {}),
        ...(givenDeep ? { deep: options.options.deep } : {}),
        ...(ownParams ? { params: ownParams } : {}),
      });
      return c.json(
        {
          ok: true as const,
          run_id: run.run_id,
          status: run.status,
          resumed: run.resumed,
          already_running: run.already_running,
          params: run.params,
          params_not_applied: run.params_not_applied,
        },
        202,
      );
    }

    const args: JobRunArgs = {
      force: options.options.force,
      deep: options.options.deep,
      ...(ownParams ? { params: ownParams } : {}),
    };
    auditAllowed(logger, c, { kind, args });
    if (!wait) {
      void jobs.trigger(name, args).then(
        (outcome) => {
          if (outcome === undefined) {
            logger.warn(
              { target: 'oxicloud::admin_api', event: 'trigger.vanished', job: name },
              `background trigger of ${name}: the job is no longer registered`,
            );
          }
        },
        (thrown: unknown) => {
          logger.error(
            {
              target: 'oxicloud::admin_api',
              event: 'trigger.failed',
              job: name,
              err: thrown instanceof Error ? { name: thrown.name, message: thrown.message } : thrown,
            },
            `background trigger of ${name} failed`,
          );
        },
      );
      return c.json({ ok: true as const, accepted: true as const }, 202);
    }
    const outcome = await jobs.trigger(name, args);
    if (outcome === undefined) {
      throw new AdminApiError('JOB_NOT_FOUND', `no job named '${name}' (it is no longer registered)`);
    }
    return c.json({ ok: outcome.kind === 'ok', outcome: { ...outcome } }, 200);
  });
  methodNotAllowed(app, '/api/admin/jobs/:name/trigger', ['POST']);
}
