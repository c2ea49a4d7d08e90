/**
 * The content writer: the bytes of every distinct content through the
 * `BlobStorage` port (each distinct chunk once, each legacy blob once), and
 * the `storage.blobs` and `storage.chunk_manifests` rows with the reference
 * counts OxiCloud's upload path leaves on clean data.
 */
import { BLAKE3_EMPTY, blake3Hex, createBlake3Hasher } from '@oxicloud/storage';
import type { BlobStorage } from '@oxicloud/tenants';
import { DatasetError } from '../errors.js';
import type { SqlClient } from '../sql-client.js';
import { planChunkBytes } from './chunk-plan.js';
import { mimeOf, type OxiCloudDatasetPlan, type PlannedContent } from './plan.js';

/** The hashes of one written content. */
export interface ContentDigest {
  readonly contentNo: number;
  /** `files.blob_hash`: the manifest's `file_hash`, or the legacy blob's hash. */
  readonly fileHash: string;
  /** The manifest's chunks in order (empty for the empty file and for a legacy blob). */
  readonly chunkHashes: readonly string[];
  readonly chunkSizes: readonly number[];
}

/** What {@link writeContentBytes} wrote: one digest per content, and every hash put (for a cleanup). */
export interface WrittenContent {
  readonly digests: ContentDigest[];
  /** Every object put, once each, in write order. */
  readonly written: string[];
  /** Σ sizes of the objects put (the bytes the store holds, as plaintext). */
  readonly bytes: number;
}

/** Runs `put`s with at most `limit` in flight; the first failure is kept and thrown by `drain`. */
class WriteQueue {
  readonly #inFlight = new Set<Promise<void>>();
  #failure: unknown;

  constructor(private readonly limit: number) {}

