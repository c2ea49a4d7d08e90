import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AdminEnv } from '../http/admin-env.js';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import type { AlertsView } from '../ports/alerts-view.js';
import { errorResponses } from './schemas.js';

/** `GET /api/admin/alerts`: whether the server that answers mails alerts. */
export const AlertsStateSchema = z
  .object({
    enabled: z.boolean().openapi({ description: 'whether this server mails alerts' }),
    smtp: z
      .object({
        host: z.string().openapi({ example: '127.0.0.1' }),
        port: z.number().int().openapi({ example: 587 }),
        secure: z.enum(['none', 'starttls', 'tls']),
      })
      .nullable()
      .openapi({
        description: "the SMTP server from the server's OXICLOUD_SMTP_*; null when alerts are off",
      }),
    missing: z.string().nullable().openapi({
      description: 'the variable whose absence turns alerts off; null when they are on',
      example: 'OXICLOUD_SMTP_HOST',
    }),
    admin_recipients: z
      .number()
      .int()
      .openapi({ description: 'admins with an e-mail address now (the alerts go to them)', example: 1 }),
  })
  .openapi('AlertsState');

const getAlerts = createRoute({
  method: 'get',
  path: '/api/admin/alerts',
  operationId: 'getAlerts',
  tags: ['alerts'],
  summary: 'Whether this server mails alerts: its SMTP server, or the variable that is missing',
  description:
    'The e-mail alerts of the process that answers, from its own environment (OXICLOUD_SMTP_*), and the ' +
    'number of admins with an address. `oxijobs alerts test` asks it to say whether the running server has ' +
    'alerts on.',
  security: [{ bearerAuth: [] }],
  responses: {
    200: {
      description: 'the alert settings of this server',
      content: { 'application/json': { schema: AlertsStateSchema } },
    },
    ...errorResponses([401, 403, 503]),
  },
});

/** Registers `GET /api/admin/alerts`. */
export function registerAlertsRoutes(app: OpenAPIHono<AdminEnv>, alerts: AlertsView): void {
  app.openapi(getAlerts, async (c) => c.json(await alerts.state(), 200));
  methodNotAllowed(app, '/api/admin/alerts', ['GET']);
}
