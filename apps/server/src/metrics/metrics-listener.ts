import { createHash, timingSafeEqual } from 'node:crypto';
import { type HttpListener, listen } from '../http-listener.js';
import { ServerError } from '../server-error.js';
import type { MetricsConfig } from './metrics-config.js';

/** What the listener serves: the Prometheus text and its content type. */
export interface MetricsSource {
  readonly contentType: string;
  render(): Promise<string>;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * The `/metrics` request handler: `GET /metrics` only (404 elsewhere, 405
 * for another method), and with a token a `Authorization: Bearer <token>`
 * compared in constant time (401 otherwise, never a hint of the token).
 */
export function metricsFetch(source: MetricsSource, token: string | null) {
  const expected = token === null ? null : digest(token);
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    if (url.pathname !== '/metrics') {
      return new Response('not found: metrics are served at /metrics\n', { status: 404 });
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return new Response('method not allowed: use GET\n', { status: 405, headers: { allow: 'GET, HEAD' } });
    }
    if (expected !== null) {
      const header = request.headers.get('authorization') ?? '';
      const given = /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim() ?? '';
      if (!timingSafeEqual(digest(given), expected)) {
        return new Response('unauthorized: send Authorization: Bearer <OXICLOUD_METRICS_TOKEN>\n', {
          status: 401,
          headers: { 'www-authenticate': 'Bearer realm="metrics"' },
        });
      }
    }
    try {
      const body = await source.render();
      return new Response(request.method === 'HEAD' ? null : body, {
        status: 200,
        headers: { 'content-type': source.contentType },
      });
    } catch (error) {
      return new Response(`metrics unavailable: ${(error as Error).message}\n`, { status: 503 });
    }
  };
}

/** Serves `/metrics` on its own listener (never the admin port). */
export async function listenMetrics(source: MetricsSource, config: MetricsConfig): Promise<HttpListener> {
  try {
    return await listen(metricsFetch(source, config.token), { host: config.host, port: config.port });
  } catch (error) {
    const cause = (error as Error).cause as NodeJS.ErrnoException | undefined;
    throw new ServerError(
      'HTTP_LISTEN_FAILED',
      `cannot serve metrics on ${config.host}:${config.port} (${cause?.code ?? (error as Error).message}); ` +
        'set OXICLOUD_METRICS_ADDR to a free local host:port, or empty to turn the metrics listener off',
      { cause: error },
    );
  }
}
