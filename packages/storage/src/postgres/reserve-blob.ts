import { type Kysely, sql, type Transaction } from 'kysely';
import { assertBlobHash } from '../blob/blob-hash.js';
import { StorageError } from '../storage-error.js';
import { bigintToNumber, type StorageDatabase } from './database.js';

/** What {@link reserveBlob} found and did. */
export type ReserveBlobStatus =
  /** No row existed: inserted (with the real `ref_count` if files already reference the hash). */
  | 'created'
  /** A live row existed: the bytes are already stored (deduplicated upload). */
  | 'existing'
  /** A row marked as being deleted, not held by `dedup_gc` (a crash left it): unmarked. */
  | 'revived';

/** The result of {@link reserveBlob}. */
export interface ReservedBlob {
  readonly hash: string;
  readonly size: number;
  readonly status: ReserveBlobStatus;
  /**
   * Whether the caller must write the bytes now (`created`, `revived`: GC
   * may have deleted them). `false` for `existing`.
   */
  readonly writeBytes: boolean;
}

/** Options of {@link reserveBlob}. */
export interface ReserveBlobOptions {
  /**
   * How long to wait for a `dedup_gc` transaction that holds the row (it is
   * deleting the bytes) before failing with `BLOB_BEING_DELETED`.
   * @defaultValue 10000
   */
  readonly lockTimeoutMs?: number;
}

const DEFAULT_LOCK_TIMEOUT_MS = 10_000;
/** Insert → row deleted by GC meanwhile → insert again: at most this many rounds. */
const MAX_ROUNDS = 5;

interface LockedRow {
  size: string;
  deleting_at: Date | null;
}

/**
 * The upload side of the blob deletion protocol (migration
 * `0007_blob_deletion_protocol.sql`): call it before writing a blob's bytes
 * and before inserting the file that references it.
 *
 * - No row: inserts one (`created`; the insert trigger gives it the real
 *   `ref_count` and no `orphaned_at` when files already reference the hash).
 * - A live row: locks it and restarts its orphan grace (`existing`).
 * - A row `dedup_gc` is deleting: waits (up to `lockTimeoutMs`) on GC's row
 *   lock; if GC deleted it, inserts a new one (`created`); if it is still
 *   marked but no GC holds it (a crash between GC's steps), unmarks it
 *   (`revived`). GC re-checks the mark under the same lock, so it will not
 *   delete the bytes the caller writes next.
 *
 * Pass a transaction to keep the row locked until the file insert commits:
 * then no `dedup_gc` (not even forced) can mark the blob in between. Called
 * with a plain `Kysely`, it runs its own transaction; a forced GC may then
 * mark the blob before the file insert, which is refused (SQLSTATE `OXB01`):
 * call `reserveBlob` again and retry.
 *
 * @throws StorageError `INVALID_HASH` for a bad key, `INVALID_ARGUMENT` for a
 *   bad size, `SIZE_MISMATCH` when the row has another size,
 *   `BLOB_BEING_DELETED` when GC held the row longer than `lockTimeoutMs`.
 * @example
 * ```ts
 * await db.transaction().execute(async (trx) => {
 *   const blob = await reserveBlob(trx, { hash, size, contentType: 'image/jpeg' });
 *   if (blob.writeBytes) await storage.put(hash, bytes, size);
 *   await trx.insertInto('storage.files').values({ drive_id, name, blob_hash: hash, size }).execute();
 * });
 * ```
 */
export async function reserveBlob(
  db: Kysely<StorageDatabase> | Transaction<StorageDatabase>,
  blob: { readonly hash: string; readonly size: number; readonly contentType?: string | null },
  options: ReserveBlobOptions = {},
): Promise<ReservedBlob> {
  assertBlobHash(blob.hash);
  if (!(Number.isSafeInteger(blob.size) && blob.size >= 0)) {
    throw new StorageError(
      'INVALID_ARGUMENT',
      `reserveBlob size=${blob.size}: expected a whole number of bytes >= 0`,
    );
  }
  const timeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  if (!(Number.isSafeInteger(timeoutMs) && timeoutMs >= 1)) {
    throw new StorageError(
      'INVALID_ARGUMENT',
      `reserveBlob lockTimeoutMs=${timeoutMs}: expected a whole number >= 1`,
    );
  }
  if (db.isTransaction) return reserveIn(db as Transaction<StorageDatabase>, blob, timeoutMs);
  return db.transaction().execute((trx) => reserveIn(trx, blob, timeoutMs));
}

async function reserveIn(
  trx: Transaction<StorageDatabase>,
  blob: { readonly hash: string; readonly size: number; readonly contentType?: string | null },
  timeoutMs: number,
): Promise<ReservedBlob> {
  const { hash, size } = blob;
  const reserved = (status: ReserveBlobStatus): ReservedBlob => ({
    hash,
    size,
    status,
    writeBytes: status !== 'existing',
  });
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const inserted = await sql<{ hash: string }>`
      INSERT INTO storage.blobs (hash, size, content_type) VALUES (${hash}, ${size}, ${blob.contentType ?? null})
      ON CONFLICT (hash) DO NOTHING
      RETURNING hash`.execute(trx);
    if (inserted.rows.length === 1) return reserved('created');
    const row = await lockRow(trx, hash, timeoutMs);
    if (row === null) continue; // GC deleted it while we waited: insert again.
    const rowSize = bigintToNumber(row.size);
    if (rowSize !== size) {
      throw new StorageError(
        'SIZE_MISMATCH',
        `reserveBlob ${hash}: the blob row says ${rowSize} bytes but the upload has ${size}; a hash names one content`,
      );
    }
    await sql`
      UPDATE storage.blobs
         SET deleting_at = NULL,
             orphaned_at = CASE WHEN ref_count = 0 THEN now() ELSE NULL END
       WHERE hash = ${hash}`.execute(trx);
    return reserved(row.deleting_at === null ? 'existing' : 'revived');
  }
  throw new StorageError(
    'BLOB_BEING_DELETED',
    `reserveBlob ${hash}: the blob row was deleted ${MAX_ROUNDS} times while reserving it; retry the upload`,
  );
}

/** Locks the row (waiting at most `timeoutMs` on a GC holding it); `null` when it is gone. */
async function lockRow(
  trx: Transaction<StorageDatabase>,
  hash: string,
  timeoutMs: number,
): Promise<LockedRow | null> {
  const previous = await sql<{ v: string }>`SELECT current_setting('lock_timeout') AS v`.execute(trx);
  await sql`SELECT set_config('lock_timeout', ${`${timeoutMs}ms`}, true)`.execute(trx);
  let rows: LockedRow[];
  try {
    ({ rows } = await sql<LockedRow>`
      SELECT size, deleting_at FROM storage.blobs WHERE hash = ${hash} FOR NO KEY UPDATE`.execute(trx));
  } catch (error) {
    if ((error as { code?: unknown }).code === '55P03') {
      throw new StorageError(
        'BLOB_BEING_DELETED',
        `reserveBlob ${hash}: dedup_gc held the blob row longer than ${timeoutMs} ms (it is deleting it); retry the upload`,
        { cause: error },
      );
    }
    throw error;
  }
  await sql`SELECT set_config('lock_timeout', ${previous.rows[0]?.v ?? '0'}, true)`.execute(trx);
  return rows[0] ?? null;
}
