import type { Hono } from 'hono';
import { AdminApiError } from '../errors.js';
import type { AdminEnv } from './admin-env.js';
import { errorResponse } from './error-response.js';

/**
 * Answers 405 `METHOD_NOT_ALLOWED` (with an `Allow` header) for every method
 * on `path` other than `allowed`. Register it AFTER the real routes of `path`.
 */
export function methodNotAllowed(app: Hono<AdminEnv>, path: string, allowed: readonly string[]): void {
  const allow = allowed.join(', ');
  app.all(path, (c) =>
    errorResponse(
      c,
      new AdminApiError(
        'METHOD_NOT_ALLOWED',
        `${c.req.method} is not allowed on ${c.req.path}; allowed: ${allow}`,
      ),
      { Allow: allow },
    ),
  );
}
