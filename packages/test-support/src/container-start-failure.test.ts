import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeContainerRuntime } from './container-postgres.js';
import { TestSupportError } from './errors.js';
import { DEFAULT_POSTGRES_IMAGE, startTestPostgres } from './postgres-server.js';

// Runs where a container runtime answers (the container pass of `pnpm test`,
// or a machine with Docker/podman); elsewhere there is nothing to start.
const runtime = await probeContainerRuntime();
const BROKEN_IMAGE = 'oxicloud/test-postgres-broken:latest';
// Exits 3 after 3 s: running when Testcontainers first inspects it, gone while its wait strategy polls.
const LATE_BROKEN_IMAGE = 'oxicloud/test-postgres-broken-late:latest';
const SAID = 'initdb: could not create directory: Permission denied';

describe.skipIf(!runtime.ok)(
  'a container runtime that answers, with a Postgres image whose entrypoint exits',
  () => {
    const base = process.env['OXICLOUD_TEST_POSTGRES_IMAGE'] || DEFAULT_POSTGRES_IMAGE;
    const env = {
      ...process.env,
      TEST_DATABASE_URL: '',
      OXICLOUD_TEST_POSTGRES_IMAGE: BROKEN_IMAGE,
      OXICLOUD_TEST_POSTGRES_STARTUP_MS: '30000',
    };

    /** Builds the image the harness would start, with an entrypoint that says why it gives up and exits 3. */
    async function buildBroken(tag: string, delaySeconds: number): Promise<void> {
      const { GenericContainer } = await import('testcontainers');
      const context = mkdtempSync(join(tmpdir(), 'oxicloud-broken-image-'));
      writeFileSync(
        join(context, 'Dockerfile'),
        `FROM ${base}\nENTRYPOINT ["/bin/sh", "-c", "echo '${SAID}' >&2; sleep ${delaySeconds}; exit 3"]\n`,
      );
      try {
        await GenericContainer.fromDockerfile(context).build(tag, { deleteOnExit: false });
      } finally {
        rmSync(context, { recursive: true, force: true });
      }
    }

    beforeAll(async () => {
      await buildBroken(BROKEN_IMAGE, 0);
      await buildBroken(LATE_BROKEN_IMAGE, 3);
    }, 180_000);

    afterAll(async () => {
      const { getContainerRuntimeClient } = await import('testcontainers');
      const client = await getContainerRuntimeClient();
      for (const tag of [BROKEN_IMAGE, LATE_BROKEN_IMAGE]) {
        await client.container.dockerode
          .getImage(tag)
          .remove({ force: true })
          .catch(() => undefined);
      }
    });

    async function containersOfBrokenImage(image = BROKEN_IMAGE): Promise<number> {
      const { getContainerRuntimeClient } = await import('testcontainers');
      const client = await getContainerRuntimeClient();
      const all = await client.container.dockerode.listContainers({ all: true });
      return all.filter((c) => c.Image === image).length;
    }

    /** Starts `image` with Testcontainers required: the error names the exit code and what the container said. */
    async function expectNamedExit(image: string): Promise<void> {
      const error = await startTestPostgres({
        ...env,
        OXICLOUD_TEST_POSTGRES_IMAGE: image,
        OXICLOUD_TEST_POSTGRES: 'testcontainers',
      }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(TestSupportError);
      expect((error as TestSupportError).code).toBe('CONTAINER_DID_NOT_START');
      const message = (error as Error).message;
      expect(message).toContain(`${image} did not come up`);
      expect(message).toMatch(/container exited \(exit code 3\)/);
      expect(message).toContain(SAID);
    }

    it('fails with the runtime’s words when Testcontainers is required, and leaves no container', async () => {
      const started = Date.now();
      await expectNamedExit(BROKEN_IMAGE);
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(await containersOfBrokenImage()).toBe(0);
    }, 60_000);

    it('says the exit code of a container that exits while Testcontainers waits for its port, and leaves no container', async () => {
      await expectNamedExit(LATE_BROKEN_IMAGE);
      expect(await containersOfBrokenImage(LATE_BROKEN_IMAGE)).toBe(0);
    }, 60_000);

    it('falls back to embedded Postgres in auto mode, and its line says why', async () => {
      const server = await startTestPostgres({ ...env, OXICLOUD_TEST_POSTGRES: 'auto' });
      try {
        expect(server.source).toBe('embedded');
        expect(server.description).toMatch(/^test database: embedded Postgres \(PostgreSQL 18\.\d+\)/);
        expect(server.description).toContain(`Testcontainers fallback: ${BROKEN_IMAGE} did not come up`);
        expect(server.description).toContain(SAID);
      } finally {
        await server.stop();
      }
      expect(await containersOfBrokenImage()).toBe(0);
    }, 90_000);
  },
);

describe('the choice of test database', () => {
  it('refuses an OXICLOUD_TEST_POSTGRES it does not know, naming the allowed ones', async () => {
    await expect(
      startTestPostgres({ ...process.env, TEST_DATABASE_URL: '', OXICLOUD_TEST_POSTGRES: 'docker' }),
    ).rejects.toThrow(
      'OXICLOUD_TEST_POSTGRES=docker is not a test database choice; use one of auto, testcontainers, embedded',
    );
  });
});
