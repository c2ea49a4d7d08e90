import { StorageError } from '../storage-error.js';
import { isKeyPrefix, type S3BlobStorageOptions } from './s3-blob-storage.js';

/** The environment variables {@link s3ConfigFromEnv} reads. */
export const S3_ENV = {
  bucket: 'OXICLOUD_S3_BUCKET',
  region: 'OXICLOUD_S3_REGION',
  endpoint: 'OXICLOUD_S3_ENDPOINT',
  accessKeyId: 'OXICLOUD_S3_ACCESS_KEY_ID',
  secretAccessKey: 'OXICLOUD_S3_SECRET_ACCESS_KEY',
  forcePathStyle: 'OXICLOUD_S3_FORCE_PATH_STYLE',
  prefix: 'OXICLOUD_S3_PREFIX',
} as const;

/** Name of the variable that chooses the blob backend. */
export const STORAGE_BACKEND_ENV = 'OXICLOUD_STORAGE_BACKEND';

/** The blob backends the server can run on. */
export type StorageBackendName = 'local' | 's3';

type Env = Readonly<Record<string, string | undefined>>;

function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/**
 * Reads `OXICLOUD_STORAGE_BACKEND`: `local` (the default when unset) or `s3`.
 * Throws `INVALID_CONFIG` naming the value and what is allowed.
 */
export function storageBackendFromEnv(env: Env): StorageBackendName {
  const value = read(env, STORAGE_BACKEND_ENV)?.toLowerCase() ?? 'local';
  if (value === 'local' || value === 's3') return value;
  throw new StorageError(
    'INVALID_CONFIG',
    `${STORAGE_BACKEND_ENV}=${JSON.stringify(env[STORAGE_BACKEND_ENV])} is not a blob backend: use local or s3`,
  );
}

/**
 * Builds {@link S3BlobStorageOptions} from the environment, without zod.
 * Every problem is collected and reported in one `INVALID_CONFIG` error whose
 * message names each variable, the bad value (never a secret) and what is
 * allowed.
 *
 * | variable | required | meaning |
 * |---|---|---|
 * | `OXICLOUD_S3_BUCKET` | yes | bucket name |
 * | `OXICLOUD_S3_REGION` | yes | signing region (`us-east-1` for most S3-compatible servers) |
 * | `OXICLOUD_S3_ENDPOINT` | no | `http(s)://host:port` of an S3-compatible server; unset = AWS |
 * | `OXICLOUD_S3_ACCESS_KEY_ID`, `OXICLOUD_S3_SECRET_ACCESS_KEY` | both or neither | static credentials; neither = the SDK's default chain |
 * | `OXICLOUD_S3_FORCE_PATH_STYLE` | no | `true`/`false` (also `1`/`0`, `yes`/`no`); default `false` |
 * | `OXICLOUD_S3_PREFIX` | no | key prefix ending in `/`; default none, OxiCloud's layout (`<aa>/<hash>.blob` at the bucket root; OxiCloud itself has no prefix option) |
 *
 * @example
 * ```ts
 * const blobs = new S3BlobStorage(s3ConfigFromEnv(process.env));
 * ```
 */
export function s3ConfigFromEnv(env: Env): S3BlobStorageOptions {
  const problems: string[] = [];
  const bucket = read(env, S3_ENV.bucket);
  if (bucket === undefined) {
    problems.push(`${S3_ENV.bucket} is required: the name of the bucket that holds the blobs`);
  } else if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    problems.push(
      `${S3_ENV.bucket}=${JSON.stringify(bucket)} is not a bucket name: 3 to 63 characters of a-z, 0-9, '.' and '-', starting and ending with a letter or digit`,
    );
  }
  const region = read(env, S3_ENV.region);
  if (region === undefined) {
    problems.push(
      `${S3_ENV.region} is required: the signing region, for example eu-west-1 (us-east-1 for most S3-compatible servers)`,
    );
  } else if (!/^[a-z0-9-]+$/.test(region)) {
    problems.push(
      `${S3_ENV.region}=${JSON.stringify(region)} is not a region name: use lowercase letters, digits and '-'`,
    );
  }
  const endpoint = read(env, S3_ENV.endpoint);
  if (endpoint !== undefined) {
    let protocol: string | undefined;
    try {
      protocol = new URL(endpoint).protocol;
    } catch {
      protocol = undefined;
    }
    if (protocol !== 'http:' && protocol !== 'https:') {
      problems.push(
        `${S3_ENV.endpoint}=${JSON.stringify(endpoint)} is not an http:// or https:// URL (for example http://127.0.0.1:9000)`,
      );
    }
  }
  const accessKeyId = read(env, S3_ENV.accessKeyId);
  const secretAccessKey = read(env, S3_ENV.secretAccessKey);
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    const missing = accessKeyId === undefined ? S3_ENV.accessKeyId : S3_ENV.secretAccessKey;
    problems.push(
      `${missing} is missing: set ${S3_ENV.accessKeyId} and ${S3_ENV.secretAccessKey} together, or neither to use the default AWS credential chain`,
    );
  }
  const pathStyleRaw = read(env, S3_ENV.forcePathStyle)?.toLowerCase();
  let forcePathStyle = false;
  if (pathStyleRaw !== undefined) {
    if (['true', '1', 'yes'].includes(pathStyleRaw)) forcePathStyle = true;
    else if (['false', '0', 'no'].includes(pathStyleRaw)) forcePathStyle = false;
    else {
      problems.push(
        `${S3_ENV.forcePathStyle}=${JSON.stringify(env[S3_ENV.forcePathStyle])} is not a boolean: use true or false`,
      );
    }
  }
  const prefix = read(env, S3_ENV.prefix) ?? '';
  if (!isKeyPrefix(prefix)) {
    problems.push(
      `${S3_ENV.prefix}=${JSON.stringify(env[S3_ENV.prefix])} is not a key prefix: leave it unset for OxiCloud's layout (keys <aa>/<hash>.blob at the bucket root; OxiCloud has no prefix option), or give one ending in '/' without a leading '/', such as tenant-a/`,
    );
  }
  if (problems.length > 0) {
    throw new StorageError(
      'INVALID_CONFIG',
      `invalid S3 blob storage configuration:\n- ${problems.join('\n- ')}`,
    );
  }
  return {
    bucket: bucket!,
    region: region!,
    ...(endpoint === undefined ? {} : { endpoint }),
    ...(accessKeyId === undefined || secretAccessKey === undefined ? {} : { accessKeyId, secretAccessKey }),
    forcePathStyle,
    ...(prefix === '' ? {} : { prefix }),
  };
}
