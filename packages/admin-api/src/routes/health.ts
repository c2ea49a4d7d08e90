import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AdminEnv } from '../http/admin-env.js';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import type { HealthProbe } from '../ports/health-probe.js';

const HealthSchema = z
  .object({
    status: z.enum(['ok', 'degraded']),
    database: z.union([
      z.object({ ok: z.literal(true), latency_ms: z.number() }),
      z.object({ ok: z.literal(false), error: z.string() }),
    ]),
  })
  .openapi('Health');

const health = createRoute({
  method: 'get',
  path: '/healthz',
  tags: ['health'],
  summary: 'Liveness and database reachability (no token needed)',
  responses: {
    200: { description: 'the database answers', content: { 'application/json': { schema: HealthSchema } } },
    503: {
      description: 'the database does not answer',
      content: { 'application/json': { schema: HealthSchema } },
    },
  },
});

/** Registers the public `GET /healthz`. */
export function registerHealthRoute(app: OpenAPIHono<AdminEnv>, probe: HealthProbe): void {
  app.openapi(health, async (c) => {
    const database = await probe.database();
    if (database.ok) {
      return c.json(
        { status: 'ok' as const, database: { ok: true as const, latency_ms: database.latencyMs } },
        200,
      );
    }
    return c.json(
      { status: 'degraded' as const, database: { ok: false as const, error: database.error } },
      503,
    );
  });
  methodNotAllowed(app, '/healthz', ['GET']);
}
