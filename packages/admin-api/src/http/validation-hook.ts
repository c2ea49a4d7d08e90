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

/** The error code of a failed validation of `target`. */
function codeFor(target: string, error: ZodError): AdminApiErrorCode {
  if (target === 'json' || target === 'form') return 'MALFORMED_JSON';
  if (target === 'param' && error.issues.every((issue) => issue.path[0] === 'id')) return 'INVALID_RUN_ID';
  return 'VALIDATION_FAILED';
}

/**
 * The `defaultHook` of the admin app: a failed zod validation becomes a 400
 * with the issues summarised: `MALFORMED_JSON` (body), `INVALID_RUN_ID` (the
 * `{id}` path parameter), else `VALIDATION_FAILED` (a query or path value,
 * `limit` / `offset` included).
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
