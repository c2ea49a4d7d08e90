/**
 * OxiCloud's blob layout, the one place it is spelled out. Every backend
 * names an object `<aa>/<hash>.blob`, where `hash` is the 64-hex BLAKE3 of
 * the plaintext and `aa` its first two characters:
 *
 * - local disk: `<storage root>/.blobs/<aa>/<hash>.blob`, the storage root
 *   being OxiCloud's `OXICLOUD_STORAGE_PATH` (which also holds `.thumbnails`,
 *   `.uploads`, `.jwt_secret`, … that are not blobs);
 * - S3: key `<aa>/<hash>.blob` at the bucket root (OxiCloud has no prefix
 *   option; the `prefix` of `S3BlobStorage` is for buckets shared with
 *   something else, and defaults to none).
 *
 * Code that needs a blob's file or key (fault injection, backdating, tests)
 * goes through these helpers, never through `hash.slice(0, 2)` of its own.
 */
import { join } from 'node:path';
import { assertBlobHash } from './blob-hash.js';

/** The folder under the storage root that holds the blobs. */
export const LOCAL_BLOBS_DIR = '.blobs';
/** The suffix of every blob object's name. */
export const BLOB_OBJECT_SUFFIX = '.blob';

const PREFIX_DIR = /^[0-9a-f]{2}$/;
const OBJECT_NAME = /^([0-9a-f]{64})\.blob$/;
const OBJECT_KEY = /^([0-9a-f]{2})\/([0-9a-f]{64})\.blob$/;

/**
 * The object name of `hash` relative to the blob area: `<aa>/<hash>.blob`
 * (the S3 key without a prefix). Validates the hash first (`INVALID_HASH`).
 *
 * @example
 * ```ts
 * blobObjectKey('af1349b9…3262'); // 'af/af1349b9…3262.blob'
 * ```
 */
export function blobObjectKey(hash: string): string {
  assertBlobHash(hash);
  return `${hash.slice(0, 2)}/${hash}${BLOB_OBJECT_SUFFIX}`;
}

/** The hash an object key `<aa>/<hash>.blob` names, or `null` for any other key (wrong folder included). */
export function hashOfBlobObjectKey(key: string): string | null {
  const match = OBJECT_KEY.exec(key);
  if (match === null) return null;
  const [, folder, hash] = match as unknown as [string, string, string];
  return hash.startsWith(folder) ? hash : null;
}

/** `<storage root>/.blobs`: the folder of the 256 prefix folders. */
export function localBlobsDir(storageRoot: string): string {
  return join(storageRoot, LOCAL_BLOBS_DIR);
}

/** `<storage root>/.blobs/<aa>`: the prefix folder `hash` lives in (validated first). */
export function localBlobDir(storageRoot: string, hash: string): string {
  assertBlobHash(hash);
  return join(storageRoot, LOCAL_BLOBS_DIR, hash.slice(0, 2));
}

/**
 * `<storage root>/.blobs/<aa>/<hash>.blob`: where the local backend keeps
 * `hash` (validated first; the file may not exist).
 */
export function localBlobPath(storageRoot: string, hash: string): string {
  return join(localBlobDir(storageRoot, hash), `${hash}${BLOB_OBJECT_SUFFIX}`);
}

/** Whether a name under `.blobs` is a prefix folder (two lowercase hex characters). */
export function isBlobPrefixDir(name: string): boolean {
  return PREFIX_DIR.test(name);
}

/**
 * The hash a file `name` in the prefix folder `prefixDir` names, or `null`
 * when it is not `<hash>.blob` with `hash` starting with `prefixDir` (temp
 * files, strays, a blob in the wrong folder).
 */
export function hashOfBlobFileName(prefixDir: string, name: string): string | null {
  const match = OBJECT_NAME.exec(name);
  const hash = match?.[1];
  if (hash === undefined || !hash.startsWith(prefixDir)) return null;
  return hash;
}

/**
 * The object key after which, in key order, come exactly the objects whose
 * hash is greater than `startAfter` (a hash or a 1–63 character hash prefix,
 * already validated): what S3's `StartAfter` needs. Object keys sort like
 * their hashes because the folder is the hash's own first two characters.
 */
export function blobKeyStartAfter(startAfter: string): string {
  if (startAfter.length < 2) return startAfter;
  const folder = startAfter.slice(0, 2);
  return startAfter.length === 64
    ? `${folder}/${startAfter}${BLOB_OBJECT_SUFFIX}`
    : `${folder}/${startAfter}`;
}

/**
 * The engine's quarantine (used by `dedup_gc` on OxiCloud's domain), outside
 * OxiCloud's blob area so that OxiCloud never reads, lists or adopts what is
 * in it:
 *
 * - local disk: `<storage root>/.oxijobs-quarantine/<aa>/<hash>.blob` for the
 *   bytes of a collected blob (moved there by one rename, so on the same
 *   filesystem as `.blobs`), `<storage root>/.oxijobs-quarantine/manifests/<aa>/<hash>.json`
 *   for a saved manifest;
 * - S3: the same names under the key prefix `oxijobs-quarantine/` (after the
 *   store's own `prefix`, if any).
 *
 * To restore a blob by hand, move `.oxijobs-quarantine/<aa>/<hash>.blob`
 * back to `.blobs/<aa>/<hash>.blob` (S3: copy the key back to `<aa>/<hash>.blob`).
 */
export const LOCAL_QUARANTINE_DIR = '.oxijobs-quarantine';
/** The key prefix of the quarantine in an S3 bucket (after the store's own prefix). */
export const S3_QUARANTINE_PREFIX = 'oxijobs-quarantine/';
/** The folder of saved manifests inside the quarantine. */
export const QUARANTINED_MANIFESTS_DIR = 'manifests';
/** The suffix of a saved manifest's name. */
export const MANIFEST_RECORD_SUFFIX = '.json';

const MANIFEST_KEY = /^([0-9a-f]{2})\/([0-9a-f]{64})\.json$/;

/** `<storage root>/.oxijobs-quarantine`. */
export function localQuarantineDir(storageRoot: string): string {
  return join(storageRoot, LOCAL_QUARANTINE_DIR);
}

/** `<storage root>/.oxijobs-quarantine/manifests`. */
export function localQuarantinedManifestsDir(storageRoot: string): string {
  return join(storageRoot, LOCAL_QUARANTINE_DIR, QUARANTINED_MANIFESTS_DIR);
}

/** `<storage root>/.oxijobs-quarantine/<aa>/<hash>.blob` (validated first). */
export function localQuarantinedBlobPath(storageRoot: string, hash: string): string {
  return join(localQuarantineDir(storageRoot), blobObjectKey(hash));
}

/** `<storage root>/.oxijobs-quarantine/manifests/<aa>/<hash>.json` (validated first). */
export function localQuarantinedManifestPath(storageRoot: string, fileHash: string): string {
  return join(localQuarantinedManifestsDir(storageRoot), quarantinedManifestName(fileHash));
}

/** `<aa>/<hash>.json`: a saved manifest's name relative to the manifests folder (validated first). */
export function quarantinedManifestName(fileHash: string): string {
  assertBlobHash(fileHash);
  return `${fileHash.slice(0, 2)}/${fileHash}${MANIFEST_RECORD_SUFFIX}`;
}

/** The hash a saved manifest's name `<aa>/<hash>.json` names, or `null` for any other name. */
export function hashOfQuarantinedManifestName(name: string): string | null {
  const match = MANIFEST_KEY.exec(name);
  if (match === null) return null;
  const [, folder, hash] = match as unknown as [string, string, string];
  return hash.startsWith(folder) ? hash : null;
}
