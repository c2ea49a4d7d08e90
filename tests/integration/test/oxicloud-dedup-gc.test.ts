import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultRunArgs, type JobOutcome, type JobOutcomeOk, type Logger } from '@oxicloud/scheduler';
import {
  blake3Hex,
  blobQuarantineOf,
  categoryOrderFor,
  EncryptedBlobStorage,
  type FileContent,
  hashFileContent,
  LocalFsBlobStorage,
  LocalThumbnailStore,
  S3BlobStorage,
  thumbnailPath,
} from '@oxicloud/storage';
import { OxiContentGcRepository } from '@oxicloud/storage/oxicloud';
import {
  type BlobQuarantine,
  type BlobStorage,
  type ContentGcRepository,
  createContentGcJob,
  dedupGcConfigFromEnv,
} from '@oxicloud/tenants';
import {
  createTestDatabase,
  type S3rverProcess,
  startS3rver,
  type TestDatabase,
} from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

/**
 * `dedup_gc` on OxiCloud's storage domain (`createContentGcJob` +
 * `OxiContentGcRepository`) on real Postgres and a real local store and S3
 * store (s3rver): what it collects, the quarantine, uploads racing it in the
 * fact sheet's §5 order, and crashes between its steps.
 */

const CHUNK = 4096;
const DAY = 86_400_000;
const OLD = "now() - interval '2 days'";

type StoreKind = 'local' | 's3' | 'encrypted-local';

interface Store {
  readonly blobs: BlobStorage;
  readonly quarantine: BlobQuarantine;
  close(): Promise<void>;
}

async function openStore(kind: StoreKind, s3: S3rverProcess | undefined): Promise<Store> {
  if (kind === 's3') {
    if (s3 === undefined) throw new Error('the s3 store needs the s3rver');
    const store = new S3BlobStorage({
      bucket: s3.bucket,
      region: 'us-east-1',
      endpoint: s3.endpoint,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
      prefix: `dedup-gc/${randomBytes(4).toString('hex')}/`,
    });
    return { blobs: store, quarantine: store, close: async () => store.close() };
  }
  const root = await mkdtemp(join(tmpdir(), 'oxicloud-dedup-gc-'));
  const local = new LocalFsBlobStorage({ root });
  const blobs = kind === 'local' ? local : new EncryptedBlobStorage({ inner: local, key: randomBytes(32) });
  const quarantine = blobQuarantineOf(blobs);
  if (quarantine === null) throw new Error(`the ${kind} store has no quarantine`);
  return { blobs, quarantine, close: () => rm(root, { recursive: true, force: true }) };
}

/** A content as OxiCloud stores it: fixed-size chunks (≤ 1 MiB like CDC's), or a legacy whole-file blob. */
interface Content {
  readonly hash: string;
  readonly bytes: Buffer;
  readonly chunks: readonly { readonly hash: string; readonly bytes: Buffer }[];
}

function contentOf(bytes: Buffer): Content {
  const chunks = [];
  for (let at = 0; at < bytes.length; at += CHUNK) {
    const part = bytes.subarray(at, at + CHUNK);
    chunks.push({ hash: blake3Hex(part), bytes: part });
  }
  return { hash: blake3Hex(bytes), bytes, chunks };
}

const silent: Logger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
};

