/**
 * A `storage.chunk_manifests` row as `dedup_gc` saves it before deleting it,
 * so that a manifest collected while an upload was attaching to it can be put
 * back (the quarantine of a manifest). Sizes are plaintext bytes.
 */
export interface ChunkManifestRecord {
  /** BLAKE3 of the whole plaintext: what `storage.files.blob_hash` names. */
  readonly fileHash: string;
  /** The chunks in file order, one entry per occurrence (repeats possible). */
  readonly chunkHashes: readonly string[];
  /** Aligned with `chunkHashes`. */
  readonly chunkSizes: readonly number[];
  readonly totalSize: number;
  readonly contentType: string | null;
}