  async add(write: () => Promise<void>): Promise<void> {
    if (this.#failure !== undefined) return;
    const p: Promise<void> = write()
      .catch((err: unknown) => {
        this.#failure ??= err;
      })
      .finally(() => this.#inFlight.delete(p));
    this.#inFlight.add(p);
    if (this.#inFlight.size >= this.limit) await Promise.race(this.#inFlight);
  }

  async drain(): Promise<void> {
    await Promise.all(this.#inFlight);
    if (this.#failure !== undefined) {
      const err = this.#failure as Error;
      throw new DatasetError('GENERATION_FAILED', `writing blob bytes failed: ${err.message}`, {
        cause: err,
      });
    }
  }
}

/**
 * Generates, hashes and puts the bytes of every content, `concurrency`
 * writes at a time. A multi-chunk file's chunks are put one by one (never
 * the whole file in memory); a chunk another content already put is not put
 * again. `written` is filled before each put, so after a failure it names
 * every object that may exist.
 */
export async function writeContentBytes(
  plan: OxiCloudDatasetPlan,
  blobs: BlobStorage,
  concurrency: number,
  written: string[],
  onProgress: (done: number) => void,
): Promise<WrittenContent> {
  const queue = new WriteQueue(concurrency);
  const seen = new Set<string>();
  const digests: ContentDigest[] = [];
  let bytes = 0;
  const put = async (hash: string, data: Uint8Array): Promise<void> => {
    if (seen.has(hash)) return;
    seen.add(hash);
    written.push(hash);
    bytes += data.length;
    await queue.add(() => blobs.put(hash, data, data.length));
  };
  for (const content of plan.contents) {
    digests.push(await writeOne(content, put));
    onProgress(digests.length);
  }
  await queue.drain();
  const fileHashes = new Set<string>();
  for (const d of digests) {
    if (fileHashes.has(d.fileHash)) {
      throw new DatasetError(
        'GENERATION_FAILED',
        `internal: two planned contents have the same bytes (${d.fileHash}); raise oneChunkSize.min`,
      );
    }
    fileHashes.add(d.fileHash);
  }
  return { digests, written, bytes };
}

async function writeOne(
  content: PlannedContent,
  put: (hash: string, data: Uint8Array) => Promise<void>,
): Promise<ContentDigest> {
  const plan = content.bytes;
  if (content.kind === 'empty' || plan === null) {
    return { contentNo: content.contentNo, fileHash: BLAKE3_EMPTY, chunkHashes: [], chunkSizes: [] };
  }
  if (content.kind === 'legacy') {
    const data = planChunkBytes(plan, 0).bytes;
    const hash = blake3Hex(data);
    await put(hash, data);
    return { contentNo: content.contentNo, fileHash: hash, chunkHashes: [], chunkSizes: [] };
  }
  const hasher = createBlake3Hasher();
  const chunkHashes: string[] = [];
  for (let i = 0; i < plan.chunkSizes.length; i++) {
    const data = planChunkBytes(plan, i).bytes;
    const hash = blake3Hex(data);
    hasher.update(data);
    chunkHashes.push(hash);
    await put(hash, data);
  }
  const fileHash = chunkHashes.length === 1 ? (chunkHashes[0] as string) : hasher.digestHex();
  return { contentNo: content.contentNo, fileHash, chunkHashes, chunkSizes: [...plan.chunkSizes] };
}

/** One `storage.blobs` row as the upload path leaves it. */
interface BlobRow {
  hash: string;
  size: number;
  refCount: number;
  contentType: string | null;
  createdAgo: number;
}

/**
 * Inserts the manifests and the blob rows, `perStatement` rows at a time:
 * - a manifest per content but legacy ones, `ref_count` = its files rows
 *   (trashed included);
 * - a chunk row per distinct chunk, `ref_count` = the manifests listing it
 *   (once per manifest), `content_type` NULL (a one-chunk file's row is its
 *   only chunk);
 * - a legacy row per legacy content, `ref_count` = its files rows,
 *   `content_type` set; the empty file has no blob row.
 * `orphaned_at` stays NULL (every count is > 0).
 */
export async function insertContentRows(
  client: SqlClient,
  plan: OxiCloudDatasetPlan,
  digests: readonly ContentDigest[],
  perStatement: number,
): Promise<{ manifests: number; chunkRows: number; sharedChunks: number; legacyRows: number }> {
  const filesOf = new Map<number, number>();
  for (const f of plan.files) filesOf.set(f.contentNo, (filesOf.get(f.contentNo) ?? 0) + 1);
  const manifests: { d: ContentDigest; c: PlannedContent; refCount: number }[] = [];
  const blobs = new Map<string, BlobRow>();
  for (const d of digests) {
    const c = plan.contents[d.contentNo] as PlannedContent;
    const refCount = filesOf.get(d.contentNo) ?? 0;
    if (c.kind === 'legacy') {
      blobs.set(d.fileHash, {
        hash: d.fileHash,
        size: c.size,
        refCount,
        contentType: mimeOf(c),
        createdAgo: c.createdAgo,
      });
      continue;
    }
    manifests.push({ d, c, refCount });
    const distinct = new Map<string, number>();
    for (const [i, h] of d.chunkHashes.entries()) distinct.set(h, d.chunkSizes[i] as number);
    for (const [hash, size] of distinct) {
      const row = blobs.get(hash);
      if (row) {
        row.refCount++;
        row.createdAgo = Math.max(row.createdAgo, c.createdAgo);
      } else blobs.set(hash, { hash, size, refCount: 1, contentType: null, createdAgo: c.createdAgo });
    }
  }
  for (let at = 0; at < manifests.length; at += perStatement) {
    const part = manifests.slice(at, at + perStatement);
    // Arrays of arrays of different lengths cannot be one SQL array: each manifest's lists travel as JSON.
    await client.query(
      `INSERT INTO storage.chunk_manifests
         (file_hash, chunk_hashes, chunk_sizes, total_size, chunk_count, content_type, ref_count, created_at)
       SELECT t.file_hash,
              ARRAY(SELECT e FROM jsonb_array_elements_text(t.hashes) WITH ORDINALITY AS x(e, i) ORDER BY i),
              ARRAY(SELECT e::bigint FROM jsonb_array_elements_text(t.sizes) WITH ORDINALITY AS x(e, i) ORDER BY i),
              t.total_size, jsonb_array_length(t.hashes), t.content_type, t.ref_count,
              now() - make_interval(secs => t.created_ago)
         FROM unnest($1::text[], $2::jsonb[], $3::jsonb[], $4::bigint[], $5::text[], $6::int[], $7::int[])
              AS t(file_hash, hashes, sizes, total_size, content_type, ref_count, created_ago)`,
      [
        part.map((m) => m.d.fileHash),
        part.map((m) => JSON.stringify(m.d.chunkHashes)),
        part.map((m) => JSON.stringify(m.d.chunkSizes)),
        part.map((m) => m.c.size),
        part.map((m) => mimeOf(m.c)),
        part.map((m) => m.refCount),
        part.map((m) => m.c.createdAgo),
      ],
    );
  }
  const rows = [...blobs.values()];
  for (let at = 0; at < rows.length; at += perStatement) {
    const part = rows.slice(at, at + perStatement);
    await client.query(
      `INSERT INTO storage.blobs (hash, size, ref_count, content_type, created_at)
       SELECT t.hash, t.size, t.ref_count, t.content_type, now() - make_interval(secs => t.created_ago)
         FROM unnest($1::text[], $2::bigint[], $3::int[], $4::text[], $5::int[])
              AS t(hash, size, ref_count, content_type, created_ago)`,
      [
        part.map((r) => r.hash),
        part.map((r) => r.size),
        part.map((r) => r.refCount),
        part.map((r) => r.contentType),
        part.map((r) => r.createdAgo),
      ],
    );
  }
  return {
    manifests: manifests.length,
    chunkRows: rows.filter((r) => r.contentType === null).length,
    sharedChunks: rows.filter((r) => r.contentType === null && r.refCount >= 2).length,
    legacyRows: rows.filter((r) => r.contentType !== null).length,
  };
}
