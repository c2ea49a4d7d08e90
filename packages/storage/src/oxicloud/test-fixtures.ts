/**
 * Test fixtures of the content adapters on OxiCloud's domain (not exported
 * from the package): rows written the way OxiCloud's own paths write them
 * (fact sheet §3 four-write drive creation, §4 folders and trash, §5 the
 * upload path's manifests, chunk rows and counters), and a harness that runs
 * a real check through `checkJob` and the `RecoverableEngine`.
 */
import { randomBytes } from 'node:crypto';
import {
  type CheckJobHandler,
  type ConsistencyCheck,
  checkJob,
  PgFindingStore,
  type StoredFinding,
} from '@oxicloud/consistency';
import { RecoverableEngine } from '@oxicloud/recoverable';
import type { JobOutcome, Logger } from '@oxicloud/scheduler';
import type { BlobStorage } from '@oxicloud/tenants';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { categoryOrderFor } from '../content/category-order.js';
import { CDC_CHUNK_SIZES, type FileContent } from '../content/file-content.js';
import { BLAKE3_EMPTY, blake3Hex } from '../hashing/blake3.js';
import type { OxiCloudDatabase } from './database.js';

/** Everything is written this long ago, outside every 1 h grace. */
export const AGE = "now() - interval '2 days'";

/** A check run to its end, and what it recorded. */
export interface RunResult {
  readonly outcome: JobOutcome;
  readonly runId: string;
  readonly status: string;
  readonly stats: Record<string, unknown>;
  readonly findings: StoredFinding[];
}

/** The engine, the findings store and a `Kysely` on OxiCloud's domain, on one test database. */
export interface OxiHarness {
  readonly pool: pg.Pool;
  readonly db: Kysely<OxiCloudDatabase>;
  readonly engine: RecoverableEngine;
  readonly logger: Logger;
  /** Registers `check` (once per name) and runs it to its end through `checkJob`. */
  run(check: ConsistencyCheck, params?: Record<string, unknown>): Promise<RunResult>;
  close(): Promise<void>;
}

export function oxiHarness(pool: pg.Pool): OxiHarness {
  const db = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool }) });
  const lines: Array<Record<string, unknown>> = [];
  const push = (fields: object, msg?: string) => lines.push({ ...fields, msg });
  const logger: Logger = { info: push, warn: push, error: push, debug: () => undefined };
  const findings = new PgFindingStore({ pool });
  const engine = new RecoverableEngine({ pool, logger });
  const registered = new Map<string, CheckJobHandler>();
  return {
    pool,
    db,
    engine,
    logger,
    async run(check, params = {}) {
      if (!registered.has(check.name)) {
        const handler = checkJob(check, { findings, logger });
        engine.register(handler);
        registered.set(check.name, handler);
      }
      const outcome = await engine.runOrResume(check.name, { params });
      const { rows } = await pool.query(
        `SELECT id, status, stats FROM jobs.recoverable_runs
          WHERE job_name = $1 ORDER BY started_at DESC, id DESC LIMIT 1`,
        [check.name],
      );
      const row = rows[0];
      return {
        outcome,
        runId: row.id,
        status: row.status,
        stats: row.stats,
        findings: await findings.list(row.id, { limit: 10_000 }),
      };
    },
    async close() {
      await engine.shutdown({ timeoutMs: 1000 }).catch(() => undefined);
    },
  };
}

/** `kind severity resource_id` of each finding, sorted: what a test compares. */
export const summary = (findings: readonly StoredFinding[]): string[] =>
  findings.map((f) => `${f.kind} ${f.severity} ${f.resourceId}`).sort();

/** One chunk (or legacy blob) object: its key, size and bytes. */
export interface StoredObject {
  readonly hash: string;
  readonly size: number;
  readonly bytes: Buffer;
}

/** A file row written by {@link OxiWorld.upload}. */
export interface Upload {
  readonly fileId: string;
  /** `files.blob_hash`: BLAKE3 of the whole plaintext. */
  readonly hash: string;
  readonly size: number;
  readonly bytes: Buffer;
  /** The content the file reads, as `openFileContent` takes it. */
  readonly content: FileContent;
  /** The objects behind it: the manifest's chunks in order, or the legacy blob. */
  readonly objects: readonly StoredObject[];
}

