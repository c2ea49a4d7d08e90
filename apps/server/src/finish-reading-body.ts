import type { IncomingMessage } from 'node:http';

/** Past this many unread bytes the rest of a refused body is not read: the connection closes. */
export const MAX_UNREAD_BODY_BYTES = 64 * 1024 * 1024;
/** How long the rest of a refused body is read before the connection closes anyway. */
export const UNREAD_BODY_TIMEOUT_MS = 10_000;

async function drain(body: ReadableStream<Uint8Array>): Promise<void> {
  let read = 0;
  const reader = body.getReader();
  const timer = setTimeout(() => void reader.cancel().catch(() => undefined), UNREAD_BODY_TIMEOUT_MS);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
      if (read > MAX_UNREAD_BODY_BYTES) return;
    }
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * Wraps `fetch` so an answer given before the request body was read (a 413
 * by Content-Length, a 401 on a large POST) reaches the client: Node closes
 * the connection as soon as such a response ends, and a client still
 * sending its body gets a broken pipe instead of the answer. Here the answer
 * goes out at once, and the response ends only after the rest of the body
 * was read and dropped (up to {@link MAX_UNREAD_BODY_BYTES} /
 * {@link UNREAD_BODY_TIMEOUT_MS}; past that the connection closes as before).
 */
export function finishReadingBody(
  fetch: (request: Request, env?: unknown) => Response | Promise<Response>,
): (request: Request, env?: unknown) => Promise<Response> {
  return async (request, env) => {
    const response = await fetch(request, env);
    const incoming = (env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const body = request.body;
    if (incoming === undefined || incoming.complete || body === null || body.locked) return response;
    const answer = new Uint8Array(await response.arrayBuffer());
    const headers = new Headers(response.headers);
    headers.set('content-length', String(answer.byteLength));
    return new Response(
      new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(answer);
          await drain(body).catch(() => undefined);
          controller.close();
        },
      }),
      { status: response.status, statusText: response.statusText, headers },
    );
  };
}
