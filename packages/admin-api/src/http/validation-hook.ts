import type { Context } from 'hono';
import type { ZodError } from 'zod';
import { AdminApiError } from '../errors.js';
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

/**
 * The `defaultHook` of the admin app: a failed zod validation becomes a 400
 * `VALIDATION_FAILED` with the issues summarised.
 */
export function validationHook(
  result: { target: string } & ({ success: true } | { success: false; error: ZodError }),
  c: Context<AdminEnv>,
): Response | undefined {
  if (result.success) return undefined;
  return errorResponse(
    c,
    new AdminApiError(
      'VALIDATION_FAILED',
      `invalid request: ${summariseIssues(result.target, result.error)}`,
    ),
  );
}