/** Options of {@link OxiWorld.upload}. */
export interface UploadOptions {
  readonly name: string;
  /** @defaultValue the drive's root folder */
  readonly folderId?: string;
  /** @defaultValue 20 random bytes */
  readonly data?: Buffer;
  /** @defaultValue `application/octet-stream` */
  readonly mime?: string;
  /** A pre-CDC upload: one whole-file blob row (with the content type), no manifest. */
  readonly legacy?: boolean;
  /** Fixed cut points for the fixture's chunking (every chunk but the last exactly this size). @defaultValue 64 KiB */
  readonly chunkSize?: number;
}

/** A personal drive made by the four-write transaction, and an upload path into it. */
export interface OxiWorld {
  readonly userId: string;
  readonly driveId: string;
  readonly rootFolderId: string;
  /** A live folder under `parentId` (default the root). */
  folder(name: string, parentId?: string): Promise<string>;
  /** Trashes a folder the way OxiCloud does: the folder and every live descendant folder and file. */
  trashFolder(folderId: string): Promise<void>;
  /**
   * A file row written the way OxiCloud's upload path writes it: CDC
   * content (a manifest; one new chunk row per distinct chunk with
   * `ref_count` 1, or +1 for one that exists and clearing `orphaned_at`; a
   * manifest that exists already — dedup — gets `ref_count` + 1 and no chunk
   * is touched), or a legacy whole-file blob (`ref_count` + 1 per file). The
   * bytes go to `blobs` when the world has one. Empty data is the empty
   * manifest (no chunk, no blob row); data up to `chunkSize` is one chunk
   * (manifest and blob row under the same hash).
   */
  upload(options: UploadOptions): Promise<Upload>;
}

/** Splits `data` at fixed `chunkSize` cut points (each chunk ≤ 1 MiB, as CDC's). */
function chunksOf(data: Buffer, chunkSize: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0; at < data.length; at += chunkSize) chunks.push(data.subarray(at, at + chunkSize));
  return chunks;
}

