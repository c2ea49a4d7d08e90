import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { AdminApiError } from '../errors.js';
import type { AdminEnv } from './admin-env.js';
import { domainToAdminApiError } from './domain-errors.js';

/** Builds the JSON error response `{ error: { code, message } }` and notes the code for the audit line. */
export function errorResponse(
  c: Context<AdminEnv>,
  error: AdminApiError,
  headers?: Record<string, string>,
): Response {
  c.set('errorCode', error.code);
  return c.json(error.toBody(), error.status as ContentfulStatusCode, headers);
}

/**
 * Converts anything thrown inside a request into an {@link AdminApiError}:
 * our own errors pass through, hono's `HTTPException`s map by status
 * (malformed JSON or an unsupported body media type → `MALFORMED_JSON`), the
 * domain errors a client can cause map by code, a database connection
 * failure → `UNAVAILABLE`; anything else is `undefined` (the caller
 * logs it and answers `INTERNAL`).
 */
export function toAdminApiError(thrown: unknown): AdminApiError | undefined {
  if (thrown instanceof AdminApiError) return thrown;
  if (thrown instanceof HTTPException) {
    const message = thrown.message || 'bad request';
    if ((thrown.status === 400 && /json/i.test(message)) || thrown.status === 415) {
      return new AdminApiError(
        'MALFORMED_JSON',
        `the request body must be a JSON object sent as Content-Type: application/json (${message})`,
        { cause: thrown },
      );
    }
    if (thrown.status === 400) return new AdminApiError('VALIDATION_FAILED', message, { cause: thrown });
    if (thrown.status === 401) return new AdminApiError('UNAUTHENTICATED', message, { cause: thrown });
    if (thrown.status === 403) return new AdminApiError('FORBIDDEN', message, { cause: thrown });
    if (thrown.status === 404) return new AdminApiError('NOT_FOUND', message, { cause: thrown });
    if (thrown.status === 405) return new AdminApiError('METHOD_NOT_ALLOWED', message, { cause: thrown });
  }
  return domainToAdminApiError(thrown);
}
