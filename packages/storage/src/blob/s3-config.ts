import { StorageError } from '../storage-error.js';
import { isKeyPrefix, type S3BlobStorageOptions } from './s3-blob-storage.js';

/**
 * The environment variables {@link s3ConfigFromEnv} reads: OxiCloud's own
 * names with OxiCloud's meaning (its `docs/config/env.md`), so the engine
 * reads OxiCloud's environment file as it is, plus the engine's `prefix`
 * (OxiCloud has no prefix option).
 */
export const S3_ENV = {
  bucket: 'OXICLOUD_S3_BUCKET',
  region: 'OXICLOUD_S3_REGION',
  endpoint: 'OXICLOUD_S3_ENDPOINT_URL',
  accessKeyId: 'OXICLOUD_S3_ACCESS_KEY',
  secretAccessKey: 'OXICLOUD_S3_SECRET_KEY',
  forcePathStyle: 'OXICLOUD_S3_FORCE_PATH_STYLE',
  prefix: 'OXICLOUD_S3_PREFIX',
} as const;

/**
 * The engine's earlier names of three {@link S3_ENV} settings, still read
 * with the same meaning (OxiCloud reads none of them). Setting one and its
 * OxiCloud name to different values is an `INVALID_CONFIG` error.
 */
export const S3_ENV_ALIASES = {
  endpoint: 'OXICLOUD_S3_ENDPOINT',
  accessKeyId: 'OXICLOUD_S3_ACCESS_KEY_ID',
  secretAccessKey: 'OXICLOUD_S3_SECRET_ACCESS_KEY',
} as const;

/** OxiCloud's default region (`OXICLOUD_S3_REGION` unset). */
export const S3_DEFAULT_REGION = 'us-east-1';

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
 * `name` (OxiCloud's), else `alias` (the engine's earlier name); a problem
 * when both are set to different values (a secret's values never shown).
 */
function readAliased(
  env: Env,
  name: string,
  alias: string,
  problems: string[],
  secret = false,
): string | undefined {
  const value = read(env, name);
  const old = read(env, alias);
  if (value !== undefined && old !== undefined && value !== old) {
    problems.push(
      `${name}${secret ? '' : `=${JSON.stringify(value)}`} and ${alias}${secret ? '' : `=${JSON.stringify(old)}`} ` +
        `differ: ${alias} is the engine's earlier name of ${name} (OxiCloud's); set ${name} only`,
    );
  }
  return value ?? old;
}

/**
 * Reads `OXICLOUD_STORAGE_BACKEND`: `local` (the default when unset) or `s3`.
 * OxiCloud's `azure` is refused by name (this engine has no Azure backend).
 * Throws `INVALID_CONFIG` naming the value and what is allowed.
 */
export function storageBackendFromEnv(env: Env): StorageBackendName {
  const value = read(env, STORAGE_BACKEND_ENV)?.toLowerCase() ?? 'local';
  if (value === 'local' || value === 's3') return value;
  throw new StorageError(
    'INVALID_CONFIG',
    value === 'azure'
      ? `${STORAGE_BACKEND_ENV}=${JSON.stringify(env[STORAGE_BACKEND_ENV])}: OxiCloud's Azure backend is not one this engine reads; use local or s3`
      : `${STORAGE_BACKEND_ENV}=${JSON.stringify(env[STORAGE_BACKEND_ENV])} is not a blob backend: use local or s3`,
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
 * | `OXICLOUD_S3_REGION` | no | signing region; default `us-east-1`, as OxiCloud |
 * | `OXICLOUD_S3_ENDPOINT_URL` | no | `http(s)://host:port` of an S3-compatible server; unset = AWS |
 * | `OXICLOUD_S3_ACCESS_KEY`, `OXICLOUD_S3_SECRET_KEY` | both or neither | static credentials; neither = the SDK's default chain |
 * | `OXICLOUD_S3_FORCE_PATH_STYLE` | no | `true`/`false` (also `1`/`0`, `yes`/`no`); default `false` |
 * | `OXICLOUD_S3_PREFIX` | no | the engine's own: key prefix ending in `/`; default none, OxiCloud's layout (`<aa>/<hash>.blob` at the bucket root; OxiCloud itself has no prefix option) |
 *
 * All but `_PREFIX` are OxiCloud's names and meaning. The engine's earlier
 * names ({@link S3_ENV_ALIASES}: `_ENDPOINT`, `_ACCESS_KEY_ID`,
 * `_SECRET_ACCESS_KEY`) are still read; set to a value other than the
 * OxiCloud name's, they are an error.
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
  const region = read(env, S3_ENV.region) ?? S3_DEFAULT_REGION;
  if (!/^[a-z0-9-]+$/.test(region)) {
    problems.push(
      `${S3_ENV.region}=${JSON.stringify(region)} is not a region name: use lowercase letters, digits and '-'`,
    );
  }
  const endpoint = readAliased(env, S3_ENV.endpoint, S3_ENV_ALIASES.endpoint, problems);
  if (endpoint !== undefined) {
    let protocol: string | undefined;
    try {
      protocol = new URL(endpoint).protocol;
    } catch {
      protocol = undefined;
    }
    if (protocol !== 'http:' && protocol !== 'https:') {
      problems.push(
        `${read(env, S3_ENV.endpoint) === undefined ? S3_ENV_ALIASES.endpoint : S3_ENV.endpoint}=${JSON.stringify(endpoint)} is not an http:// or https:// URL (for example http://127.0.0.1:9000)`,
      );
    }
  }
  const accessKeyId = readAliased(env, S3_ENV.accessKeyId, S3_ENV_ALIASES.accessKeyId, problems);
  const secretAccessKey = readAliased(
    env,
    S3_ENV.secretAccessKey,
    S3_ENV_ALIASES.secretAccessKey,
    problems,
    true,
  );
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
    region,
    ...(endpoint === undefined ? {} : { endpoint }),
    ...(accessKeyId === undefined || secretAccessKey === undefined ? {} : { accessKeyId, secretAccessKey }),
    forcePathStyle,
    ...(prefix === '' ? {} : { prefix }),
  };
}
