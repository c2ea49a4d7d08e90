import { randomBytes } from 'node:crypto';
import { waitUntilAcceptingConnections } from './accepting-connections.js';
import {
  type ContainerLeft,
  LOG_LINES,
  readContainerLeft,
  rememberStateOnFailure,
} from './container-state.js';
import { TestSupportError } from './errors.js';
import { SERVER_FLAGS } from './server-flags.js';

/** Label on the harness's containers, to find one that failed before Testcontainers handed it over. */
const RUN_LABEL = 'org.oxicloud.test-postgres';

/** A running Postgres container. */
export interface ContainerPostgres {
  readonly adminUrl: string;
  readonly host: string;
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * Answers whether a container runtime answers (Testcontainers' own discovery:
 * `DOCKER_HOST`, `~/.testcontainers.properties`, `/var/run/docker.sock`, …);
 * `reason` is the runtime client's error when none does.
 */
export async function probeContainerRuntime(): Promise<{ ok: true } | { ok: false; reason: string }> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Starts `image` (the official `postgres` image's contract: POSTGRES_USER,
 * POSTGRES_PASSWORD, POSTGRES_DB, `postgres -c …`) with Testcontainers and
 * waits until Postgres listens on its port, checked inside the container and
 * from the host, and then takes a session (`SELECT 1`): no healthcheck (podman runs those through systemd, and
 * Testcontainers' Postgres module would exec one every 250 ms for the whole
 * run). Ryuk stays off unless `TESTCONTAINERS_RYUK_DISABLED` says otherwise:
 * its image is pulled from a registry, and the harness stops its container
 * itself. A container that is not up within `startupTimeoutMs` is removed and
 * a {@link TestSupportError} `CONTAINER_DID_NOT_START` says why, in the
 * runtime's words: its error, the container's state and its last output.
 */
export async function startContainerPostgres(options: {
  image: string;
  startupTimeoutMs: number;
}): Promise<ContainerPostgres> {
  process.env['TESTCONTAINERS_RYUK_DISABLED'] ??= 'true';
  const { GenericContainer, Wait } = await import('testcontainers');
  const runId = randomBytes(6).toString('hex');
  const output: string[] = [];
  const remember = (chunk: string) => {
    output.push(...chunk.split('\n').filter((line) => line.trim() !== ''));
    output.splice(0, Math.max(0, output.length - LOG_LINES));
  };
  let seenAtWait: ContainerLeft | undefined;
  const started = Date.now();
  try {
    const container = await new GenericContainer(options.image)
      .withExposedPorts(5432)
      .withEnvironment({ POSTGRES_USER: 'postgres', POSTGRES_PASSWORD: 'postgres', POSTGRES_DB: 'postgres' })
      .withCommand(['postgres', ...SERVER_FLAGS])
      .withSharedMemorySize(256 * 1024 * 1024)
      .withLabels({ [RUN_LABEL]: runId })
      .withLogConsumer((stream) => {
        stream.on('data', (chunk: Buffer | string) => remember(chunk.toString()));
        stream.on('error', () => undefined);
      })
      .withWaitStrategy(
        rememberStateOnFailure(Wait.forListeningPorts(), (left) => {
          seenAtWait = left;
        }),
      )
      .withStartupTimeout(options.startupTimeoutMs)
      .start();
    const host = container.getHost();
    const port = container.getMappedPort(5432);
    const adminUrl = `postgres://postgres:postgres@${host.includes(':') ? `[${host}]` : host}:${port}/postgres`;
    // A listening port is not yet a server that takes sessions (57P03 "starting up" was seen in CI).
    await waitUntilAcceptingConnections(adminUrl, {
      timeoutMs: Math.max(1_000, options.startupTimeoutMs - (Date.now() - started)),
    }).catch(async (err: unknown) => {
      await container.stop({ timeout: 0 }).catch(() => undefined);
      throw err;
    });
    return {
      adminUrl,
      host,
      port,
      stop: async () => {
        await container.stop({ timeout: 5_000 });
      },
    };
  } catch (err) {
    const reason = (err instanceof Error ? err.message : String(err)).trim();
    // Testcontainers removes a container that failed its wait strategy; one that exited before it
    // is still there. Either way the error says its state and last output.
    const left = (await removeLeftContainer(runId, reason)) ?? seenAtWait;
    const state = left?.state ?? '';
    const lines = left?.output.length ? left.output : output;
    const said = lines.length > 0 ? `; its last output: ${lines.join(' | ')}` : '; it wrote nothing';
    throw new TestSupportError(
      'CONTAINER_DID_NOT_START',
      `${options.image} did not come up (startup bound ${options.startupTimeoutMs / 1000} s): ${reason}${state}${said}`,
      { cause: err },
    );
  }
}

/**
 * Finds the run's container if Testcontainers left it (it removes only
 * containers that failed its wait strategy, not those that exited before
 * their port was bound), says its state and last output, and removes it.
 */
async function removeLeftContainer(runId: string, reason: string): Promise<ContainerLeft | undefined> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    const client = await getContainerRuntimeClient();
    const [info] = await client.container.dockerode.listContainers({
      all: true,
      filters: { label: [`${RUN_LABEL}=${runId}`] },
    });
    if (!info) return undefined;
    const container = client.container.getById(info.Id);
    const left = await readContainerLeft(container, reason);
    await client.container.stop(container, { timeout: 0 }).catch(() => undefined);
    await client.container.remove(container, { removeVolumes: true }).catch(() => undefined);
    return left;
  } catch {
    return undefined;
  }
}