describe.each(['local', 's3', 'encrypted-local'] as const)('dedup_gc on OxiCloud (%s store)', (kind) => {
  let s3: S3rverProcess | undefined;
  let db: TestDatabase;
  let kdb: Kysely<never>;
  let store: Store;
  let repository: ContentGcRepository;
  let driveId: string;
  let folderId: string;
  let userId: string;
  const warnings: string[] = [];
  const logger: Logger = {
    ...silent,
    warn: (fields) => warnings.push(String((fields as { event?: string }).event)),
  };

  beforeAll(async () => {
    if (kind === 's3') s3 = await startS3rver();
    db = await createTestDatabase({ domain: 'oxicloud' });
    kdb = new Kysely<never>({ dialect: new PostgresDialect({ pool: db.pool }) });
    repository = new OxiContentGcRepository(kdb as never);
    const tag = randomBytes(4).toString('hex');
    const { rows: users } = await db.pool.query(
      `INSERT INTO auth.users (username, email, role) VALUES ($1, $2, 'user') RETURNING id`,
      [`u-${tag}`, `u-${tag}@example.test`],
    );
    userId = users[0].id;
    // OxiCloud's four-write drive creation, in one transaction (its root-folder check is deferred).
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      const { rows: drives } = await client.query(
        `INSERT INTO storage.drives (kind, default_for_user) VALUES ('personal', $1) RETURNING id`,
        [userId],
      );
      driveId = drives[0].id;
      const { rows: folders } = await client.query(
        `INSERT INTO storage.folders (name, parent_id, drive_id, created_by, updated_by)
         VALUES ('Personal', NULL, $1, $2, $2) RETURNING id`,
        [driveId, userId],
      );
      folderId = folders[0].id;
      await client.query('UPDATE storage.drives SET root_folder_id = $1 WHERE id = $2', [folderId, driveId]);
      await client.query(
        `INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by)
         VALUES ('user', $1, 'drive', $2, 'owner', $1)`,
        [userId, driveId],
      );
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  }, 60_000);
  afterAll(async () => {
    await kdb?.destroy().catch(() => undefined);
    await db?.drop();
    await s3?.stop();
  });
  beforeEach(async () => {
    await store?.close();
    store = await openStore(kind, s3);
    warnings.length = 0;
    await db.pool.query(
      'DELETE FROM storage.files; DELETE FROM storage.chunk_manifests; DELETE FROM storage.blobs',
    );
  });

  const gc = (
    options: {
      quarantine?: BlobQuarantine;
      repository?: ContentGcRepository;
      now?: () => Date;
      thumbnails?: LocalThumbnailStore;
    } = {},
  ) =>
    createContentGcJob({
      repository: options.repository ?? repository,
      quarantine: options.quarantine ?? store.quarantine,
      config: { ...dedupGcConfigFromEnv({}), batchSize: 3 },
      logger,
      ...(options.now === undefined ? {} : { now: options.now }),
      ...(options.thumbnails === undefined ? {} : { thumbnails: options.thumbnails }),
    });
  const run = (job = gc(), force = false): Promise<JobOutcome> =>
    job.run(force ? { force: true } : defaultRunArgs, new AbortController().signal);
  const okRun = async (job = gc(), force = false): Promise<JobOutcomeOk> => {
    const outcome = await run(job, force);
    if (outcome.kind !== 'ok') throw new Error(`dedup_gc failed: ${JSON.stringify(outcome)}`);
    return outcome;
  };
  const rowOf = async (hash: string) =>
    (await db.pool.query('SELECT ref_count, orphaned_at FROM storage.blobs WHERE hash = $1', [hash])).rows[0];
  const manifestOf = async (hash: string) =>
    (await db.pool.query('SELECT ref_count FROM storage.chunk_manifests WHERE file_hash = $1', [hash]))
      .rows[0];
  const quarantined = async () =>
    (await store.quarantine.listQuarantinedBlobs({ limit: 1000 })).map((e) => e.hash);

  /** Writes rows directly, as OxiCloud left them (counts, ages), and the bytes. */
  async function seed(
    content: Content,
    options: { files?: number; manifestRefCount?: number; created?: string; legacy?: boolean } = {},
  ) {
    const created = options.created ?? OLD;
    for (const c of new Map(content.chunks.map((c) => [c.hash, c])).values()) {
      await store.blobs.put(c.hash, c.bytes, c.bytes.length);
    }
    if (options.legacy) {
      await store.blobs.put(content.hash, content.bytes, content.bytes.length);
      await db.pool.query(
        `INSERT INTO storage.blobs (hash, size, ref_count, content_type, created_at, orphaned_at)
         VALUES ($1, $2, $3, 'text/plain', ${created}, CASE WHEN $3 = 0 THEN ${created} END)`,
        [content.hash, content.bytes.length, options.files ?? 0],
      );
    } else {
      for (const c of new Set(content.chunks.map((c) => c.hash))) {
        await db.pool.query(
          `INSERT INTO storage.blobs (hash, size, ref_count, created_at) VALUES ($1, $2, 1, ${created})
           ON CONFLICT (hash) DO UPDATE SET ref_count = storage.blobs.ref_count + 1, orphaned_at = NULL`,
          [c, content.chunks.find((x) => x.hash === c)!.bytes.length],
        );
      }
      await db.pool.query(
        `INSERT INTO storage.chunk_manifests
           (file_hash, chunk_hashes, chunk_sizes, total_size, chunk_count, ref_count, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, ${created})`,
        [
          content.hash,
          content.chunks.map((c) => c.hash),
          content.chunks.map((c) => c.bytes.length),
          content.bytes.length,
          content.chunks.length,
          options.manifestRefCount ?? options.files ?? 0,
        ],
      );
    }
    for (let i = 0; i < (options.files ?? 0); i++) await insertFile(content);
  }

  async function insertFile(content: Content): Promise<string> {
    const { rows } = await db.pool.query(
      `INSERT INTO storage.files (name, folder_id, blob_hash, size, drive_id, created_by, updated_by, category_order)
       VALUES ($1, $2, $3, $4, $5, $6, $6, ${categoryOrderFor('f', 'application/octet-stream')}) RETURNING id`,
      [`f-${randomBytes(6).toString('hex')}`, folderId, content.hash, content.bytes.length, driveId, userId],
    );
    return rows[0].id;
  }

  /**
   * An upload in the fact sheet's §5 order, each step its own statement:
   * the bytes ("already exists" = identical, skipped), one reference per
   * distinct chunk (+1 clearing orphaned_at, or a new row), the manifest
   * (+1 on conflict; a dedup hit releases the chunk references), the file row.
   * `pause` holds the upload after one step until the promise it returns settles.
   */
  async function upload(
    content: Content,
    pause?: { readonly after: 'bytes' | 'manifest'; readonly until: () => Promise<unknown> },
  ): Promise<void> {
    const distinct = [...new Map(content.chunks.map((c) => [c.hash, c])).values()];
    for (const c of distinct) {
      if (!(await store.blobs.exists(c.hash))) await store.blobs.put(c.hash, c.bytes, c.bytes.length);
    }
    if (pause?.after === 'bytes') await pause.until();
    for (const c of distinct) {
      await db.pool.query(
        `INSERT INTO storage.blobs (hash, size, ref_count) VALUES ($1, $2, 1)
         ON CONFLICT (hash) DO UPDATE SET ref_count = storage.blobs.ref_count + 1, orphaned_at = NULL`,
        [c.hash, c.bytes.length],
      );
    }
    const { rows } = await db.pool.query(
      `INSERT INTO storage.chunk_manifests (file_hash, chunk_hashes, chunk_sizes, total_size, chunk_count, ref_count)
       VALUES ($1, $2, $3, $4, $5, 1)
       ON CONFLICT (file_hash) DO UPDATE SET ref_count = storage.chunk_manifests.ref_count + 1
       RETURNING (xmax = 0) AS inserted`,
      [
        content.hash,
        content.chunks.map((c) => c.hash),
        content.chunks.map((c) => c.bytes.length),
        content.bytes.length,
        content.chunks.length,
      ],
    );
    if (!rows[0].inserted) {
      for (const c of distinct) {
        await db.pool.query(
          `UPDATE storage.blobs SET ref_count = greatest(ref_count - 1, 0),
                  orphaned_at = CASE WHEN ref_count - 1 <= 0 THEN now() ELSE orphaned_at END
            WHERE hash = $1`,
          [c.hash],
        );
      }
    }
    if (pause?.after === 'manifest') await pause.until();
    await insertFile(content);
  }

  /** Every file row's bytes, read as OxiCloud reads them (manifest first, else legacy), hash to its blob_hash. */
  async function expectEveryFileReadable(): Promise<number> {
    const { rows } = await db.pool.query(
      `SELECT f.blob_hash, f.size, m.chunk_hashes, m.chunk_sizes
         FROM (SELECT DISTINCT blob_hash, size FROM storage.files) f
         LEFT JOIN storage.chunk_manifests m ON m.file_hash = f.blob_hash`,
    );
    for (const row of rows) {
      const content: FileContent =
        row.chunk_hashes === null
          ? { kind: 'legacy', hash: row.blob_hash, size: Number(row.size) }
          : {
              kind: 'manifest',
              fileHash: row.blob_hash,
              chunks: row.chunk_hashes.map((hash: string, i: number) => ({
                hash,
                size: Number(row.chunk_sizes[i]),
              })),
              totalSize: Number(row.size),
            };
      const digest = await hashFileContent(content, store.blobs).catch((error: unknown) => {
        throw new Error(`file content ${row.blob_hash} is not readable: ${String(error)}`);
      });
      expect(digest.hash).toBe(row.blob_hash);
    }
    return rows.length;
  }

  it("collects what OxiCloud's GC collects and nothing live; a manifest at ref_count 0 with a file is kept and reported", async () => {
    const shared = randomBytes(CHUNK);
    const live = contentOf(Buffer.concat([shared, randomBytes(CHUNK), randomBytes(100)]));
    const dead = contentOf(Buffer.concat([shared, randomBytes(CHUNK + 7)]));
    const lowCount = contentOf(Buffer.concat([randomBytes(CHUNK), randomBytes(9)]));
    const young = contentOf(randomBytes(2 * CHUNK));
    const oneChunk = contentOf(randomBytes(300));
    const legacyDead = contentOf(randomBytes(500));
    const legacyLive = contentOf(randomBytes(600));
    await seed(live, { files: 2 });
    await seed(dead, { manifestRefCount: 3 }); // drifted high after a bulk delete: no file left
    await seed(lowCount, { files: 1, manifestRefCount: 0 });
    await seed(young, { created: 'now()' });
    await seed(oneChunk, { files: 1 });
    await seed(legacyDead, { legacy: true, files: 0 });
    await seed(legacyLive, { legacy: true, files: 1 });

    const first = await okRun();
    expect(first.extra).toMatchObject({
      manifests_deleted: 1,
      manifests_referenced: 1,
      blobs_deleted: 1,
      quarantined: 1,
      restored: 0,
      purged: 0,
      forced: false,
      grace_seconds: 3600,
      quarantine_grace_seconds: 7 * 86_400,
    });
    expect(first.count).toBe(1);
    expect(warnings).toContain('dedup_gc.manifest_count_low');
    expect(await manifestOf(dead.hash)).toBeUndefined();
    expect(await manifestOf(lowCount.hash)).toEqual({ ref_count: 0 });
    expect(await manifestOf(young.hash)).toBeDefined();
    // The dead manifest's own chunk reached 0 (stamped now: inside the grace); the shared one is at 1.
    const deadOwn = [...new Set(dead.chunks.slice(1).map((c) => c.hash))];
    for (const hash of deadOwn) {
      expect(await rowOf(hash)).toMatchObject({ ref_count: 0 });
      expect((await rowOf(hash)).orphaned_at).not.toBeNull();
    }
    expect(await rowOf(live.chunks[0]!.hash)).toMatchObject({ ref_count: 1 });
    expect(await rowOf(legacyDead.hash)).toBeUndefined();
    expect(await store.blobs.exists(legacyDead.hash)).toBe(false);
    expect(await quarantined()).toEqual([legacyDead.hash]);

    // force: grace 0 takes the young manifest and every chunk at 0 too.
    const forced = await okRun(gc(), true);
    expect(forced.extra).toMatchObject({ manifests_deleted: 1, forced: true, grace_seconds: 0 });
    const gone = [...deadOwn, ...new Set(young.chunks.map((c) => c.hash))];
    expect(forced.count).toBe(gone.length);
    for (const hash of gone) expect(await rowOf(hash)).toBeUndefined();
    expect((await quarantined()).sort()).toEqual([legacyDead.hash, ...gone].sort());
    expect(await expectEveryFileReadable()).toBe(4);

    // A row for a quarantined hash again (an upload that found the bytes before the move): restored.
    await db.pool.query(`INSERT INTO storage.blobs (hash, size, ref_count) VALUES ($1, $2, 1)`, [
      legacyDead.hash,
      legacyDead.bytes.length,
    ]);
    await insertFile(legacyDead);
    const again = await okRun();
    expect(again.extra).toMatchObject({ restored: 1, resumed: 1, blobs_deleted: 0 });
    expect(await expectEveryFileReadable()).toBe(5);

    // Past the quarantine grace, what nothing wants is purged; nothing live is touched.
    const later = await okRun(gc({ now: () => new Date(Date.now() + 8 * DAY) }));
    expect(later.extra).toMatchObject({ purged: gone.length, manifests_purged: 2 });
    expect(await quarantined()).toEqual([]);
    expect(await expectEveryFileReadable()).toBe(5);
  });

  it('removes the thumbnails of the contents it collected, after the rows and bytes; those in use stay', async () => {
    const root = await mkdtemp(join(tmpdir(), 'oxicloud-dedup-gc-thumbs-'));
    try {
      const thumbnails = new LocalThumbnailStore(root);
      const dead = contentOf(randomBytes(2 * CHUNK + 5));
      const legacyDead = contentOf(randomBytes(500));
      const live = contentOf(randomBytes(700));
      await seed(dead, { manifestRefCount: 1 });
      await seed(legacyDead, { legacy: true, files: 0 });
      await seed(live, { legacy: true, files: 1 });
      for (const c of [dead, legacyDead, live]) {
        for (const size of ['icon', 'preview'] as const) {
          const path = thumbnailPath(root, size, c.hash, 'webp');
          await mkdir(join(path, '..'), { recursive: true });
          await writeFile(path, Buffer.alloc(64));
        }
      }
      const outcome = await okRun(gc({ thumbnails }));
      expect(outcome.extra).toMatchObject({ manifests_deleted: 1, blobs_deleted: 1, thumbnails_removed: 4 });
      expect(await thumbnails.stat(dead.hash)).toBeNull();
      expect(await thumbnails.stat(legacyDead.hash)).toBeNull();
      expect((await thumbnails.stat(live.hash))?.files).toHaveLength(2);
      // Without the store, nothing under .thumbnails is touched (left to storage_consistency).
      expect((await okRun()).extra).toMatchObject({ thumbnails_removed: 0 });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('loses no bytes against concurrent uploads in the §5 order, re-using the hashes it collects (20 forced runs)', async () => {
    const pool = Array.from({ length: 6 }, () => randomBytes(CHUNK));
    const contents: Content[] = [];
    for (let i = 0; i < 10; i++) {
      const parts = [pool[i % pool.length]!, pool[(i * 3 + 1) % pool.length]!, randomBytes(i * 37 + 1)];
      contents.push(contentOf(Buffer.concat(parts.slice(0, 1 + (i % 3)))));
    }
    contents.push(contentOf(randomBytes(200))); // one chunk: file_hash = chunk hash
    // Contents with a tail chunk of their own (i % 3 ≠ 0): collecting them frees a chunk for certain.
    const withTail = contents.filter((_, i) => i % 3 !== 0);
    const random = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;
    for (const content of contents) await upload(content);

    let deleted = 0;
    let quarantinedTotal = 0;
    let restoredTotal = 0;
    let manifestsRestored = 0;
    for (let iteration = 0; iteration < 20; iteration++) {
      // Every file of X and of Y deleted (a trash purge: the trigger lowers one-chunk counts, the
      // manifests drift high); then, all started at once, two more deletes at random, 8 uploads, half
      // of them of X (the hashes the GC is collecting at that moment), none of Y, and a forced GC.
      const { rows: manifests } = await db.pool.query<{ file_hash: string }>(
        'SELECT file_hash FROM storage.chunk_manifests',
      );
      const attachable = contents.filter((c) => manifests.some((m) => m.file_hash === c.hash));
      const x = random(attachable.length > 0 ? attachable : contents); // a manifest to attach to, if any
      const y = random(withTail.filter((c) => c.hash !== x.hash));
      await db.pool.query('DELETE FROM storage.files WHERE blob_hash = ANY($1)', [[x.hash, y.hash]]);
      const writers: Promise<unknown>[] = [
        db.pool.query(
          'DELETE FROM storage.files WHERE id IN (SELECT id FROM storage.files ORDER BY random() LIMIT 2)',
        ),
      ];
      const others = contents.filter((c) => c.hash !== y.hash && c.hash !== x.hash);
      const collecting = run(gc(), true);
      // The windows no lock covers: bytes found but row not yet in; manifest attached but file row not yet in.
      const until = () => collecting;
      for (let i = 0; i < 8; i++) {
        // Every upload of X waits for the run between two of its steps (which two alternates by
        // iteration); the others run straight through.
        const content = i % 2 === 0 ? x : random(others);
        const after = iteration % 2 === 0 ? ('manifest' as const) : ('bytes' as const);
        const pause = i % 2 === 1 ? undefined : { after, until };
        writers.push(upload(content, pause));
      }
      const outcome = (await Promise.all([collecting, ...writers]))[0] as JobOutcome;
      if (outcome.kind !== 'ok') throw new Error(`dedup_gc run ${iteration}: ${JSON.stringify(outcome)}`);
      deleted += outcome.count;
      quarantinedTotal += Number(outcome.extra?.['quarantined'] ?? 0);
      restoredTotal += Number(outcome.extra?.['restored'] ?? 0);
      manifestsRestored += Number(outcome.extra?.['manifests_restored'] ?? 0);
      if (iteration % 4 === 3) for (const content of contents) await upload(content); // bring every hash back
    }
    const final = await okRun(gc(), true);
    restoredTotal += Number(final.extra?.['restored'] ?? 0);
    manifestsRestored += Number(final.extra?.['manifests_restored'] ?? 0);
    expect(deleted).toBeGreaterThan(0);
    expect(quarantinedTotal).toBeGreaterThan(0);
    // How often the windows were hit (restores) depends on the interleaving; the directed test
    // below covers each window deterministically.
    const files = await expectEveryFileReadable();
    expect(files).toBeGreaterThan(0);
    console.info(
      `${kind}: ${deleted} blobs collected, ${quarantinedTotal} quarantined, ${restoredTotal} restored, ${manifestsRestored} manifests restored, ${files} contents readable`,
    );
  }, 120_000);

  it('closes the windows no lock covers: an upload between its steps while a forced GC runs', async () => {
    const outcomes: JobOutcomeOk[] = [];
    const gcNow = async () => {
      outcomes.push(await okRun(gc(), true));
    };
    // 1. Attached to an old manifest nobody names (a dedup hit), not yet its file row: the GC deletes the
    //    manifest and collects its chunks (OxiCloud's GC does too, and the file never reads again).
    const attached = contentOf(randomBytes(2 * CHUNK + 5));
    await seed(attached, { manifestRefCount: 1 });
    await upload(attached, { after: 'manifest', until: gcNow });
    expect(outcomes[0]?.extra).toMatchObject({ manifests_deleted: 1, blobs_deleted: 3, quarantined: 3 });
    expect(await manifestOf(attached.hash)).toBeUndefined();
    await expect(expectEveryFileReadable()).rejects.toThrow(/not readable/);

    // 2. Found the bytes in place (loose chunks at ref_count 0, as an aborted upload leaves them), then
    //    the GC moved them and deleted the rows before the upload's rows went in. Meanwhile that run's
    //    sweep put the manifest of 1 back (files name it again): its row, its chunks' rows, its bytes.
    const adopted = contentOf(randomBytes(CHUNK + 9));
    for (const c of adopted.chunks) {
      await store.blobs.put(c.hash, c.bytes, c.bytes.length);
      await db.pool.query(
        'INSERT INTO storage.blobs (hash, size, ref_count, orphaned_at) VALUES ($1, $2, 0, now())',
        [c.hash, c.bytes.length],
      );
    }
    await upload(adopted, { after: 'bytes', until: gcNow });
    expect(outcomes[1]?.extra).toMatchObject({
      manifests_restored: 1,
      restored: 3,
      blobs_deleted: 2,
      quarantined: 2,
    });
    expect(await manifestOf(attached.hash)).toEqual({ ref_count: 1 });
    for (const c of attached.chunks) {
      expect(await rowOf(c.hash)).toMatchObject({ ref_count: 1, orphaned_at: null });
    }
    expect(await rowOf(adopted.chunks[0]!.hash)).toMatchObject({ ref_count: 1 });
    expect(await store.blobs.exists(adopted.chunks[0]!.hash)).toBe(false);
    await expect(expectEveryFileReadable()).rejects.toThrow(/not readable/);

    // The next run moves the adopted bytes back; then both read, and a forced run collects nothing.
    await gcNow();
    expect(outcomes[2]?.extra).toMatchObject({ manifests_restored: 0, restored: 2, blobs_deleted: 0 });
    expect(await expectEveryFileReadable()).toBe(2);
    await gcNow();
    expect(outcomes[3]?.extra).toMatchObject({ manifests_deleted: 0, blobs_deleted: 0 });
    expect(await expectEveryFileReadable()).toBe(2);
  });

  /**
   * A quarantine that "dies" once `alive` says so: that call and every later
   * one reject, after the calls already in flight have settled (a process
   * killed right after them).
   */
  function killable(inner: BlobQuarantine, alive: (method: string) => boolean): BlobQuarantine {
    const inFlight = new Set<Promise<unknown>>();
    let dead = false;
    return new Proxy(inner, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          if (dead || !alive(String(property))) {
            dead = true;
            await Promise.allSettled([...inFlight]);
            throw new Error('killed');
          }
          const call = value.apply(target, args) as Promise<unknown>;
          inFlight.add(call);
          try {
            return await call;
          } finally {
            inFlight.delete(call);
          }
        };
      },
    });
  }

  it('killed between its steps, a rerun loses no bytes and finishes', async () => {
    const dead = Array.from({ length: 4 }, () => contentOf(randomBytes(CHUNK + 11)));
    const live = contentOf(randomBytes(3 * CHUNK));
    for (const content of dead) await seed(content);
    await seed(live, { files: 1 });
    const doomedChunks = new Set(dead.flatMap((c) => c.chunks.map((x) => x.hash)));

    // 1. Killed while saving manifests (phase 1, before its commit): nothing deleted.
    let saves = 0;
    const killedInPhase1 = await run(
      gc({ quarantine: killable(store.quarantine, (m) => m !== 'saveManifest' || saves++ < 1) }),
      true,
    );
    expect(killedInPhase1.kind).toBe('err');
    for (const content of dead) expect(await manifestOf(content.hash)).toBeDefined();

    // 2. Killed in phase 2 after two moves, before the rows' delete commits.
    let moves = 0;
    const killedMidMove = await run(
      gc({ quarantine: killable(store.quarantine, (m) => m !== 'quarantineBlob' || moves++ < 2) }),
      true,
    );
    expect(killedMidMove.kind).toBe('err');
    const stranded = await quarantined();
    expect(stranded.length).toBe(2);
    for (const hash of stranded) expect(await rowOf(hash)).toBeDefined(); // rolled back: rows kept
    // An upload of one stranded chunk's content now would read it; the rerun's sweep puts it back.

    // 3. Killed right after phase 2's commit, before its re-check; meanwhile an upload that had found
    //    the bytes in place before the move upserts its row (it does not write the bytes again).
    let commits = 0;
    const afterCommit: ContentGcRepository = new Proxy(repository, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property === 'wantedHashes') {
          return (hashes: string[]) =>
            commits++ === 0 ? value.call(target, hashes) : Promise.reject(new Error('killed'));
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const killedAfterCommit = await run(gc({ repository: afterCommit }), true);
    expect(killedAfterCommit.kind).toBe('err');
    const inQuarantine = new Set(await quarantined());
    // A content one of whose chunks the committed batch moved (its row is gone).
    const adopted = dead.find((c) => c.chunks.some((x) => inQuarantine.has(x.hash)))!;
    expect(adopted).toBeDefined();
    for (const hash of inQuarantine) expect(await rowOf(hash)).toBeUndefined();
    for (const c of new Set(adopted.chunks.map((x) => x.hash))) {
      await db.pool.query(
        `INSERT INTO storage.blobs (hash, size, ref_count) VALUES ($1, $2, 1)
         ON CONFLICT (hash) DO UPDATE SET ref_count = storage.blobs.ref_count + 1, orphaned_at = NULL`,
        [c, adopted.chunks.find((x) => x.hash === c)!.bytes.length],
      );
    }
    await db.pool.query(
      `INSERT INTO storage.chunk_manifests (file_hash, chunk_hashes, chunk_sizes, total_size, chunk_count, ref_count)
       VALUES ($1, $2, $3, $4, $5, 1)`,
      [
        adopted.hash,
        adopted.chunks.map((c) => c.hash),
        adopted.chunks.map((c) => c.bytes.length),
        adopted.bytes.length,
        adopted.chunks.length,
      ],
    );
    await insertFile(adopted);

    // The rerun finishes: the adopted content is back and readable, the rest collected into the quarantine.
    const rerun = await okRun(gc(), true);
    expect(Number(rerun.extra?.['resumed'])).toBeGreaterThan(0);
    expect(await expectEveryFileReadable()).toBe(2);
    const adoptedChunks = new Set(adopted.chunks.map((c) => c.hash));
    const rest = [...doomedChunks].filter((h) => !adoptedChunks.has(h)).sort();
    expect((await quarantined()).sort()).toEqual(rest);
    for (const hash of rest) expect(await rowOf(hash)).toBeUndefined();
    // Nothing lost: every collected chunk is still whole in the quarantine, restorable by a move.
    for (const hash of rest) {
      expect(await store.quarantine.restoreBlob(hash)).toBe(true);
      const bytes = dead.flatMap((c) => c.chunks).find((c) => c.hash === hash)!.bytes;
      const digest = await hashFileContent({ kind: 'legacy', hash, size: bytes.length }, store.blobs);
      expect(digest.hash).toBe(hash);
    }
  });
});
