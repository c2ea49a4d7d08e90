import { z } from '@hono/zod-openapi';
import { ADMIN_API_ERROR_STATUS } from '../errors.js';

const codes = Object.keys(ADMIN_API_ERROR_STATUS) as [keyof typeof ADMIN_API_ERROR_STATUS];

/** `{ error: { code, message } }`: every error response. */
export const ErrorBodySchema = z
  .object({
    error: z.object({
      code: z.enum(codes).openapi({ example: 'JOB_NOT_FOUND' }),
      message: z
        .string()
        .openapi({ example: 'no job named "nope"; GET /api/admin/jobs lists the registered jobs' }),
    }),
  })
  .openapi('Error');

/** The JSON of a `JobOutcome`. */
export const JobOutcomeSchema = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('ok'),
      count: z.number().openapi({ description: "the job's primary scalar" }),
      extra: z.record(z.string(), z.unknown()).openapi({ description: 'job-specific fields' }),
    }),
    z.object({ kind: z.literal('err'), message: z.string() }),
  ])
  .openapi('JobOutcome');

/** The uniform envelope of a dispatch: `ok` mirrors `outcome.kind === 'ok'`. */
export const OutcomeEnvelopeSchema = z
  .object({ ok: z.boolean(), outcome: JobOutcomeSchema })
  .openapi('OutcomeEnvelope');

/** The JSON of one `JobSummary`. */
export const JobSummarySchema = z
  .object({
    name: z.string().openapi({ example: 'trash_cleanup' }),
    interval_ms: z.number().nullable().openapi({ description: 'null = on demand only' }),
    timeout_ms: z.number().nullable(),
    next_run_at: z.string().nullable().openapi({ description: 'ISO 8601; null for on-demand jobs' }),
    running: z.boolean(),
    running_since: z.string().nullable().openapi({ description: 'ISO 8601 start of the run in flight' }),
    last_outcome: z
      .object({
        at: z.string().openapi({ description: 'ISO 8601 end of the run' }),
        outcome: JobOutcomeSchema,
        cause: z.string().optional().openapi({ description: 'handler | timeout | panicked (err only)' }),
        elapsed_ms: z.number().optional(),
        source: z.string().optional().openapi({ description: 'tick | trigger' }),
      })
      .nullable(),
  })
  .openapi('JobSummary');

/** A query flag that must be literally `true` or `false`. */
export function booleanQueryFlag(name: string, description: string) {
  return z
    .enum(['true', 'false'], {
      error: (issue) => `must be "true" or "false", got ${JSON.stringify(issue.input)}`,
    })
    .optional()
    .openapi({ param: { name, in: 'query' }, description });
}

/** Reads a validated {@link booleanQueryFlag}. */
export function flagValue(value: 'true' | 'false' | undefined): boolean | undefined {
  return value === undefined ? undefined : value === 'true';
}

/** The standard error responses of an authenticated admin route. */
export function errorResponses<const S extends readonly (400 | 401 | 403 | 404 | 405 | 500 | 503)[]>(
  statuses: S,
): Record<
  S[number],
  { description: string; content: { 'application/json': { schema: typeof ErrorBodySchema } } }
> {
  const descriptions: Record<number, string> = {
    400: 'a query, path or body value is invalid (VALIDATION_FAILED, MALFORMED_JSON)',
    401: 'no, invalid, expired or tampered bearer token (UNAUTHENTICATED)',
    403: 'the token user is not an admin or no longer exists (FORBIDDEN)',
    404: 'no such job (JOB_NOT_FOUND)',
    405: 'method not allowed (METHOD_NOT_ALLOWED)',
    500: 'unexpected error (INTERNAL)',
    503: 'the database does not answer (UNAVAILABLE)',
  };
  const out: Record<number, unknown> = {};
  for (const status of statuses) {
    out[status] = {
      description: descriptions[status] ?? 'error',
      content: { 'application/json': { schema: ErrorBodySchema } },
    };
  }
  return out as never;
}
