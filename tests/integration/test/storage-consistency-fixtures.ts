import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConsistencyCheck } from '@oxicloud/consistency';
import {
  Blake3WorkerPool,
  blake3Hex,
  categoryOrderFor,
  createBlobHasher,
  LocalFsBlobStorage,
} from '@oxicloud/storage';
import { OxiBlobIndexScan, type OxiCloudDatabase } from '@oxicloud/storage/oxicloud';
import {
  type BlobHasher,
  type BlobIndexScan,
  type BlobStorage,
  createStorageConsistencyCheck,
  type StorageConsistencyCheckOptions,
} from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { oxiWorld } from '../../../packages/storage/src/oxicloud/test-fixtures.js';
import { type ConsistencyHarness, consistencyHarness } from './consistency-fixtures.js';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
export const ago = (ms: number): Date => new Date(Date.now() - ms);

/**
 * A local blob root in a temp folder, a worker pool, OxiCloud's blob index
 * (`OxiBlobIndexScan`): what storage_consistency runs on, on OxiCloud's
 * domain. The blobs are legacy whole-file objects (a `storage.blobs` row with
 * its content type, files naming it by `blob_hash`, no manifest), the one
 * content shape where a row, its object and its files are one hash; the
 * chunked shapes are `packages/storage/src/oxicloud/oxi-blob-index-scan.test.ts`.
 */
export interface BlobWorld {
  readonly root: string;
  readonly storage: LocalFsBlobStorage;
  readonly pool: Blake3WorkerPool;
  readonly hasher: BlobHasher;
  readonly index: OxiBlobIndexScan;
  readonly db: Kysely<OxiCloudDatabase>;
  /** Personal drive (made by the four writes) that test files live in, in its root folder. */
  readonly driveId: string;
  /** A storage_consistency check over (possibly wrapped) ports. */
  check(overrides?: Partial<StorageConsistencyCheckOptions>): ConsistencyCheck;
  close(): Promise<void>;
}

