import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { finishReadingBody } from './finish-reading-body.js';
import { ServerError } from './server-error.js';

/** A listening HTTP server and how to close it. */
export interface HttpListener {
  readonly port: number;
  /** Stops accepting, closes idle keep-alive connections, and cuts the rest after `graceMs`. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Serves `fetch` on `host:port` (an answer given before the request body was
 * read still reaches the client: {@link finishReadingBody}); a port in use
 * becomes `HTTP_LISTEN_FAILED` naming the variable.
 */
export async function listen(
  fetch: (request: Request, env?: unknown) => Response | Promise<Response>,
  options: { readonly host: string; readonly port: number },
): Promise<HttpListener> {
  const server = createAdaptorServer({ fetch: finishReadingBody(fetch) }) as Server;
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(
        new ServerError(
          'HTTP_LISTEN_FAILED',
          `cannot listen on ${options.host}:${options.port} (${error.code ?? error.message}); ` +
            'set OXICLOUD_HTTP_PORT / OXICLOUD_HTTP_HOST to a free port and a local address',
          { cause: error },
        ),
      );
    };
    server.once('error', onError);
    server.listen(options.port, options.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : options.port,
    close: (graceMs = 5_000) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
