import type { AudioMetadata, ImageMetadata, MediaFileRepository, MediaFileRow } from '@oxicloud/tenants';
import { type Expression, type Kysely, type SqlBool, sql } from 'kysely';
import { bigintToNumber, type StorageDatabase } from './database.js';

/** Postgres' foreign_key_violation: the file was deleted between the walk and the upsert. */
const FOREIGN_KEY_VIOLATION = '23503';

function isForeignKeyViolation(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { code?: unknown }).code === FOREIGN_KEY_VIOLATION
  );
}

/** `lower(mime_type)` starts with one of the prefixes (no LIKE, so `%` and `_` in a prefix mean themselves). */
function mimeMatches(prefixes: readonly string[]): Expression<SqlBool> {
  if (prefixes.length === 0) return sql<SqlBool>`false`;
  return sql<SqlBool>`(${sql.join(
    prefixes.map((p) => sql`starts_with(lower(mime_type), ${p.toLowerCase()})`),
    sql` OR `,
  )})`;
}

/**
 * {@link MediaFileRepository} on `storage.files`, `storage.audio_metadata`
 * and `storage.image_metadata`. Pages walk the primary key in id order and
 * filter by mime prefix, so a whole run reads each file row once however
 * rare the media files are. Upserts replace every column and stamp
 * `extracted_at = NOW()`; a file deleted meanwhile (foreign-key violation)
 * writes nothing and returns `false`.
 */
export class PgMediaFileRepository implements MediaFileRepository {
  readonly #db: Kysely<StorageDatabase>;

  constructor(db: Kysely<StorageDatabase>) {
    this.#db = db;
  }

  async listFilesAfter(options: {
    readonly mimePrefixes: readonly string[];
    readonly afterId: string | null;
    readonly limit: number;
  }): Promise<MediaFileRow[]> {
    const { afterId } = options;
    const rows = await this.#db
      .selectFrom('storage.files')
      .select(['id', 'blob_hash', 'size', 'mime_type'])
      .where(mimeMatches(options.mimePrefixes))
      .$if(afterId !== null, (qb) => qb.where('id', '>', afterId as string))
      .orderBy('id')
      .limit(options.limit)
      .execute();
    return rows.map((r) => ({
      id: r.id,
      blobHash: r.blob_hash,
      size: bigintToNumber(r.size),
      mimeType: r.mime_type,
    }));
  }

  async countFiles(mimePrefixes: readonly string[]): Promise<number> {
    const row = await this.#db
      .selectFrom('storage.files')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where(mimeMatches(mimePrefixes))
      .executeTakeFirstOrThrow();
    return bigintToNumber(row.n);
  }

  async upsertAudioMetadata(fileId: string, m: AudioMetadata): Promise<boolean> {
    const values = {
      title: m.title,
      artist: m.artist,
      album: m.album,
      genre: m.genre,
      year: m.year,
      track_number: m.trackNumber,
      duration_seconds: m.durationSeconds,
      bitrate: m.bitrate,
      codec: m.codec,
    };
    return this.#upsertUnlessFileGone(() =>
      this.#db
        .insertInto('storage.audio_metadata')
        .values({ file_id: fileId, ...values })
        .onConflict((oc) => oc.column('file_id').doUpdateSet({ ...values, extracted_at: sql`NOW()` }))
        .execute(),
    );
  }

  async upsertImageMetadata(fileId: string, m: ImageMetadata): Promise<boolean> {
    const values = {
      captured_at: m.capturedAt,
      camera_make: m.cameraMake,
      camera_model: m.cameraModel,
      width: m.width,
      height: m.height,
    };
    return this.#upsertUnlessFileGone(() =>
      this.#db
        .insertInto('storage.image_metadata')
        .values({ file_id: fileId, ...values })
        .onConflict((oc) => oc.column('file_id').doUpdateSet({ ...values, extracted_at: sql`NOW()` }))
        .execute(),
    );
  }

  /** Runs an upsert keyed by file id; `false` when the file was deleted meanwhile (the FK refuses the row). */
  async #upsertUnlessFileGone(upsert: () => Promise<unknown>): Promise<boolean> {
    try {
      await upsert();
      return true;
    } catch (error) {
      if (isForeignKeyViolation(error)) return false;
      throw error;
    }
  }
}
