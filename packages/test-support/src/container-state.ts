import type { Readable } from 'node:stream';
import type { WaitStrategy } from 'testcontainers';

/** The runtime's handle on a container (dockerode's, as Testcontainers passes it). */
type Container = Parameters<WaitStrategy['waitUntilReady']>[0];

/** How many of a failed container's last output lines an error quotes. */
export const LOG_LINES = 15;

/** What a container that did not come up left behind: its state and its last output. */
export interface ContainerLeft {
  /** `; container exited (exit code 3)`, ready to append to a reason. */
  readonly state: string;
  readonly output: string[];
}

/**
 * Reads a container's state and last output while it still exists. `reason`
 * is the error so far; a runtime error it already quotes is not repeated.
 */
export async function readContainerLeft(container: Container, reason: string): Promise<ContainerLeft> {
  const { getContainerRuntimeClient } = await import('testcontainers');
  const client = await getContainerRuntimeClient();
  const s = (await container.inspect()).State;
  const runtimeError = s.Error && !reason.includes(s.Error.trim()) ? `, runtime error: ${s.Error}` : '';
  const state = `; container ${s.Status}${s.Running ? '' : ` (exit code ${s.ExitCode})`}${runtimeError}`;
  return { state, output: await lastLines(await client.container.logs(container, { tail: LOG_LINES })) };
}

/**
 * Wraps a wait strategy so that, when it fails, the container's state and
 * last output are read before Testcontainers removes the container (it stops
 * and removes one that fails its wait strategy). Without this, a container
 * that exits while the strategy polls it is known only by the runtime's
 * "409 container is not running", not by its exit code.
 */
export function rememberStateOnFailure(
  inner: WaitStrategy,
  remember: (left: ContainerLeft) => void,
): WaitStrategy {
  const wrapped: WaitStrategy = {
    async waitUntilReady(container, boundPorts, startTime) {
      try {
        await inner.waitUntilReady(container, boundPorts, startTime);
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        const left = await readContainerLeft(container, reason).catch(() => undefined);
        if (left) remember(left);
        throw err;
      }
    },
    withStartupTimeout(startupTimeoutMs) {
      inner.withStartupTimeout(startupTimeoutMs);
      return wrapped;
    },
    isStartupTimeoutSet: () => inner.isStartupTimeoutSet(),
    getStartupTimeout: () => inner.getStartupTimeout(),
  };
  return wrapped;
}

/** Reads a finished container's log stream (bounded: 3 s) into its non-empty lines. */
async function lastLines(stream: Readable): Promise<string[]> {
  const chunks: string[] = [];
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 3_000);
    stream.on('data', (chunk: Buffer | string) => chunks.push(chunk.toString()));
    stream.on('end', () => {
      clearTimeout(timer);
      resolve();
    });
    stream.on('error', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  stream.destroy();
  return chunks
    .join('')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(-LOG_LINES);
}
