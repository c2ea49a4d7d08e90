/** One media file of `storage.files` as the re-extraction walks need it. */
export interface MediaFileRow {
  /** File UUID (lowercase, with dashes). */
  readonly id: string;
  /** The blob that holds the bytes (BLAKE3 hex). */
  readonly blobHash: string;
  readonly size: number;
  readonly mimeType: string;
}

/** Audio tags of one file: a row of `storage.audio_metadata`. `null` = the file does not say. */
export interface AudioMetadata {
  readonly title: string | null;
  readonly artist: string | null;
  readonly album: string | null;
  readonly genre: string | null;
  readonly year: number | null;
  readonly trackNumber: number | null;
  readonly durationSeconds: number | null;
  /** Bits per second. */
  readonly bitrate: number | null;
  readonly codec: string | null;
}

/** Capture facts of one image or video: a row of `storage.image_metadata`. `null` = unknown. */
export interface ImageMetadata {
  readonly capturedAt: Date | null;
  readonly cameraMake: string | null;
  readonly cameraModel: string | null;
  readonly width: number | null;
  readonly height: number | null;
}

/**
 * Walks `storage.files` by id for a set of mime-type prefixes and writes the
 * extracted media metadata (`reextract_audio`, `reextract_image`).
 * Keyset pagination: a page holds the files with `id > afterId` (all when
 * `afterId` is `null`) whose `mime_type` starts with one of `mimePrefixes`
 * (for example `audio/`), ascending by id. Trashed files are included: their
 * metadata is still shown once they are restored.
 */
export interface MediaFileRepository {
  listFilesAfter(options: {
    readonly mimePrefixes: readonly string[];
    readonly afterId: string | null;
    readonly limit: number;
  }): Promise<MediaFileRow[]>;
  /** Number of files a full walk over `mimePrefixes` examines. */
  countFiles(mimePrefixes: readonly string[]): Promise<number>;
  /**
   * Inserts or replaces the file's audio tags; sets `extracted_at` to now.
   * @returns `false` when the file was deleted meanwhile (nothing written).
   */
  upsertAudioMetadata(fileId: string, metadata: AudioMetadata): Promise<boolean>;
  /**
   * Inserts or replaces the file's image metadata; sets `extracted_at` to now.
   * @returns `false` when the file was deleted meanwhile (nothing written).
   */
  upsertImageMetadata(fileId: string, metadata: ImageMetadata): Promise<boolean>;
}