export async function blobWorld(pool: pg.Pool): Promise<BlobWorld> {
  const root = await mkdtemp(join(tmpdir(), 'oxicloud-storage-consistency-'));
  const storage = new LocalFsBlobStorage({ root });
  const workers = new Blake3WorkerPool({ size: 2 });
  const hasher = createBlobHasher(storage, workers);
  const db = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool }) });
  const index = new OxiBlobIndexScan(db);
  const drive = { id: (await oxiWorld(pool)).driveId };
  return {
    root,
    storage,
    pool: workers,
    hasher,
    index,
    db,
    driveId: drive.id,
    check: (overrides = {}) =>
      createStorageConsistencyCheck({
        blobs: storage,
        index,
        hasher,
        ...overrides,
      } as StorageConsistencyCheckOptions),
    async close() {
      await workers.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Options of {@link putBlob}. */
export interface PutBlobOptions {
  /** Write the bytes to the backend. @defaultValue true */
  readonly bytes?: boolean;
  /** mtime of the bytes (local backend only). @defaultValue 2 days ago */
  readonly modifiedAt?: Date | null;
  /** Insert a `storage.blobs` row. @defaultValue true */
  readonly row?: boolean;
  /** Files pointing at the blob (`ref_count` is their number, as OxiCloud's upload path counts). @defaultValue 1 */
  readonly files?: number;
  /** Override of the row's `ref_count`/`orphaned_at` after the files are in. */
  readonly refCount?: number;
  readonly orphanedAt?: Date | null;
  /** A legacy blob's recorded type; `null` makes it a chunk-shaped row. @defaultValue application/octet-stream */
  readonly contentType?: string | null;
  /** @defaultValue 2 days ago */
  readonly createdAt?: Date;
}

/** A blob of the test world. */
export interface TestBlob {
  readonly hash: string;
  readonly bytes: Buffer;
  readonly fileIds: string[];
}

/** Writes a blob (real BLAKE3 key) and/or its row and files, everything two days old unless told. */
export async function putBlob(
  pool: pg.Pool,
  world: Pick<BlobWorld, 'driveId'> & { storage: BlobStorage },
  options: PutBlobOptions & { readonly data?: Buffer } = {},
): Promise<TestBlob> {
  const bytes = options.data ?? randomBytes(64 + Math.floor(Math.random() * 512));
  const hash = blake3Hex(bytes);
  if (options.bytes !== false) {
    await world.storage.put(hash, bytes, bytes.length);
    const mtime = options.modifiedAt === undefined ? ago(2 * DAY) : options.modifiedAt;
    if (mtime !== null && world.storage instanceof LocalFsBlobStorage) {
      await utimes(world.storage.pathOf(hash), mtime, mtime);
    }
  }
  const fileIds: string[] = [];
  if (options.row !== false) {
    const files = options.files ?? 1;
    const createdAt = options.createdAt ?? ago(2 * DAY);
    // No trigger counts an insert on OxiCloud's domain: the row is written with its files' count, and an
    // unreferenced one stamped orphaned, as OxiCloud's decrement leaves it.
    await pool.query(
      `INSERT INTO storage.blobs (hash, size, ref_count, content_type, created_at, orphaned_at)
       VALUES ($1, $2, $3, $4, $5, CASE WHEN $3 = 0 THEN $5::timestamptz END)`,
      [
        hash,
        bytes.length,
        files,
        options.contentType === undefined ? 'application/octet-stream' : options.contentType,
        createdAt,
      ],
    );
    for (let i = 0; i < files; i++) {
      const { rows } = await pool.query(
        `INSERT INTO storage.files (drive_id, folder_id, name, blob_hash, size, created_at, media_sort_date, category_order)
         SELECT d.id, d.root_folder_id, $2, $3, $4, now() - interval '2 days', now() - interval '2 days', ${categoryOrderFor('f', 'application/octet-stream')}
           FROM storage.drives d WHERE d.id = $1
         RETURNING id`,
        [world.driveId, `f-${hash.slice(0, 8)}-${i}`, hash, bytes.length],
      );
      fileIds.push(rows[0].id);
    }
    if (options.refCount !== undefined || options.orphanedAt !== undefined) {
      await pool.query(
        `UPDATE storage.blobs SET ref_count = COALESCE($2, ref_count),
                orphaned_at = CASE WHEN $4 THEN $3 ELSE orphaned_at END WHERE hash = $1`,
        [hash, options.refCount ?? null, options.orphanedAt ?? null, options.orphanedAt !== undefined],
      );
    }
  }
  return { hash, bytes, fileIds: fileIds.sort() };
}

/**
 * Overwrites a local blob's bytes in place with other bytes of the same size
 * (bit rot: only a deep re-hash tells), keeping the key, with the given mtime.
 */
export async function corruptLocalBlob(
  storage: LocalFsBlobStorage,
  hash: string,
  mtime: Date,
): Promise<Buffer> {
  const other = randomBytes((await stat(storage.pathOf(hash))).size);
  await writeFile(storage.pathOf(hash), other);
  await utimes(storage.pathOf(hash), mtime, mtime);
  return other;
}

/** A BlobIndexScan whose `scanRange` runs a hook after Pass 1 read the rows (a race between the passes). */
export function indexWithHook(
  index: BlobIndexScan,
  afterScan: (call: number) => Promise<void>,
): BlobIndexScan {
  let calls = 0;
  return {
    scanRange: async (query) => {
      const result = await index.scanRange(query);
      await afterScan(++calls);
      return result;
    },
    rowsByHash: (hashes) => index.rowsByHash(hashes),
    fileImpact: (hashes, max) => index.fileImpact(hashes, max),
    estimateRows: () => index.estimateRows(),
    sampleRows: (limit, before) => index.sampleRows(limit, before),
  };
}

/**
 * A BlobStorage whose `list` runs hooks: `onCall` when it is asked (with its
 * options), `afterList` after the listing was taken.
 */
export function storageWithListHook(
  storage: BlobStorage,
  hooks: {
    readonly onCall?: (options: { startAfter?: string | null; limit: number }) => void;
    readonly afterList?: () => Promise<void>;
  },
): BlobStorage {
  return new Proxy(storage, {
    get(target, property, receiver) {
      if (property === 'list') {
        return async (options: { startAfter?: string | null; limit: number }) => {
          hooks.onCall?.(options);
          const listed = await target.list(options);
          await hooks.afterList?.();
          return listed;
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** What {@link useBlobWorld} gives each test: the database, the engine harness and the blob world. */
export interface BlobWorldContext {
  db: TestDatabase;
  h: ConsistencyHarness;
  w: BlobWorld;
}

/**
 * The lifecycle every storage_consistency test file shares: one database per
 * file; before each test, empty runs/files/blobs, a fresh engine harness and a
 * fresh blob world; after each, shut the engine down and remove the blob root.
 * Call at the top level of a test file.
 */
export function useBlobWorld(options: { shutdownTimeoutMs?: number } = {}): BlobWorldContext {
  const ctx = {} as BlobWorldContext;
  beforeAll(async () => {
    ctx.db = await createTestDatabase({ domain: 'oxicloud' });
  });
  afterAll(async () => {
    await ctx.db.drop();
  });
  beforeEach(async () => {
    await ctx.db.pool.query(
      'DELETE FROM jobs.recoverable_runs; DELETE FROM storage.files; DELETE FROM storage.blobs; DELETE FROM storage.chunk_manifests',
    );
    ctx.h = consistencyHarness(ctx.db.pool);
    ctx.w = await blobWorld(ctx.db.pool);
  });
  afterEach(async () => {
    await ctx.h.engine.shutdown({ timeoutMs: options.shutdownTimeoutMs ?? 1000 }).catch(() => undefined);
    await ctx.w.close();
  });
  return ctx;
}
