import type { Readable } from 'node:stream';
import type {
  AudioMetadata,
  BlobStorage,
  ImageMetadata,
  MediaFileRepository,
  MediaFileRow,
} from '@oxicloud/tenants';
import { type Expression, type Kysely, type SqlBool, sql } from 'kysely';
import type { FileContent } from '../content/file-content.js';
import { manifestContent } from '../content/file-content.js';
import { openFileContent } from '../content/open-file-content.js';
import { bigintToNumber } from '../postgres/database.js';
import { StorageError } from '../storage-error.js';
import { PLACEHOLDER_HASH } from './content-sql.js';
import type { OxiCloudDatabase } from './database.js';

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
    prefixes.map((p) => sql`starts_with(lower(f.mime_type), ${p.toLowerCase()})`),
    sql` OR `,
  )})`;
}

/**
 * A media file as {@link OxiMediaFileRepository} lists it: the port's row
 * plus how its bytes are read on OxiCloud's domain.
 */
export interface OxiMediaFileRow extends MediaFileRow {
  /**
   * The file's content (fact sheet §5): through its manifest (every new
   * upload, multi-chunk or not) or the legacy whole-file blob; `null` when
   * neither exists (or the placeholder hash): there are no bytes to read.
   * Read it with `openFileContent(content, blobs)`.
   */
  readonly content: FileContent | null;
}

interface ContentRowJson {
  blob_hash: string;
  m_file_hash: string | null;
  m_chunk_hashes: string[] | null;
  m_chunk_sizes: string[] | null;
  m_total_size: string | null;
  m_chunk_count: number | null;
  legacy_size: string | null;
}

function contentOf(r: ContentRowJson): FileContent | null {
  if (r.blob_hash === PLACEHOLDER_HASH) return null;
  if (r.m_file_hash !== null) {
    return manifestContent({
      fileHash: r.m_file_hash,
      chunkHashes: r.m_chunk_hashes ?? [],
      chunkSizes: (r.m_chunk_sizes ?? []).map(bigintToNumber),
      totalSize: bigintToNumber(r.m_total_size),
      chunkCount: r.m_chunk_count ?? 0,
    });
  }
  if (r.legacy_size !== null)
    return { kind: 'legacy', hash: r.blob_hash, size: bigintToNumber(r.legacy_size) };
  return null;
}

/** The content columns of a file row `f`: its manifest `m` (if any), else its legacy blob `b`. */
const CONTENT_COLUMNS = sql`f.blob_hash, m.file_hash AS m_file_hash, m.chunk_hashes AS m_chunk_hashes,
  m.chunk_sizes::text[] AS m_chunk_sizes, m.total_size::text AS m_total_size, m.chunk_count AS m_chunk_count,
  b.size::text AS legacy_size`;
const CONTENT_JOINS = sql`LEFT JOIN storage.chunk_manifests m ON m.file_hash = f.blob_hash
  LEFT JOIN storage.blobs b ON b.hash = f.blob_hash AND m.file_hash IS NULL`;

/**
 * {@link MediaFileRepository} on OxiCloud's domain (`reextract_audio`,
 * `reextract_image`). Pages walk `storage.files` by primary key in id order,
 * filtered by mime prefix (trashed included);
 * each row also carries its {@link OxiMediaFileRow.content}.
 *
 * Writes go to OxiCloud's tables, keyed by `file_id` (insert, or update on
 * conflict); a file deleted meanwhile (foreign-key violation) writes nothing
 * and returns `false`:
 * - `audio.file_metadata`: `title, artist, album, genre, year` as named;
 *   `trackNumber` → `track_number`; `durationSeconds` → `duration_secs`
 *   rounded to whole seconds (0 when unknown: the column is NOT NULL
 *   DEFAULT 0); `bitrate` → `bitrate`; `codec` → `format`; `updated_at :=
 *   now()`. `album_artist`, `disc_number`, `sample_rate`, `channels` have
 *   no port field: left as they are (NULL on insert).
 * - `storage.file_metadata`: `capturedAt` → `captured_at` (OxiCloud's
 *   trigger then sets `files.media_sort_date`), `cameraMake`, `cameraModel`,
 *   `width`, `height`. `latitude`, `longitude`, `orientation` have no port
 *   field: left as they are.
 * - The port's "sets `extracted_at` to now" has no column on either table
 *   (audio's `updated_at` stands in for it; images have only `created_at`):
 *   dropped.
 *
 * The re-extraction job reads a file's bytes with `blobs.get(blobHash)`,
 * which on OxiCloud's domain is only right for legacy and one-chunk files
 * (a multi-chunk file's hash has no object, §9): it is given
 * {@link contentReader} instead of the bare blob store (the server's
 * `storageDomainAdapters(...).mediaBytes`).
 */
export class OxiMediaFileRepository implements MediaFileRepository {
  readonly #db: Kysely<OxiCloudDatabase>;

  constructor(db: Kysely<OxiCloudDatabase>) {
    this.#db = db;
  }

  async listFilesAfter(options: {
    readonly mimePrefixes: readonly string[];
    readonly afterId: string | null;
    readonly limit: number;
  }): Promise<OxiMediaFileRow[]> {
    const { afterId } = options;
    const { rows } = await sql<
      ContentRowJson & { id: string; size: string; mime_type: string }
    >`SELECT f.id::text AS id, f.size::text AS size, f.mime_type, ${CONTENT_COLUMNS}
        FROM storage.files f ${CONTENT_JOINS}
       WHERE ${mimeMatches(options.mimePrefixes)}
         ${afterId === null ? sql`` : sql`AND f.id > ${afterId}::uuid`}
       ORDER BY f.id
       LIMIT ${options.limit}`.execute(this.#db);
    return rows.map((r) => ({
      id: r.id,
      blobHash: r.blob_hash,
      size: bigintToNumber(r.size),
      mimeType: r.mime_type,
      content: contentOf(r),
    }));
  }

  async countFiles(mimePrefixes: readonly string[]): Promise<number> {
    const { rows } = await sql<{ n: string }>`
      SELECT count(*) AS n FROM storage.files f WHERE ${mimeMatches(mimePrefixes)}`.execute(this.#db);
    return bigintToNumber(rows[0]?.n ?? 0);
  }

  /**
   * The content a file with `blob_hash = hash` reads (its manifest, else the
   * legacy blob); `null` when there is none.
   */
  async contentOf(hash: string): Promise<FileContent | null> {
    const { rows } = await sql<ContentRowJson>`
      SELECT ${CONTENT_COLUMNS}
        FROM (SELECT ${hash}::varchar(64) AS blob_hash) f ${CONTENT_JOINS}`.execute(this.#db);
    const row = rows[0];
    return row === undefined ? null : contentOf(row);
  }

  /**
   * The whole plaintext of a listed file, read through its `content` (no
   * second lookup; a row without `content` is looked up by `blobHash`): the
   * read {@link OxiMediaFileRepository.contentReader} does by hash (what the
   * server wires the re-extraction jobs with), for one listed row. No
   * content → `StorageError` `NOT_FOUND`.
   */
  async openContent(
    file: MediaFileRow | OxiMediaFileRow,
    blobs: BlobStorage,
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<Readable> {
    const content = 'content' in file ? file.content : await this.contentOf(file.blobHash);
    if (content === null) {
      throw new StorageError(
        'NOT_FOUND',
        `file ${file.id}: no chunk manifest and no blob row for content ${file.blobHash}: no bytes to read`,
      );
    }
    return openFileContent(content, blobs, options);
  }

  /**
   * A `BlobStorage`-shaped reader for the re-extraction job: `get(hash)`
   * streams the whole content a file with `blob_hash = hash` reads (all its
   * manifest's chunks in order, or the legacy blob) with `openFileContent`,
   * one manifest lookup per file. No content → `StorageError` `NOT_FOUND`
   * (the job counts it as `missing_blob`), like a missing object.
   *
   * @example
   * ```ts
   * const files = new OxiMediaFileRepository(db);
   * createReextractAudioJob({ files, blobs: files.contentReader(blobs), logger });
   * ```
   */
  contentReader(blobs: BlobStorage): Pick<BlobStorage, 'get'> {
    return {
      get: async (hash) => {
        const content = await this.contentOf(hash);
        if (content === null) {
          throw new StorageError(
            'NOT_FOUND',
            `no chunk manifest and no blob row for content ${hash}: the file has no bytes to read`,
          );
        }
        return openFileContent(content, blobs);
      },
    };
  }

  async upsertAudioMetadata(fileId: string, m: AudioMetadata): Promise<boolean> {
    const values = {
      title: m.title,
      artist: m.artist,
      album: m.album,
      genre: m.genre,
      year: m.year,
      track_number: m.trackNumber,
      duration_secs: m.durationSeconds === null ? 0 : Math.round(m.durationSeconds),
      bitrate: m.bitrate,
      format: m.codec,
    };
    return this.#upsertUnlessFileGone(() =>
      this.#db
        .insertInto('audio.file_metadata')
        .values({ file_id: fileId, ...values })
        .onConflict((oc) => oc.column('file_id').doUpdateSet({ ...values, updated_at: sql`now()` }))
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
        .insertInto('storage.file_metadata')
        .values({ file_id: fileId, ...values })
        .onConflict((oc) => oc.column('file_id').doUpdateSet(values))
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
