import { LocalFsBlobStorage, S3BlobStorage } from '@oxicloud/storage';
import {
  createTestDatabase,
  type S3rverProcess,
  startS3rver,
  type TestDatabase,
} from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminClient,
  adminToken,
  type CliProcess,
  freePort,
  killHard,
  type RunJson,
  scratchDir,
  seedOxiCloud,
  serverEnv,
  serverStorageRoot,
  sleep,
  startServer,
} from './fault-support.js';

const JOB = 'storage_migration';
const PARAMS = { target: 's3', batch_size: 5, concurrency: 2, throttle_ms: 80 };
const KILLS = 3;
/** Blob rows (chunks and legacy blobs) the dataset made: set once it is seeded. */
let BLOBS = 0;

async function bytesOf(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function stat(run: RunJson, key: string): number {
  return Number(run.stats[key] ?? 0);
}

/**
 * Issue 4 item 5 as a real process: `oxijobs serve` (serving from local
 * disk, with S3 configured as a migration target on a real s3rver) runs a
 * long storage_migration local → s3 and is killed with SIGKILL mid-run,
 * three times. Each restart shows the run Paused with 'server restart
 * mid-run'; a trigger resumes it from its checkpoint (the count never goes
 * back, at most one batch is re-checked per kill), and at the end every blob is
 * in the bucket exactly once with the same bytes: copied + skipped = blobs.
 * On OxiCloud's domain: every blob row (chunks and legacy blobs), under the
 * same `<aa>/<hash>.blob` key at the bucket's root.
 */
describe('kill -9 during storage_migration local → s3', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof scratchDir>;
  let s3rver: S3rverProcess;
  let server: CliProcess | undefined;
  let local: LocalFsBlobStorage;
  let s3: S3BlobStorage;
  let env: Record<string, string>;
  let port: number;

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    dir = scratchDir('fault-migration');
    local = new LocalFsBlobStorage({ root: serverStorageRoot(dir.path) });
    await seedOxiCloud(db.pool, dir.path, {
      users: 10,
      filesPerDrive: 15,
      multiChunkFileShare: 0.03,
      foldersPerDrive: { min: 2, max: 4 },
      seed: 99,
    });
    const counted = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM storage.blobs');
    BLOBS = counted.rows[0]!.n;
    // Long enough for three kills mid-run (batches of 5, 80 ms apart).
    expect(BLOBS).toBeGreaterThanOrEqual(120);
    s3rver = await startS3rver('oxicloud-fault-migration');
    const s3Options = {
      bucket: s3rver.bucket,
      region: 'us-east-1',
      endpoint: s3rver.endpoint,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
    };
    s3 = new S3BlobStorage(s3Options);
    port = await freePort();
    env = serverEnv({
      databaseUrl: db.url,
      dataDir: dir.path,
      httpPort: port,
      extra: {
        OXICLOUD_STORAGE_BACKEND: 'local',
        OXICLOUD_S3_BUCKET: s3Options.bucket,
        OXICLOUD_S3_ENDPOINT_URL: s3Options.endpoint,
        OXICLOUD_S3_REGION: s3Options.region,
        OXICLOUD_S3_ACCESS_KEY: s3Options.accessKeyId,
        OXICLOUD_S3_SECRET_KEY: s3Options.secretAccessKey,
        OXICLOUD_S3_FORCE_PATH_STYLE: 'true',
      },
    });
  }, 120_000);

  afterAll(async () => {
    if (server) await killHard(server);
    s3?.close();
    await s3rver?.stop();
    await db?.drop();
    dir?.remove();
  });

  it('the run is Paused after each restart, resumes from its checkpoint, and copies every blob once', async () => {
    server = await startServer(env);
    const api = adminClient(`http://127.0.0.1:${port}`, await adminToken(db.pool));
    const { rows } = await db.pool.query<{ n: number; bytes: string }>(
      'SELECT count(*)::int AS n, COALESCE(sum(size), 0)::text AS bytes FROM storage.blobs',
    );
    expect(rows[0]!.n).toBe(BLOBS);

    const started = await api.trigger(JOB, PARAMS);
    expect(started).toMatchObject({ resumed: false, already_running: false });
    const runId = started.run_id;
    let previousCount = 0;
    for (let kill = 1; kill <= KILLS; kill++) {
      // Let the run pass at least one more checkpoint, then a random moment more.
      const deadline = Date.now() + 30_000;
      while (stat(await api.run(JOB, runId), 'count') <= previousCount && Date.now() < deadline)
        await sleep(20);
      await sleep(Math.floor(Math.random() * 300));
      const beforeKill = await api.run(JOB, runId);
      expect(beforeKill.status, 'still running when killed').toBe('Running');
      await killHard(server);
      server = await startServer(env);
      const after = await api.run(JOB, runId);
      expect(after.status).toBe('Paused');
      expect(after.error_message).toBe('server restart mid-run');
      expect(after.pause_reason).toBe('server restart mid-run');
      // The checkpoint survived the kill: the count continues from where it was, never from zero.
      expect(stat(after, 'count')).toBeGreaterThanOrEqual(stat(beforeKill, 'count'));
      expect(stat(after, 'count')).toBeGreaterThan(previousCount);
      expect(stat(after, 'count')).toBeLessThan(BLOBS);
      previousCount = stat(after, 'count');
      const resumed = await api.trigger(JOB);
      expect(resumed).toMatchObject({ run_id: runId, resumed: true });
    }

    const done = await api.waitFor(JOB, runId, ['Completed'], 120_000);
    expect(done.params).toMatchObject(PARAMS);
    const copied = stat(done, 'copied_blobs');
    const skipped = stat(done, 'skipped_blobs');
    expect(stat(done, 'failed_blobs')).toBe(0);
    expect(copied + skipped).toBe(BLOBS);
    expect(stat(done, 'count')).toBe(BLOBS);
    // Only the batch in flight at each kill is re-checked (its blobs already on S3 are skipped, not copied again).
    expect(skipped).toBeLessThanOrEqual(KILLS * PARAMS.batch_size);
    expect(stat(done, 'bytes_copied')).toBeLessThanOrEqual(Number(rows[0]!.bytes));

    // Every blob is in the bucket exactly once, with its size and bytes.
    const objects = await s3.list({ limit: 10_000 });
    expect(objects).toHaveLength(BLOBS);
    const sizes = await db.pool.query<{ hash: string; size: string }>(
      'SELECT hash, size::text FROM storage.blobs',
    );
    const expected = new Map(sizes.rows.map((r) => [r.hash, Number(r.size)]));
    expect(new Set(objects.map((o) => o.hash))).toEqual(new Set(expected.keys()));
    for (const object of objects) expect(object.size, object.hash).toBe(expected.get(object.hash));
    for (const hash of [...expected.keys()].slice(0, 40)) {
      expect((await bytesOf(await s3.get(hash))).equals(await bytesOf(await local.get(hash))), hash).toBe(
        true,
      );
    }
    const findings = await api.findings(JOB, runId);
    expect(findings.total).toBe(0);
  }, 240_000);
});
