import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { HEALTH_SERVICE } from '../health-service.js';
import type { AdminEnv } from '../http/admin-env.js';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import type { HealthProbe } from '../ports/health-probe.js';
import { HTTP_LAYER_4XX } from './schemas.js';

const HealthSchema = z
  .object({
    service: z.literal(HEALTH_SERVICE).openapi({
      description: 'which server answers: a client sends its admin token only to one answering `oxijobs`',
    }),
    status: z.enum(['ok', 'degraded']),
    database: z.union([
      z.object({ ok: z.literal(true), latency_ms: z.number() }),
      z.object({
        ok: z.literal(false),
        error: z.string().openapi({
          description:
            'a fixed public reason: connection refused, database host not found, no answer in time, ' +
            'authentication failed, connection lost, not accepting connections, the database does not answer',
          example: 'connection refused',
        }),
      }),
    ]),
  })
  .openapi('Health');

const health = createRoute({
  method: 'get',
  path: '/healthz',
  operationId: 'getHealth',
  security: [],
  tags: ['health'],
  summary: 'Liveness and database reachability (no token needed)',
  responses: {
    200: { description: 'the database answers', content: { 'application/json': { schema: HealthSchema } } },
    503: {
      description: 'the database does not answer',
      content: { 'application/json': { schema: HealthSchema } },
    },
    ...HTTP_LAYER_4XX,
  },
});

/** Public reasons `GET /healthz` gives, matched on the probe's error text in this order. */
const PUBLIC_REASONS: ReadonlyArray<readonly [RegExp, string]> = [
  [/ECONNREFUSED|connection refused/i, 'connection refused'],
  [/ENOTFOUND|EAI_AGAIN|getaddrinfo/i, 'database host not found'],
  [/timeout|timed out|ETIMEDOUT|no answer within/i, 'no answer in time'],
  [/password|authenticat|SASL|permission denied/i, 'authentication failed'],
  [/ECONNRESET|EPIPE|terminat|connection (lost|ended|closed)/i, 'connection lost'],
  [/starting up|shutting down|57P0[123]|too many (connections|clients)/i, 'not accepting connections'],
];

/**
 * The reason `/healthz` shows for a probe error: one of a fixed set of
 * phrases, never the driver's text (which names hosts, ports, users and may
 * carry a stack). The route is public.
 */
export function publicDatabaseReason(error: string): string {
  for (const [pattern, reason] of PUBLIC_REASONS) if (pattern.test(error)) return reason;
  return 'the database does not answer';
}

/** Registers the public `GET /healthz`. */
export function registerHealthRoute(app: OpenAPIHono<AdminEnv>, probe: HealthProbe): void {
  app.openapi(health, async (c) => {
    const database = await probe.database();
    if (database.ok) {
      return c.json(
        {
          service: HEALTH_SERVICE,
          status: 'ok' as const,
          database: { ok: true as const, latency_ms: database.latencyMs },
        },
        200,
      );
    }
    return c.json(
      {
        service: HEALTH_SERVICE,
        status: 'degraded' as const,
        database: { ok: false as const, error: publicDatabaseReason(database.error) },
      },
      503,
    );
  });
  methodNotAllowed(app, '/healthz', ['GET']);
}
