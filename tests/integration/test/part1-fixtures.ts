/**
 * Row builders for the Part 1 integration tests: direct SQL on the storage
 * domain, so each test states exactly the data it asserts on.
 */

import type { Logger } from '@oxicloud/scheduler';
import { blake3Hex, type StorageDatabase } from '@oxicloud/storage';
import type { BlobStorage } from '@oxicloud/tenants';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';

/** A kysely on the test pool (never `destroy()` it: that would end the test database's pool). */
export function storageDb(pool: pg.Pool): Kysely<StorageDatabase> {
  return new Kysely<StorageDatabase>({ dialect: new PostgresDialect({ pool }) });
}

/** A Date `ms` milliseconds before now. */
export function ago(ms: number): Date {
  return new Date(Date.now() - ms);
}
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

export async function insertUser(pool: pg.Pool, username: string, storageUsedBytes = 0): Promise<string> {
  const { rows } = await pool.query<{ id: string }>(
    'INSERT INTO auth.users (username, storage_used_bytes) VALUES ($1, $2) RETURNING id',
    [username, storageUsedBytes],
  );
  return rows[0]!.id;
}

export async function insertDrive(
  pool: pg.Pool,
  ownerId: string,
  name: string,
  usedBytes = 0,
): Promise<string> {
  const { rows } = await pool.query<{ id: string }>(
    'INSERT INTO storage.drives (owner_id, name, used_bytes) VALUES ($1, $2, $3) RETURNING id',
    [ownerId, name, usedBytes],
  );
  return rows[0]!.id;
}

export async function insertFolder(
  pool: pg.Pool,
  driveId: string,
  parentId: string | null,
  name: string,
  trashedAt: Date | null = null,
): Promise<string> {
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO storage.folders (drive_id, parent_id, name, is_trashed, trashed_at)
     VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    [driveId, parentId, name, trashedAt !== null, trashedAt],
  );
  return rows[0]!.id;
}

/** Inserts a blob row (and its bytes when `storage` is given); returns the BLAKE3 hex key. */
export async function insertBlob(
  pool: pg.Pool,
  content: string,
  options: { storage?: BlobStorage; orphanedAt?: Date } = {},
): Promise<{ hash: string; size: number }> {
  const bytes = new TextEncoder().encode(content);
  const hash = blake3Hex(bytes);
  await pool.query('INSERT INTO storage.blobs (hash, size, orphaned_at) VALUES ($1, $2, $3)', [
    hash,
    bytes.byteLength,
    options.orphanedAt ?? null,
  ]);
  if (options.storage) await options.storage.put(hash, bytes, bytes.byteLength);
  return { hash, size: bytes.byteLength };
}

export async function insertFile(
  pool: pg.Pool | pg.PoolClient,
  file: {
    driveId: string;
    folderId?: string | null;
    name: string;
    hash: string;
    size: number;
    trashedAt?: Date | null;
  },
): Promise<string> {
  const trashedAt = file.trashedAt ?? null;
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO storage.files (drive_id, folder_id, name, blob_hash, size, is_trashed, trashed_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [file.driveId, file.folderId ?? null, file.name, file.hash, file.size, trashedAt !== null, trashedAt],
  );
  return rows[0]!.id;
}

export async function countRows(pool: pg.Pool, table: string, where = 'TRUE', values: unknown[] = []) {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} WHERE ${where}`,
    values,
  );
  return rows[0]!.n;
}

/** One captured log line. */
export interface LogLine {
  readonly level: string;
  readonly fields: Record<string, unknown>;
  readonly message: string | undefined;
}

/** A logger that keeps every line, for assertions. */
export function recordingLogger(): Logger & { readonly lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: string) => (fields: object, message?: string) => {
    lines.push({ level, fields: fields as Record<string, unknown>, message });
  };
  return { lines, info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
}