/** Creates a user and its personal drive (four writes in one transaction), in `pool`'s database. */
export async function oxiWorld(pool: pg.Pool, blobs?: BlobStorage): Promise<OxiWorld> {
  const tag = randomBytes(4).toString('hex');
  const { rows: users } = await pool.query(
    `INSERT INTO auth.users (username, email, role) VALUES ($1, $2, 'user') RETURNING id`,
    [`u-${tag}`, `u-${tag}@example.test`],
  );
  const userId = users[0].id as string;
  const client = await pool.connect();
  let driveId: string;
  let rootFolderId: string;
  try {
    await client.query('BEGIN');
    const { rows: drives } = await client.query(
      `INSERT INTO storage.drives (kind, default_for_user, policies, created_at)
       VALUES ('personal', $1, '{"include_in_photo_index": true, "include_in_music_index": true}', ${AGE})
       RETURNING id`,
      [userId],
    );
    driveId = drives[0].id;
    const { rows: roots } = await client.query(
      `INSERT INTO storage.folders (name, parent_id, drive_id, created_by, updated_by, created_at)
       VALUES ('Personal', NULL, $1, $2, $2, ${AGE}) RETURNING id`,
      [driveId, userId],
    );
    rootFolderId = roots[0].id;
    await client.query('UPDATE storage.drives SET root_folder_id = $1 WHERE id = $2', [
      rootFolderId,
      driveId,
    ]);
    await client.query(
      `INSERT INTO storage.role_grants (subject_type, subject_id, resource_type, resource_id, role, granted_by)
       VALUES ('user', $1, 'drive', $2, 'owner', $1)`,
      [userId, driveId],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }

  async function upload(options: UploadOptions): Promise<Upload> {
    const data = options.data ?? randomBytes(20);
    const mime = options.mime ?? 'application/octet-stream';
    const folderId = options.folderId ?? rootFolderId;
    const hash = blake3Hex(data);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      let content: FileContent;
      let objects: StoredObject[];
      if (options.legacy) {
        objects = [{ hash, size: data.length, bytes: data }];
        content = { kind: 'legacy', hash, size: data.length };
        await client.query(
          `INSERT INTO storage.blobs (hash, size, ref_count, content_type, created_at)
           VALUES ($1, $2, 1, $3, ${AGE})
           ON CONFLICT (hash) DO UPDATE SET ref_count = storage.blobs.ref_count + 1, orphaned_at = NULL`,
          [hash, data.length, mime],
        );
      } else {
        const chunks = chunksOf(data, options.chunkSize ?? CDC_CHUNK_SIZES.min);
        objects = chunks.map((bytes) => ({ hash: blake3Hex(bytes), size: bytes.length, bytes }));
        content = {
          kind: 'manifest',
          fileHash: hash,
          chunks: objects.map(({ hash: h, size }) => ({ hash: h, size })),
          totalSize: data.length,
        };
        if (data.length === 0 && hash !== BLAKE3_EMPTY)
          throw new Error('BLAKE3 of nothing is not BLAKE3_EMPTY');
        const dedup = await client.query(
          'UPDATE storage.chunk_manifests SET ref_count = ref_count + 1 WHERE file_hash = $1',
          [hash],
        );
        if (dedup.rowCount === 0) {
          // The ingest session: one reference per distinct chunk, then the manifest.
          const distinct = new Map(objects.map((o) => [o.hash, o]));
          for (const o of distinct.values()) {
            await client.query(
              `INSERT INTO storage.blobs (hash, size, ref_count, content_type, created_at)
               VALUES ($1, $2, 1, NULL, ${AGE})
               ON CONFLICT (hash) DO UPDATE SET ref_count = storage.blobs.ref_count + 1, orphaned_at = NULL`,
              [o.hash, o.size],
            );
          }
          await client.query(
            `INSERT INTO storage.chunk_manifests
               (file_hash, chunk_hashes, chunk_sizes, total_size, chunk_count, content_type, ref_count, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, 1, ${AGE})`,
            [hash, objects.map((o) => o.hash), objects.map((o) => o.size), data.length, objects.length, mime],
          );
        }
      }
      if (blobs) for (const o of objects) await blobs.put(o.hash, o.bytes, o.size);
      const { rows } = await client.query(
        `INSERT INTO storage.files (name, folder_id, blob_hash, size, mime_type, drive_id, created_by, updated_by,
                                    created_at, media_sort_date, category_order)
         SELECT $1, d.id, $2, $3, $4, d.drive_id, $5, $5, ${AGE}, ${AGE}, $7 FROM storage.folders d WHERE d.id = $6
         RETURNING id`,
        [options.name, hash, data.length, mime, userId, folderId, categoryOrderFor(options.name, mime)],
      );
      await client.query('COMMIT');
      return { fileId: rows[0].id, hash, size: data.length, bytes: data, content, objects };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  return {
    userId,
    driveId,
    rootFolderId,
    async folder(name, parentId = rootFolderId) {
      const { rows } = await pool.query(
        `INSERT INTO storage.folders (name, parent_id, drive_id, created_by, updated_by, created_at)
         SELECT $1, p.id, p.drive_id, $3, $3, ${AGE} FROM storage.folders p WHERE p.id = $2 RETURNING id`,
        [name, parentId, userId],
      );
      return rows[0].id as string;
    },
    async trashFolder(folderId) {
      await pool.query(
        `WITH root AS (SELECT lpath FROM storage.folders WHERE id = $1),
         sub AS (
           UPDATE storage.folders d
              SET is_trashed = true, trashed_at = ${AGE},
                  original_parent_id = CASE WHEN d.id = $1 THEN d.parent_id END
             FROM root WHERE d.lpath <@ root.lpath AND NOT d.is_trashed
           RETURNING d.id)
         UPDATE storage.files f SET is_trashed = true, trashed_at = ${AGE}
          WHERE f.folder_id IN (SELECT id FROM sub) AND NOT f.is_trashed`,
        [folderId],
      );
    },
    upload,
  };
}
