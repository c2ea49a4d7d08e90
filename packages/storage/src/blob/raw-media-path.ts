import type { BlobStorage } from '@oxicloud/tenants';
import { LocalFsBlobStorage } from './local-fs-blob-storage.js';

/**
 * Whether OxiCloud's media extractors can read this store's bytes (fact
 * sheet §9): they open `<storage root>/.blobs/<aa>/<hash>.blob` directly,
 * which holds the plaintext only on a local, unencrypted store. On S3 or
 * an encrypted store OxiCloud writes no metadata row at all, and a missing
 * one is no drift.
 */
export function readsMediaAtRawPath(blobs: BlobStorage): boolean {
  return blobs instanceof LocalFsBlobStorage;
}
