import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PgFindingStore } from '@oxicloud/consistency';
import { RecoverableEngine } from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import { blake3Hex, EncryptedBlobStorage, LocalFsBlobStorage, S3BlobStorage } from '@oxicloud/storage';
import { OxiBlobWalkRepository, type OxiCloudDatabase } from '@oxicloud/storage/oxicloud';
import {
  type BlobBackendName,
  type BlobStorage,
  createStorageMigrationJob,
  MIGRATION_FAILED_KIND,
  STORAGE_MIGRATION_JOB_NAME,
} from '@oxicloud/tenants';
import {
  createTestDatabase,
  type S3rverProcess,
  startS3rver,
  type TestDatabase,
} from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

/**
 * storage_migration end to end on OxiCloud's domain: real Postgres
 * (`storage.blobs` as OxiCloud keeps it, one row per stored object, walked
 * by `OxiBlobWalkRepository`; `jobs.*`), the real LocalFsBlobStorage in a
 * temp folder, the real S3BlobStorage against s3rver (a real S3-protocol
 * server in its own process), driven through the RecoverableEngine. The
 * fact sheet's rules (§7): every row copied under the identical key, and the
 * target's layout (plaintext or nonce ‖ ciphertext ‖ tag) chosen by the
 * target's own encryption setting, not the source's.
 */

let server: S3rverProcess;
let db: TestDatabase;
let kysely: Kysely<OxiCloudDatabase>;
let folders: string[] = [];
let prefixes = 0;

beforeAll(async () => {
  server = await startS3rver();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});
beforeEach(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  kysely = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
});
afterEach(async () => {
  await db.drop();
  await Promise.all(folders.map((f) => rm(f, { recursive: true, force: true })));
  folders = [];
});

async function localStorage(): Promise<LocalFsBlobStorage> {
  const root = await mkdtemp(join(tmpdir(), 'oxicloud-migration-'));
  folders.push(root);
  return new LocalFsBlobStorage({ root });
}

function s3Storage(): S3BlobStorage {
  return new S3BlobStorage({
    bucket: server.bucket,
    region: 'us-east-1',
    endpoint: server.endpoint,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    forcePathStyle: true,
    // Every test gets its own prefix in the one bucket, so each S3 side starts empty.
    prefix: `migration${++prefixes}/blobs/`,
  });
}

interface Blob {
  readonly hash: string;
  readonly bytes: Buffer;
}

/**
 * `n` blobs of random bytes (1..6000 bytes) with their real BLAKE3 keys, rows in storage.blobs (as CDC chunk
 * rows: `content_type` NULL, `ref_count` 1), bytes on `on`.
 */
async function seedBlobs(n: number, on: BlobStorage): Promise<Blob[]> {
  const blobs: Blob[] = [];
  for (let i = 0; i < n; i++) {
    const bytes = randomBytes(1 + ((i * 977) % 6000));
    blobs.push({ hash: blake3Hex(bytes), bytes });
  }
  for (const blob of blobs) await on.put(blob.hash, blob.bytes, blob.bytes.length);
  await kysely
    .insertInto('storage.blobs')
    .values(blobs.map((b) => ({ hash: b.hash, size: b.bytes.length })))
    .execute();
  return blobs.sort((a, b) => (a.hash < b.hash ? -1 : 1));
}

