import { createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { blake3Hex, EncryptedBlobStorage, LocalFsBlobStorage } from '@oxicloud/storage';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, runCli } from './cli-process.js';
import { composeInProcess, latestRun, scratchDir } from './fault-support.js';

/** Every file under `root`, relative, sorted. */
function files(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name), `${prefix}${entry.name}/`);
      else out.push(`${prefix}${entry.name}`);
    }
  };
  walk(root, '');
  return out.sort();
}

/**
 * The server on OxiCloud's storage root (`OXICLOUD_STORAGE_PATH`) with
 * OxiCloud's encryption at rest: `oxijobs seed` writes what OxiCloud would
 * (`.blobs/<aa>/<hash>.blob`, nonce ‖ ciphertext ‖ tag), decryptable with
 * node:crypto alone, and a deep `storage_consistency` through the composed
 * server finds the store consistent; with another key the store canary refuses the run (wrong storage root / key), recording nothing.
 */
describe('OXICLOUD_STORAGE_PATH and OXICLOUD_STORAGE_ENCRYPTION_*', () => {
  let db: TestDatabase;
  let dir: { path: string; remove(): void };
  let dataDir: string;
  let storageRoot: string;
  const key = randomBytes(32);
  let env: Record<string, string>;
  /** What OxiCloud keeps beside its blobs, before the seed. */
  let othersBefore: string[];

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = scratchDir('encryption');
    dataDir = join(dir.path, 'data');
    storageRoot = join(dir.path, 'oxicloud-storage');
    mkdirSync(join(storageRoot, '.thumbnails', 'icon'), { recursive: true });
    writeFileSync(join(storageRoot, '.thumbnails', 'icon', `${'a'.repeat(64)}.webp`), 'thumbnail');
    writeFileSync(join(storageRoot, '.jwt_secret'), 'oxicloud secret');
    othersBefore = files(storageRoot);
    env = {
      DATABASE_URL: db.url,
      OXICLOUD_DATA_DIR: dataDir,
      OXICLOUD_STORAGE_PATH: storageRoot,
      OXICLOUD_STORAGE_ENCRYPTION_ENABLED: 'true',
      OXICLOUD_STORAGE_ENCRYPTION_KEY: key.toString('base64'),
    };
    const seeded = await runCli(
      // No images: the seed's thumbnails would be files beside the blobs.
      ['seed', '--users', '3', '--files-per-user', '10', '--image-share', '0', '--seed', '5'],
      cleanEnv({ ...env }),
    );
    expect(seeded.code, seeded.stderr).toBe(0);
  }, 180_000);

  afterAll(async () => {
    await db?.drop();
    dir?.remove();
  });

  it("oxijobs seed writes OxiCloud's encrypted objects at <path>/.blobs/<aa>/<hash>.blob, and nothing else", async () => {
    const { rows } = await db.pool.query<{ hash: string; size: string }>(
      'SELECT hash, size::text FROM storage.blobs ORDER BY hash',
    );
    expect(rows.length).toBeGreaterThan(10);
    for (const row of rows) {
      const path = join(storageRoot, '.blobs', row.hash.slice(0, 2), `${row.hash}.blob`);
      const stored = readFileSync(path);
      expect(stored.length, row.hash).toBe(Number(row.size) + 28);
      const decipher = createDecipheriv('aes-256-gcm', key, stored.subarray(0, 12));
      decipher.setAuthTag(stored.subarray(stored.length - 16));
      const plaintext = Buffer.concat([decipher.update(stored.subarray(12, -16)), decipher.final()]);
      expect(blake3Hex(plaintext)).toBe(row.hash);
    }
    expect(files(storageRoot).filter((f) => !f.startsWith('.blobs/'))).toEqual(othersBefore);
    expect(files(storageRoot).filter((f) => f.startsWith('.blobs/'))).toHaveLength(rows.length);
    // The default root under the data folder is not used (nor made) when OXICLOUD_STORAGE_PATH is set.
    expect(existsSync(join(dataDir, 'storage'))).toBe(false);
  });

  it('a deep storage_consistency over the encrypted store finds it consistent; another key fails the run loudly', async () => {
    const { server } = await composeInProcess({ pool: db.pool, dataDir, env });
    try {
      expect(server.blobs).toBeInstanceOf(EncryptedBlobStorage);
      const outcome = await server.engine.runOrResume('storage_consistency', { deep: true, force: true });
      expect(outcome.kind, JSON.stringify(outcome)).toBe('ok');
      const run = await latestRun(db.pool, 'storage_consistency');
      expect(run.status).toBe('Completed');
      // The thumbnail put beside the blobs names no content of the seed: the thumbnails phase reports it
      // (and, like every check, changes nothing: the files beside the blobs are compared below).
      expect(run.findings).toEqual([`orphan_thumbnail Reclaimable ${'a'.repeat(64)}`]);
      // The listing the check walked was the plaintext sizes of the rows.
      const listed = await server.blobs.list({ limit: 100 });
      const { rows } = await db.pool.query<{ hash: string; size: string }>(
        'SELECT hash, size::text FROM storage.blobs ORDER BY hash',
      );
      expect(listed.map((e) => [e.hash, e.size, e.storedSize])).toEqual(
        rows.map((r) => [r.hash, Number(r.size), Number(r.size) + 28]),
      );
    } finally {
      await server.stop();
    }
    const wrong = await composeInProcess({
      pool: db.pool,
      dataDir,
      env: { ...env, OXICLOUD_STORAGE_ENCRYPTION_KEY: randomBytes(32).toString('base64') },
    });
    try {
      const outcome = await wrong.server.engine.runOrResume('storage_consistency', {
        deep: true,
        force: true,
      });
      expect(outcome.kind).toBe('err');
      // The store canary refuses the run before any object is reported corrupt.
      expect(JSON.stringify(outcome)).toContain('storage_consistency: refused: wrong storage root / key');
      expect(JSON.stringify(outcome)).toMatch(/\d+ do not decrypt \(wrong OXICLOUD_STORAGE_ENCRYPTION_KEY/);
      const { rows } = await db.pool.query(
        "SELECT count(*)::int AS n FROM jobs.run_findings f JOIN jobs.recoverable_runs r ON r.id = f.run_id WHERE r.status = 'Failed'",
      );
      expect(rows[0].n).toBe(0);
    } finally {
      await wrong.server.stop();
    }
    // The plain local store over the same root sees the ciphertext: 28 bytes more per object.
    const plain = new LocalFsBlobStorage({ root: storageRoot });
    const first = (await plain.list({ limit: 1 }))[0]!;
    expect(statSync(plain.pathOf(first.hash)).size).toBe(first.size);
  });

  it('refuses to start with encryption on and a bad key, naming the variable and what is allowed', async () => {
    const bad = await runCli(
      ['migrate'],
      cleanEnv({
        ...env,
        OXICLOUD_STORAGE_ENCRYPTION_KEY: randomBytes(16).toString('base64'),
      }),
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('oxijobs: invalid configuration');
    expect(bad.stderr).toContain(
      'OXICLOUD_STORAGE_ENCRYPTION_KEY is not a valid key: it decodes to 16 bytes',
    );
    expect(bad.stderr).toContain('exactly 32 bytes');
    const missing = await runCli(['migrate'], cleanEnv({ ...env, OXICLOUD_STORAGE_ENCRYPTION_KEY: '' }));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      'OXICLOUD_STORAGE_ENCRYPTION_KEY (unset) is required when OXICLOUD_STORAGE_ENCRYPTION_ENABLED=true',
    );
  });
});
