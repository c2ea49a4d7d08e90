import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { AdminApiError } from '../errors.js';
import type { AdminEnv } from './admin-env.js';
import { errorResponse } from './error-response.js';

/** The largest request body the admin API reads, in bytes, unless `createAdminApp` is told otherwise. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;

/** Bounds of the `maxBodyBytes` option: 1 KiB to 16 MiB. */
export const MAX_BODY_BYTES_RANGE = { min: 1024, max: 16 * 1024 * 1024 } as const;

/** Shows a byte count the way the docs do (`64 KiB`, `1536 bytes`). */
export function formatBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * Refuses a request body over `maxBytes` with 413 `PAYLOAD_TOO_LARGE`
 * (hono's `bodyLimit`: by `Content-Length` when given, else while the body
 * streams in, so an oversized body is never buffered whole).
 */
export function requestBodyLimit(maxBytes: number): MiddlewareHandler<AdminEnv> {
  return bodyLimit({
    maxSize: maxBytes,
    onError: (c) =>
      errorResponse(
        c,
        new AdminApiError(
          'PAYLOAD_TOO_LARGE',
          `the request body is larger than ${formatBytes(maxBytes)}; run params are a small JSON object`,
        ),
      ),
  });
}
