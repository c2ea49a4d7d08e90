import { createBLAKE3, type IHasher } from 'hash-wasm';
import { Prng } from './prng.js';

/** What a generated blob pretends to be. Bytes are not real media, but they start with the right magic. */
export type BlobKind = 'audio' | 'image' | 'pdf' | 'other';

/** Content type and file extension per {@link BlobKind}. */
export const BLOB_KINDS = {
  audio: { contentType: 'audio/mpeg', ext: 'mp3' },
  image: { contentType: 'image/jpeg', ext: 'jpg' },
  pdf: { contentType: 'application/pdf', ext: 'pdf' },
  other: { contentType: 'application/octet-stream', ext: 'bin' },
} as const satisfies Record<BlobKind, { contentType: string; ext: string }>;

// Leading bytes so that a mime sniffer (file-type) sees the declared type:
// an empty ID3v2 tag followed by an MPEG-1 layer III frame header; a JFIF
// JPEG start; a PDF header; and for `other` a prefix no sniffer knows.
const MAGIC: Record<BlobKind, Uint8Array> = {
  audio: Uint8Array.from([0x49, 0x44, 0x33, 0x04, 0, 0, 0, 0, 0, 0, 0xff, 0xfb, 0x90, 0x64]),
  image: Uint8Array.from([
    0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0,
  ]),
  pdf: new TextEncoder().encode('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n'),
  other: new TextEncoder().encode('OXDS'),
};

/** Streams of the PRNG, so independent choices never share numbers. */
export const STREAM = {
  blobMeta: 1,
  blobBytes: 2,
  drives: 3,
  folders: 4,
  faultBytes: 5,
  /** Chunk sizes of an OxiCloud file (`oxicloud/chunk-plan.ts`). */
  chunkPlan: 6,
  /** Bytes of an OxiCloud chunk (`oxicloud/chunk-plan.ts`). */
  chunkBytes: 7,
} as const;

/**
 * The bytes of one generated blob: the kind's magic, then 8 bytes naming
 * `(seed, stream, index)` (so two blobs never collide), then PRNG bytes.
 * Deterministic in its arguments.
 */
export function blobBytes(
  seed: number,
  stream: number,
  index: number,
  size: number,
  kind: BlobKind,
): Uint8Array {
  const words = new Uint32Array(Math.ceil(size / 4) + 1);
  new Prng(seed, stream, index).fill(words);
  const bytes = new Uint8Array(words.buffer, 0, size);
  const magic = MAGIC[kind];
  bytes.set(magic.subarray(0, Math.min(magic.length, size)));
  const id = new DataView(new ArrayBuffer(8));
  id.setUint32(0, seed);
  id.setUint32(4, (index ^ (stream << 28)) >>> 0);
  const idBytes = new Uint8Array(id.buffer);
  const at = magic.length;
  if (at < size) bytes.set(idBytes.subarray(0, Math.min(8, size - at)), at);
  return bytes;
}

/** A BLAKE3 hasher that is reused for many inputs (hash-wasm, WASM). */
export class Blake3 {
  private constructor(private readonly hasher: IHasher) {}

  static async create(): Promise<Blake3> {
    return new Blake3(await createBLAKE3());
  }

  /** Lowercase hex BLAKE3-256 of `data`. */
  hex(data: Uint8Array): string {
    this.hasher.init();
    this.hasher.update(data);
    return this.hasher.digest('hex');
  }
}

/** A size drawn log-uniformly from [min, max]: many small blobs, a few large ones. */
export function drawSize(prng: Prng, min: number, max: number): number {
  if (min === max) return min;
  const lo = Math.log(min);
  const hi = Math.log(max + 1);
  return Math.min(max, Math.max(min, Math.floor(Math.exp(lo + prng.next() * (hi - lo)))));
}

/** The kind of a blob given the configured shares. */
export function drawKind(prng: Prng, audioShare: number, imageShare: number): BlobKind {
  const r = prng.next();
  if (r < audioShare) return 'audio';
  if (r < audioShare + imageShare) return 'image';
  return prng.chance(0.3) ? 'pdf' : 'other';
}
