import { describe, expect, it } from 'vitest';
import { StorageError } from '../storage-error.js';
import { s3ConfigFromEnv, storageBackendFromEnv } from './s3-config.js';

function configError(env: Record<string, string | undefined>): StorageError {
  try {
    s3ConfigFromEnv(env);
  } catch (error) {
    if (error instanceof StorageError) return error;
    throw error;
  }
  throw new Error('expected s3ConfigFromEnv to throw');
}

describe('s3ConfigFromEnv', () => {
  const full = {
    bucket: 'oxicloud-blobs',
    region: 'eu-west-1',
    endpoint: 'http://127.0.0.1:9000',
    accessKeyId: 'minio',
    secretAccessKey: 'minio-secret',
    forcePathStyle: true,
  };

  it("reads a full configuration under OxiCloud's names (its environment file as it is)", () => {
    expect(
      s3ConfigFromEnv({
        OXICLOUD_S3_BUCKET: 'oxicloud-blobs',
        OXICLOUD_S3_REGION: 'eu-west-1',
        OXICLOUD_S3_ENDPOINT_URL: 'http://127.0.0.1:9000',
        OXICLOUD_S3_ACCESS_KEY: 'minio',
        OXICLOUD_S3_SECRET_KEY: 'minio-secret',
        OXICLOUD_S3_FORCE_PATH_STYLE: 'true',
      }),
    ).toEqual(full);
  });

  it("still reads the engine's earlier names; one set beside OxiCloud's name to another value is an error", () => {
    const base = { OXICLOUD_S3_BUCKET: 'oxicloud-blobs', OXICLOUD_S3_REGION: 'eu-west-1' };
    const earlier = {
      OXICLOUD_S3_ENDPOINT: 'http://127.0.0.1:9000',
      OXICLOUD_S3_ACCESS_KEY_ID: 'minio',
      OXICLOUD_S3_SECRET_ACCESS_KEY: 'minio-secret',
      OXICLOUD_S3_FORCE_PATH_STYLE: 'true',
    };
    expect(s3ConfigFromEnv({ ...base, ...earlier })).toEqual(full);
    // The same value under both names is no conflict.
    expect(s3ConfigFromEnv({ ...base, ...earlier, OXICLOUD_S3_ACCESS_KEY: 'minio' })).toEqual(full);
    const error = configError({
      ...base,
      ...earlier,
      OXICLOUD_S3_ENDPOINT_URL: 'http://127.0.0.1:9001',
      OXICLOUD_S3_SECRET_KEY: 'other-secret',
    });
    expect(error.message).toContain(
      'OXICLOUD_S3_ENDPOINT_URL="http://127.0.0.1:9001" and OXICLOUD_S3_ENDPOINT="http://127.0.0.1:9000" differ: ' +
        "OXICLOUD_S3_ENDPOINT is the engine's earlier name of OXICLOUD_S3_ENDPOINT_URL (OxiCloud's); set OXICLOUD_S3_ENDPOINT_URL only",
    );
    expect(error.message).toContain('OXICLOUD_S3_SECRET_KEY and OXICLOUD_S3_SECRET_ACCESS_KEY differ');
    expect(error.message).not.toContain('minio-secret');
    expect(error.message).not.toContain('other-secret');
  });

  it("defaults to OxiCloud's region us-east-1, AWS, the default credential chain and virtual-host addressing", () => {
    expect(s3ConfigFromEnv({ OXICLOUD_S3_BUCKET: 'b-1' })).toEqual({
      bucket: 'b-1',
      region: 'us-east-1',
      forcePathStyle: false,
    });
    for (const [raw, value] of [
      ['1', true],
      ['YES', true],
      ['false', false],
      ['0', false],
    ] as const) {
      const config = s3ConfigFromEnv({
        OXICLOUD_S3_BUCKET: 'b-1',
        OXICLOUD_S3_REGION: 'us-east-1',
        OXICLOUD_S3_FORCE_PATH_STYLE: raw,
      });
      expect(config.forcePathStyle, raw).toBe(value);
    }
  });

  it('reports every problem at once, naming each variable and what is allowed, never a secret', () => {
    const error = configError({
      OXICLOUD_S3_REGION: 'EU West',
      OXICLOUD_S3_ENDPOINT_URL: 'localhost:9000',
      OXICLOUD_S3_SECRET_KEY: 'top-secret-value',
      OXICLOUD_S3_FORCE_PATH_STYLE: 'maybe',
    });
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toContain('OXICLOUD_S3_BUCKET is required');
    expect(error.message).toContain('OXICLOUD_S3_REGION="EU West" is not a region name');
    expect(error.message).toContain(
      'OXICLOUD_S3_ENDPOINT_URL="localhost:9000" is not an http:// or https:// URL',
    );
    expect(error.message).toContain('OXICLOUD_S3_ACCESS_KEY is missing');
    expect(error.message).toContain(
      'OXICLOUD_S3_FORCE_PATH_STYLE="maybe" is not a boolean: use true or false',
    );
    expect(error.message).not.toContain('top-secret-value');
  });

  it("has no key prefix by default (OxiCloud's layout), and takes one ending in '/'", () => {
    const base = { OXICLOUD_S3_BUCKET: 'b-1', OXICLOUD_S3_REGION: 'us-east-1' };
    expect(s3ConfigFromEnv(base).prefix).toBeUndefined();
    expect(s3ConfigFromEnv({ ...base, OXICLOUD_S3_PREFIX: '' }).prefix).toBeUndefined();
    expect(s3ConfigFromEnv({ ...base, OXICLOUD_S3_PREFIX: 'tenant-a/' }).prefix).toBe('tenant-a/');
    for (const bad of ['blobs', '/blobs/']) {
      expect(configError({ ...base, OXICLOUD_S3_PREFIX: bad }).message).toContain(
        `OXICLOUD_S3_PREFIX=${JSON.stringify(bad)} is not a key prefix: leave it unset for OxiCloud's layout`,
      );
    }
  });

  it('requires a valid bucket name', () => {
    expect(configError({ OXICLOUD_S3_BUCKET: 'Bad_Bucket' }).message).toContain(
      'OXICLOUD_S3_BUCKET="Bad_Bucket" is not a bucket name',
    );
    expect(configError({}).message).toContain('OXICLOUD_S3_BUCKET is required');
  });
});

describe('storageBackendFromEnv', () => {
  it('is local by default and accepts local or s3', () => {
    expect(storageBackendFromEnv({})).toBe('local');
    expect(storageBackendFromEnv({ OXICLOUD_STORAGE_BACKEND: 's3' })).toBe('s3');
    expect(storageBackendFromEnv({ OXICLOUD_STORAGE_BACKEND: 'LOCAL' })).toBe('local');
    expect(() => storageBackendFromEnv({ OXICLOUD_STORAGE_BACKEND: 'gcs' })).toThrow(
      expect.objectContaining({
        code: 'INVALID_CONFIG',
        message: expect.stringContaining('use local or s3'),
      }),
    );
    expect(() => storageBackendFromEnv({ OXICLOUD_STORAGE_BACKEND: 'azure' })).toThrow(
      "OxiCloud's Azure backend is not one this engine reads; use local or s3",
    );
  });
});
