import type { Context } from 'hono';
import type { ZodError } from 'zod';
import { AdminApiError, type AdminApiErrorCode } from '../errors.js';
import type { AdminEnv } from './admin-env.js';
import { errorResponse } from './error-response.js';

/** Summarises zod issues in one line: `query.force: must be "true" or "false", got "yes"; …`. */
export function summariseIssues(target: string, error: ZodError): string {
  return error.issues
    .map((issue) => {
      const where = [target, ...issue.path.map(String)].join('.');
      return `${where}: ${issue.message}`;
    })
    .join('; ');
}

/** Query keys whose failures are `INVALID_PAGINATION` rather than `INVALID_QUERY`. */
const PAGINATION_KEYS = new Set(['limit', 'offset']);

/** The error code of a failed validation of `target`. */
function codeFor(target: string, error: ZodError): AdminApiErrorCode {
  if (target === 'json' || target === 'form') return 'INVALID_BODY';
  if (target === 'param' && error.issues.every((issue) => issue.path[0] === 'id')) return 'INVALID_RUN_ID';
  if (target === 'query' && error.issues.every((issue) => PAGINATION_KEYS.has(String(issue.path[0])))) {
    return 'INVALID_PAGINATION';
  }
  return 'INVALID_QUERY';
}

/**
 * The `defaultHook` of the admin app: a failed zod validation becomes a 400
 * with the issues summarised: `INVALID_BODY` (body), `INVALID_RUN_ID` (the
 * `{id}` path parameter), `INVALID_PAGINATION` (`limit` / `offset`), else
 * `INVALID_QUERY`.
 */
export function validationHook(
  result: { target: string } & ({ success: true } | { success: false; error: ZodError }),
  c: Context<AdminEnv>,
): Response | undefined {
  if (result.success) return undefined;
  return errorResponse(
    c,
    new AdminApiError(
      codeFor(result.target, result.error),
      `invalid request: ${summariseIssues(result.target, result.error)}`,
    ),
  );
}
