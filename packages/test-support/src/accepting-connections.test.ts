import { connect, createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntilAcceptingConnections } from './accepting-connections.js';
import { ADMIN_URL_ENV } from './test-database.js';

/** A Postgres ErrorResponse, as a server sends it before closing a refused session. */
function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`);
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

/**
 * A port that refuses the first `refusals` sessions with `code` (what a
 * Postgres still starting up says) and then forwards to the run's real server.
 */
async function startingServer(
  code: string,
  refusals: number,
): Promise<{ url: string; sessions: () => number; server: Server }> {
  const real = new URL(process.env[ADMIN_URL_ENV] ?? '');
  let sessions = 0;
  const server = createServer((socket) => {
    sessions++;
    socket.on('error', () => undefined);
    if (sessions <= refusals) {
      // 'drop': the socket closes without a word (pg: "Connection terminated unexpectedly", no code).
      if (code === 'drop') socket.once('data', () => socket.destroy());
      else socket.once('data', () => socket.end(errorResponse(code, 'the database system is starting up')));
      return;
    }
    const upstream = connect(Number(real.port), real.hostname.replace(/^\[|\]$/g, ''));
    upstream.on('error', () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const url = new URL(real.href);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return { url: url.href, sessions: () => sessions, server };
}

describe('waitUntilAcceptingConnections', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  it('retries while the server says 57P03 "starting up", then answers once a session is taken', async () => {
    const s = await startingServer('57P03', 3);
    server = s.server;
    const attempts = await waitUntilAcceptingConnections(s.url, { timeoutMs: 10_000, intervalMs: 20 });
    expect(attempts).toBe(4);
    expect(s.sessions()).toBe(4);
  });

  it('retries a connection dropped without a word (no SQLSTATE), as while the init server stops', async () => {
    const s = await startingServer('drop', 2);
    server = s.server;
    const attempts = await waitUntilAcceptingConnections(s.url, { timeoutMs: 10_000, intervalMs: 20 });
    expect(attempts).toBe(3);
  });

  it('throws the server’s own error at once when it is not about starting (a wrong password)', async () => {
    const s = await startingServer('28P01', 1);
    server = s.server;
    await expect(
      waitUntilAcceptingConnections(s.url, { timeoutMs: 10_000, intervalMs: 20 }),
    ).rejects.toMatchObject({
      code: '28P01',
    });
    expect(s.sessions()).toBe(1);
  });

  it('gives up with the last 57P03 once the bound has passed', async () => {
    const s = await startingServer('57P03', 1_000);
    server = s.server;
    const started = Date.now();
    await expect(
      waitUntilAcceptingConnections(s.url, { timeoutMs: 500, intervalMs: 50 }),
    ).rejects.toMatchObject({
      code: '57P03',
    });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(s.sessions()).toBeGreaterThan(1);
  });
});
