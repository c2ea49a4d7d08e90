import { utimes } from 'node:fs/promises';

/**
 * A `backdateBlob` for blob backends that keep each blob in a local file:
 * sets the file's access and modification times. Pass the backend's path
 * resolver (`LocalFsBlobStorage.pathOf`). S3 cannot set `LastModified`;
 * leave `backdateBlob` unset there.
 *
 * @example
 * ```ts
 * const blobs = new LocalFsBlobStorage({ root });
 * await generateOxiCloudDataset({
 *   pool,
 *   blobs,
 *   options,
 *   backdateBlob: backdateLocalBlob((h) => blobs.pathOf(h)),
 * });
 * ```
 */
export function backdateLocalBlob(
  pathOf: (hash: string) => string,
): (hash: string, modifiedAt: Date) => Promise<void> {
  return (hash, modifiedAt) => utimes(pathOf(hash), modifiedAt, modifiedAt);
}