async function readAll(storage: BlobStorage, hash: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await storage.get(hash)) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** Wraps a backend and counts `put`s per hash; `afterPut` runs after each one. */
function countingPuts(inner: BlobStorage, afterPut?: (total: number) => Promise<void>) {
  const puts = new Map<string, number>();
  let total = 0;
  const put = async (hash: string, data: Parameters<BlobStorage['put']>[1], size?: number) => {
    await inner.put(hash, data, size);
    puts.set(hash, (puts.get(hash) ?? 0) + 1);
    total += 1;
    await afterPut?.(total);
  };
  // A proxy, not a subclass: the backends keep private fields, so every other method runs on `inner`.
  const wrapped = new Proxy(inner, {
    get(target, key) {
      if (key === 'put') return put;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { storage: wrapped, puts };
}

function harness(source: BlobBackendName, backends: Record<BlobBackendName, BlobStorage>) {
  const lines: Array<Record<string, unknown>> = [];
  const push = (fields: object, msg?: string) => lines.push({ ...fields, msg });
  const logger: Logger = { info: push, warn: push, error: push, debug: () => undefined };
  const findings = new PgFindingStore({ pool: db.pool });
  const engine = new RecoverableEngine({ pool: db.pool, logger });
  engine.register(
    createStorageMigrationJob({
      blobs: new OxiBlobWalkRepository(kysely),
      sourceBackend: source,
      resolveBackend: (name) => backends[name],
      findings,
      logger,
    }),
  );
  return { engine, findings, lines };
}

describe('storage_migration local → s3', () => {
  it('copies every blob exactly once with identical bytes; missing and wrong-size blobs are findings', async () => {
    const local = await localStorage();
    const s3 = s3Storage();
    const blobs = await seedBlobs(24, local);
    const [missing, wrongSize] = [blobs[5] as Blob, blobs[17] as Blob];
    await local.delete(missing.hash);
    await db.pool.query('UPDATE storage.blobs SET size = size + 1 WHERE hash = $1', [wrongSize.hash]);
    const target = countingPuts(s3);
    const { engine, findings } = harness('local', { local, s3: target.storage });

    const outcome = await engine.runOrResume(STORAGE_MIGRATION_JOB_NAME, {
      params: { target: 's3', batch_size: 10, concurrency: 3 },
    });
    expect(outcome).toMatchObject({ kind: 'ok', count: 22, extra: { completed: true } });

    const run = await engine.latestRun(STORAGE_MIGRATION_JOB_NAME);
    expect(run?.status).toBe('Completed');
    const copied = blobs.filter((b) => b !== missing && b !== wrongSize);
    expect(run?.stats).toMatchObject({
      count: 22,
      scanned_count: 24,
      copied_blobs: 22,
      skipped_blobs: 0,
      failed_blobs: 2,
      bytes_copied: copied.reduce((n, b) => n + b.bytes.length, 0),
      total_estimate: 24,
      // The blobs were written just now, so the catch-up pass revisits all of them; nothing twice in the stats.
      catch_up_scanned_blobs: 24,
      catch_up_copied_blobs: 0,
    });
    for (const blob of copied) {
      expect(target.puts.get(blob.hash)).toBe(1);
      expect((await readAll(s3, blob.hash)).equals(blob.bytes)).toBe(true);
    }
    expect(await s3.exists(missing.hash)).toBe(false);
    expect(await s3.exists(wrongSize.hash)).toBe(false);

    const stored = await findings.list(run?.run_id as string);
    expect(stored.map((f) => [f.kind, f.severity, f.resourceId, f.detail['reason']]).sort()).toEqual(
      [
        [MIGRATION_FAILED_KIND, 'DataLoss', missing.hash, 'source_missing'],
        [MIGRATION_FAILED_KIND, 'DataLoss', wrongSize.hash, 'size_mismatch'],
      ].sort(),
    );
    s3.close();
  });

  it('pauses on cancel with its cursor and resumes without copying anything twice; count continues', async () => {
    const local = await localStorage();
    const s3 = s3Storage();
    const blobs = await seedBlobs(30, local);
    let engine: RecoverableEngine | undefined;
    // Cancel from inside the run, right after the 7th copy: deterministic, no timing.
    const target = countingPuts(s3, async (total) => {
      if (total === 7) await engine?.cancel(STORAGE_MIGRATION_JOB_NAME);
    });
    const h = harness('local', { local, s3: target.storage });
    engine = h.engine;

    const first = await engine.runOrResume(STORAGE_MIGRATION_JOB_NAME, {
      params: { target: 's3', batch_size: 5, concurrency: 1 },
    });
    expect(first).toMatchObject({ kind: 'ok', extra: { paused: true } });
    const paused = await engine.latestRun(STORAGE_MIGRATION_JOB_NAME);
    expect(paused?.status).toBe('Paused');
    const copiedBeforePause = [...target.puts.keys()].sort();
    expect(copiedBeforePause).toEqual(blobs.slice(0, copiedBeforePause.length).map((b) => b.hash));
    expect(paused?.cursor_hex).toBe(copiedBeforePause.at(-1));
    expect(paused?.stats['count']).toBe(copiedBeforePause.length);
    expect(copiedBeforePause.length).toBeLessThan(30);

    // The engine validates a trigger's params even when it resumes (then keeps the stored ones).
    const second = await engine.runOrResume(STORAGE_MIGRATION_JOB_NAME, { params: { target: 's3' } });
    expect(second).toMatchObject({ kind: 'ok', extra: { completed: true } });
    const done = await engine.latestRun(STORAGE_MIGRATION_JOB_NAME);
    expect(done?.run_id).toBe(paused?.run_id);
    expect(done?.status).toBe('Completed');
    expect(done?.stats).toMatchObject({ count: 30, copied_blobs: 30, skipped_blobs: 0, failed_blobs: 0 });
    expect(target.puts.size).toBe(30);
    expect([...target.puts.values()].every((n) => n === 1)).toBe(true);
    s3.close();
  });

  it('refuses the source backend as target, before any run starts', async () => {
    const local = await localStorage();
    const { engine } = harness('local', { local, s3: s3Storage() });
    await expect(
      engine.trigger(STORAGE_MIGRATION_JOB_NAME, { params: { target: 'local' } }),
    ).rejects.toMatchObject({
      code: 'INVALID_PARAMS',
      message: expect.stringMatching(
        /target "local" is the backend this server serves from.*allowed target: s3/,
      ),
    });
    expect(await engine.latestRun(STORAGE_MIGRATION_JOB_NAME)).toBeNull();
  });
});

describe('storage_migration s3 → local', () => {
  it('copies S3 blobs onto disk, skipping the ones the disk already holds with the right size', async () => {
    const s3 = s3Storage();
    const local = await localStorage();
    const blobs = await seedBlobs(12, s3);
    const present = blobs[3] as Blob;
    await local.put(present.hash, present.bytes, present.bytes.length);
    const target = countingPuts(local);
    const { engine } = harness('s3', { s3, local: target.storage });

    const outcome = await engine.runOrResume(STORAGE_MIGRATION_JOB_NAME, { params: { target: 'local' } });
    expect(outcome).toMatchObject({ kind: 'ok', count: 12, extra: { completed: true } });
    const run = await engine.latestRun(STORAGE_MIGRATION_JOB_NAME);
    expect(run?.stats).toMatchObject({ copied_blobs: 11, skipped_blobs: 1, failed_blobs: 0 });
    expect(target.puts.has(present.hash)).toBe(false);
    for (const blob of blobs) expect((await readAll(local, blob.hash)).equals(blob.bytes)).toBe(true);
    s3.close();
  });
});

describe('storage_migration from an encrypted store: the same key, and the target’s own encryption choice', () => {
  it('into a plain target the objects are plaintext (what OxiCloud’s migration leaves); into an encrypted one, sealed with the target’s key', async () => {
    const disk = await localStorage();
    const source = new EncryptedBlobStorage({ inner: disk, key: randomBytes(32) });
    const blobs = await seedBlobs(6, source);
    // The source holds nonce ‖ ciphertext ‖ tag: 28 bytes more than the row's plaintext size.
    expect((await disk.head(blobs[0]!.hash))?.size).toBe(blobs[0]!.bytes.length + 28);

    const plain = s3Storage();
    const first = harness('local', { local: source, s3: plain });
    expect(
      await first.engine.runOrResume(STORAGE_MIGRATION_JOB_NAME, { params: { target: 's3' } }),
    ).toMatchObject({ kind: 'ok', count: 6, extra: { completed: true } });
    // Every row under its identical key, nothing else, and the bytes as stored are the plaintext.
    expect((await plain.list({ limit: 100 })).map((e) => e.hash).sort()).toEqual(blobs.map((b) => b.hash));
    for (const blob of blobs) {
      expect((await plain.head(blob.hash))?.size).toBe(blob.bytes.length);
      expect((await readAll(plain, blob.hash)).equals(blob.bytes)).toBe(true);
    }
    await first.engine.shutdown({ timeoutMs: 1000 });

    // A second run into a target that will run encrypted, with a key of its own.
    const sealedRaw = s3Storage();
    const targetKey = randomBytes(32);
    const sealed = new EncryptedBlobStorage({ inner: sealedRaw, key: targetKey });
    const second = harness('local', { local: source, s3: sealed });
    expect(
      await second.engine.runOrResume(STORAGE_MIGRATION_JOB_NAME, { params: { target: 's3' } }),
    ).toMatchObject({ kind: 'ok', count: 6, extra: { completed: true } });
    for (const blob of blobs) {
      expect((await sealedRaw.head(blob.hash))?.size).toBe(blob.bytes.length + 28);
      expect((await readAll(sealedRaw, blob.hash)).equals(blob.bytes)).toBe(false);
      const reopened = new EncryptedBlobStorage({ inner: sealedRaw, key: targetKey });
      expect((await readAll(reopened, blob.hash)).equals(blob.bytes)).toBe(true);
    }
    await second.engine.shutdown({ timeoutMs: 1000 });
    plain.close();
    sealedRaw.close();
  });
});
