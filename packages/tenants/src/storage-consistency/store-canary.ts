import type { BlobHasher } from '../ports/blob-hasher.js';
import type { BlobStorage } from '../ports/blob-storage.js';
import type { BlobIndexRow, BlobIndexScan } from './blob-index-scan.js';

/** Objects the canary reads back: few enough to cost nothing, enough that real, scattered loss does not trip it. */
export const STORE_CANARY_SAMPLE = 5;

/** Options of {@link storeCanary}. */
export interface StoreCanaryOptions {
  readonly blobs: BlobStorage;
  readonly index: BlobIndexScan;
  readonly hasher: BlobHasher;
  /** Only rows created before this are sampled (their objects are surely written): the run's grace boundary. */
  readonly createdBefore: Date;
  readonly signal: AbortSignal;
  /** @defaultValue {@link STORE_CANARY_SAMPLE} */
  readonly sample?: number;
}

type Verdict = 'verified' | 'absent' | 'undecryptable' | 'other_bytes' | 'unreadable';

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error
    ? String((error as { code: unknown }).code)
    : undefined;
}

/** Objects larger than this (legacy whole-file blobs) are only looked up, not read and hashed. */
const CANARY_HASH_MAX_BYTES = 64 * 1024 * 1024;

async function verify(row: BlobIndexRow, options: StoreCanaryOptions): Promise<Verdict> {
  try {
    if (row.size > CANARY_HASH_MAX_BYTES) {
      return (await options.blobs.head(row.hash)) === null ? 'absent' : 'verified';
    }
    const digest = await options.hasher.hashStoredBlob(row.hash, options.signal);
    return digest.hash === row.hash ? 'verified' : 'other_bytes';
  } catch (error) {
    if (options.signal.aborted) throw error;
    const code = errorCode(error);
    if (code === 'NOT_FOUND') return 'absent';
    if (code === 'DECRYPTION_FAILED') return 'undecryptable';
    return 'unreadable';
  }
}

/**
 * The store canary: before a check may report bytes missing or corrupt for
 * the whole store, a few rows' objects are read back through the configured
 * store (and its encryption key) and hashed. One that hashes to its row's
 * hash proves the store and key are the ones the rows were written to, and
 * the canary passes (`null`). When every sampled object is absent, does not
 * decrypt, or holds other bytes, the configuration is wrong far more likely
 * than every object lost at once: the reason names what each sample showed
 * and the setting to look at. No sample (no row old enough) passes: there is
 * nothing a wrong root could be mistaken for.
 */
export async function storeCanary(options: StoreCanaryOptions): Promise<string | null> {
  const rows = await options.index.sampleRows(options.sample ?? STORE_CANARY_SAMPLE, options.createdBefore);
  if (rows.length === 0) return null;
  const tally: Record<Verdict, number> = {
    verified: 0,
    absent: 0,
    undecryptable: 0,
    other_bytes: 0,
    unreadable: 0,
  };
  for (const row of rows) {
    const verdict = await verify(row, options);
    if (verdict === 'verified') return null;
    tally[verdict] += 1;
  }
  const seen: string[] = [];
  if (tally.absent > 0) seen.push(`${tally.absent} absent (wrong storage root or bucket?)`);
  if (tally.undecryptable > 0) {
    seen.push(
      `${tally.undecryptable} do not decrypt (wrong OXICLOUD_STORAGE_ENCRYPTION_KEY, or encryption on here and off in OxiCloud?)`,
    );
  }
  if (tally.other_bytes > 0) {
    seen.push(`${tally.other_bytes} hold other bytes (encryption off here and on in OxiCloud?)`);
  }
  if (tally.unreadable > 0) seen.push(`${tally.unreadable} unreadable`);
  return (
    `wrong storage root / key: none of ${rows.length} objects that storage.blobs lists reads back as itself ` +
    `from the ${options.blobs.backend} store: ${seen.join(', ')}. ` +
    'Nothing was reported as missing or corrupt; check OXICLOUD_STORAGE_PATH (or the S3 bucket) and the encryption settings'
  );
}
