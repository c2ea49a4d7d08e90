import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AdminEnv } from '../http/admin-env.js';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import type { ReadinessProbe } from '../ports/readiness-probe.js';

const LiveSchema = z.object({ status: z.literal('ok') }).openapi('Live');

const PartSchema = z.object({ ok: z.boolean(), error: z.string().optional() });

const ReadySchema = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    failing: z.array(z.enum(['database', 'schema', 'migrations'])).openapi({
      description: 'the parts that failed, empty when ready',
    }),
    database: PartSchema,
    schema: PartSchema.extend({
      expected: z.string().nullable().openapi({ description: 'newest migration this build carries' }),
      current: z.string().nullable().openapi({ description: 'newest migration the database records' }),
      unknown: z.array(z.string()).optional(),
    }),
    migrations: PartSchema.extend({ pending: z.array(z.string()), changed: z.array(z.string()).optional() }),
  })
  .openapi('Ready');

const livez = createRoute({
  method: 'get',
  path: '/livez',
  tags: ['health'],
  summary: 'Liveness: answers as long as the process does (no token, no database)',
  responses: { 200: { description: 'alive', content: { 'application/json': { schema: LiveSchema } } } },
});

const readyz = createRoute({
  method: 'get',
  path: '/readyz',
  tags: ['health'],
  summary: 'Readiness: database reachable, schema at the expected version, no migration pending (no token)',
  responses: {
    200: { description: 'this node can work', content: { 'application/json': { schema: ReadySchema } } },
    503: {
      description: 'a part failed; `failing` names it',
      content: { 'application/json': { schema: ReadySchema } },
    },
  },
});

/** Registers the public `GET /livez`, and `GET /readyz` when a probe is given. */
export function registerProbeRoutes(app: OpenAPIHono<AdminEnv>, readiness: ReadinessProbe | undefined): void {
  app.openapi(livez, (c) => c.json({ status: 'ok' as const }, 200));
  methodNotAllowed(app, '/livez', ['GET']);
  if (readiness === undefined) return;
  app.openapi(readyz, async (c) => {
    const report = await readiness.check();
    const failing = (['database', 'schema', 'migrations'] as const).filter((part) => !report[part].ok);
    const { schema, migrations } = report;
    const error = (part: { readonly error?: string }) =>
      part.error === undefined ? {} : { error: part.error };
    const body = {
      status: failing.length === 0 ? ('ready' as const) : ('not_ready' as const),
      failing: [...failing],
      database: { ok: report.database.ok, ...error(report.database) },
      schema: {
        ok: schema.ok,
        ...error(schema),
        expected: schema.expected,
        current: schema.current,
        ...(schema.unknown ? { unknown: [...schema.unknown] } : {}),
      },
      migrations: {
        ok: migrations.ok,
        ...error(migrations),
        pending: [...migrations.pending],
        ...(migrations.changed ? { changed: [...migrations.changed] } : {}),
      },
    };
    return failing.length === 0 ? c.json(body, 200) : c.json(body, 503);
  });
  methodNotAllowed(app, '/readyz', ['GET']);
}
