import { describe, expect, it } from 'vitest';
import type { BlobHasher, StoredBlobDigest } from '../src/ports/blob-hasher.js';
import type { BlobStorage } from '../src/ports/blob-storage.js';
import type { BlobIndexRow, BlobIndexScan } from '../src/storage-consistency/blob-index-scan.js';
import { storeCanary } from '../src/storage-consistency/store-canary.js';

const hashOf = (n: number) => n.toString(16).padStart(2, '0').repeat(32);
const row = (n: number, size = 100): BlobIndexRow => ({
  hash: hashOf(n),
  size,
  refCount: 1,
  orphanedAt: null,
  contentType: null,
  createdAt: new Date('2026-01-01T00:00:00Z'),
});

/** What a store answers for one hash: its bytes' digest, or the error its read fails with. */
type Stored = { readonly hash: string } | { readonly error: string };

function world(rows: BlobIndexRow[], stored: Record<string, Stored>) {
  const asked: { limit: number; before: Date }[] = [];
  const index = {
    sampleRows: async (limit: number, before: Date) => {
      asked.push({ limit, before });
      return rows.slice(0, limit);
    },
  } as unknown as BlobIndexScan;
  const hasher: BlobHasher = {
    hashStoredBlob: async (hash): Promise<StoredBlobDigest> => {
      const s = stored[hash];
      if (s === undefined || 'error' in s) {
        throw Object.assign(new Error(s ? s.error : 'not found'), { code: s ? s.error : 'NOT_FOUND' });
      }
      return { hash: s.hash, size: 100, head: new Uint8Array() };
    },
  };
  const blobs = {
    backend: 'local',
    head: async (hash: string) => (stored[hash] === undefined ? null : { hash, size: 1 }),
  } as unknown as BlobStorage;
  const createdBefore = new Date('2026-06-01T00:00:00Z');
  const run = () =>
    storeCanary({ blobs, index, hasher, createdBefore, signal: new AbortController().signal });
  return { run, asked, createdBefore };
}

describe('storeCanary (storage_consistency before it reports anything)', () => {
  it('passes on the first sampled object that reads back as itself, asking for 5 rows older than the boundary', async () => {
    const rows = [row(1), row(2), row(3)];
    const w = world(rows, { [hashOf(1)]: { error: 'NOT_FOUND' }, [hashOf(2)]: { hash: hashOf(2) } });
    expect(await w.run()).toBeNull();
    expect(w.asked).toEqual([{ limit: 5, before: w.createdBefore }]);
  });

  it('passes with no row old enough to sample: nothing a wrong root could be mistaken for', async () => {
    expect(await world([], {}).run()).toBeNull();
  });

  it('a wrong root: every sample absent', async () => {
    const reason = await world([row(1), row(2)], {}).run();
    expect(reason).toMatch(/^wrong storage root \/ key: none of 2 objects that storage\.blobs lists/);
    expect(reason).toContain('2 absent (wrong storage root or bucket?)');
    expect(reason).toContain('OXICLOUD_STORAGE_PATH');
  });

  it('a wrong key: samples that do not decrypt; plaintext read as if encrypted the other way: other bytes', async () => {
    const reason = await world([row(1), row(2), row(3)], {
      [hashOf(1)]: { error: 'DECRYPTION_FAILED' },
      [hashOf(2)]: { error: 'DECRYPTION_FAILED' },
      [hashOf(3)]: { hash: hashOf(9) },
    }).run();
    expect(reason).toContain('2 do not decrypt (wrong OXICLOUD_STORAGE_ENCRYPTION_KEY');
    expect(reason).toContain('1 hold other bytes (encryption off here and on in OxiCloud?)');
  });

  it('a legacy blob over 64 MiB is looked up, not hashed', async () => {
    const big = row(7, 65 * 1024 * 1024);
    expect(await world([big], { [hashOf(7)]: { error: 'DECRYPTION_FAILED' } }).run()).toBeNull();
    expect(await world([big], {}).run()).toContain('1 absent');
  });
});
