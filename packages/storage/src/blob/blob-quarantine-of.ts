import type { BlobQuarantine, BlobStorage } from '@oxicloud/tenants';

const METHODS = [
  'quarantineBlob',
  'restoreBlob',
  'listQuarantinedBlobs',
  'purgeQuarantinedBlob',
  'saveManifest',
  'listQuarantinedManifests',
  'readQuarantinedManifest',
  'purgeQuarantinedManifest',
] as const;

/**
 * The quarantine of `store` when it has one (`LocalFsBlobStorage`,
 * `S3BlobStorage`, and an `EncryptedBlobStorage` over either), else `null`:
 * what the server asks before it registers `dedup_gc` on OxiCloud's domain.
 */
export function blobQuarantineOf(store: BlobStorage): BlobQuarantine | null {
  const candidate = store as Partial<Record<(typeof METHODS)[number], unknown>>;
  if (!METHODS.every((m) => typeof candidate[m] === 'function')) return null;
  if ('inner' in store && blobQuarantineOf((store as { inner: BlobStorage }).inner) === null) return null;
  return store as unknown as BlobQuarantine;
}
