import pg from 'pg';

/**
 * SQLSTATEs and socket errors a Postgres server gives while it is still coming
 * up: its port can listen before the startup process has finished (the
 * official image's entrypoint also restarts the server once after initdb), and
 * then a connection is refused with `57P03` "the database system is starting
 * up" (or `57P01`/a reset while the init server shuts down).
 */
const STARTING = new Set(['57P03', '57P01', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE']);

const codeOf = (err: unknown): string | undefined =>
  typeof err === 'object' && err !== null && 'code' in err
    ? String((err as { code: unknown }).code)
    : undefined;

/**
 * Whether `err` is what a server still coming up gives: one of {@link STARTING},
 * or an error with no code at all (pg's "Connection terminated unexpectedly"
 * when the entrypoint's init server drops the socket, and its connect
 * "timeout expired"). A server's own refusal (a SQLSTATE such as 28P01) is not.
 */
const isStarting = (err: unknown): boolean => {
  const code = codeOf(err);
  return code === undefined || STARTING.has(code);
};

/**
 * Waits until `url` accepts a connection and answers `SELECT 1`, retrying
 * every `intervalMs` while the server says it is starting (or drops the
 * connection without a word); any other error,
 * or still starting after `timeoutMs`, is thrown (the last error, so the
 * caller can say the server's own words). Returns how many attempts it took.
 */
export async function waitUntilAcceptingConnections(
  url: string,
  options: { timeoutMs: number; intervalMs?: number },
): Promise<number> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 100;
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
    // A server that drops the connection after a refusal also emits 'error'; the attempt's own error is what counts.
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return attempt;
    } catch (err) {
      if (!isStarting(err) || Date.now() + interval > deadline) throw err;
    } finally {
      await client.end().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
