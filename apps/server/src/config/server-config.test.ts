import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ServerError } from '../server-error.js';
import { CONFIG_DEFAULTS } from './env-vars.js';
import { loadConfig } from './server-config.js';

function problem(env: Record<string, string>): string {
  try {
    loadConfig(env, '/srv');
  } catch (error) {
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).code).toBe('BAD_CONFIG');
    return (error as Error).message;
  }
  throw new Error('loadConfig accepted a bad configuration');
}

describe('loadConfig', () => {
  it('applies the defaults', () => {
    const config = loadConfig({}, '/srv');
    expect(config).toEqual({
      env: 'development',
      databaseUrl: undefined,
      dataDir: '/srv/.oxicloud',
      postgresDir: '/srv/.oxicloud/postgres',
      embeddedPostgresPort: 54329,
      http: { host: '127.0.0.1', port: 8086, maxBodyBytes: 65536 },
      jwtSecret: undefined,
      logLevel: 'info',
      databaseRetryMs: 60_000,
      runLeases: { leaseMs: 30_000, heartbeatMs: 10_000, janitorIntervalMs: 10_000 },
      logFormat: undefined,
      adminEmail: undefined,
      publicBaseUrl: 'http://127.0.0.1:8086',
      storage: { backend: 'local', root: '/srv/.oxicloud/storage' },
      storageDomain: 'oxicloud',
      storageEncryption: null,
      backends: { localRoot: '/srv/.oxicloud/storage', createLocalRoot: true, s3: null },
    });
    expect(CONFIG_DEFAULTS.embeddedPostgresPort).not.toBe(5432);
  });

  it('OXICLOUD_STORAGE_DOMAIN: oxicloud, the only value (the default); engine or any other value is an error saying so', () => {
    expect(loadConfig({}, '/srv').storageDomain).toBe('oxicloud');
    expect(loadConfig({ OXICLOUD_STORAGE_DOMAIN: ' OxiCloud ' }, '/srv').storageDomain).toBe('oxicloud');
    expect(loadConfig({ OXICLOUD_STORAGE_DOMAIN: '' }, '/srv').storageDomain).toBe('oxicloud');
    for (const value of ['engine', 'nextcloud']) {
      expect(() => loadConfig({ OXICLOUD_STORAGE_DOMAIN: value }, '/srv')).toThrow(
        `OXICLOUD_STORAGE_DOMAIN="${value}": must be oxicloud, the only storage domain (engine, the old storage model, is removed)`,
      );
    }
  });

  it('OXICLOUD_DATABASE_RETRY_SECONDS: whole seconds 0-86400, else an error naming it', () => {
    expect(loadConfig({ OXICLOUD_DATABASE_RETRY_SECONDS: '5' }, '/srv').databaseRetryMs).toBe(5_000);
    expect(() => loadConfig({ OXICLOUD_DATABASE_RETRY_SECONDS: '1.5' }, '/srv')).toThrow(
      /OXICLOUD_DATABASE_RETRY_SECONDS="1.5": must be a whole number of seconds from 0 to 86400/,
    );
  });

  it('OXICLOUD_RUN_LEASE_SECONDS, _HEARTBEAT_SECONDS, _JANITOR_SECONDS: whole seconds, the heartbeat within half the trust window', () => {
    expect(
      loadConfig(
        {
          OXICLOUD_RUN_LEASE_SECONDS: '3',
          OXICLOUD_RUN_HEARTBEAT_SECONDS: '1',
          OXICLOUD_RUN_JANITOR_SECONDS: '1',
        },
        '/srv',
      ).runLeases,
    ).toEqual({ leaseMs: 3_000, heartbeatMs: 1_000, janitorIntervalMs: 1_000 });
    expect(() => loadConfig({ OXICLOUD_RUN_LEASE_SECONDS: '1' }, '/srv')).toThrow(
      /OXICLOUD_RUN_LEASE_SECONDS="1": must be a whole number of seconds from 2 to 86400/,
    );
    expect(() => loadConfig({ OXICLOUD_RUN_JANITOR_SECONDS: 'soon' }, '/srv')).toThrow(
      /OXICLOUD_RUN_JANITOR_SECONDS="soon": must be a whole number of seconds from 1 to 86400/,
    );
    expect(() =>
      loadConfig({ OXICLOUD_RUN_LEASE_SECONDS: '30', OXICLOUD_RUN_HEARTBEAT_SECONDS: '15' }, '/srv'),
    ).toThrow(
      'OXICLOUD_RUN_HEARTBEAT_SECONDS=15 with OXICLOUD_RUN_LEASE_SECONDS=30: the heartbeat must be at most half ' +
        "the lease's trust window (25 s of a 30 s lease), so one missed renewal does not lose the lease: at most 12 s here",
    );
  });

  it('reads every variable, treating empty values as unset', () => {
    const config = loadConfig(
      {
        DATABASE_URL: 'postgres://u:p@db:5432/x',
        OXICLOUD_DATA_DIR: '/var/lib/oxi',
        OXICLOUD_HTTP_PORT: '9000',
        OXICLOUD_HTTP_HOST: '0.0.0.0',
        OXICLOUD_HTTP_MAX_BODY_BYTES: '1048576',
        OXICLOUD_EMBEDDED_POSTGRES_PORT: '',
        OXICLOUD_JWT_SECRET: 'x'.repeat(32),
        OXICLOUD_ENV: 'Production',
        OXICLOUD_LOG_LEVEL: 'debug',
        OXICLOUD_PUBLIC_BASE_URL: 'https://jobs.example.org/',
        OXICLOUD_LOG_FORMAT: 'Pretty',
        OXICLOUD_ADMIN_EMAIL: ' ops@example.org ',
      },
      '/srv',
    );
    expect(config).toMatchObject({
      logFormat: 'pretty',
      adminEmail: 'ops@example.org',
      env: 'production',
      databaseUrl: 'postgres://u:p@db:5432/x',
      dataDir: '/var/lib/oxi',
      embeddedPostgresPort: 54329,
      http: { host: '0.0.0.0', port: 9000, maxBodyBytes: 1_048_576 },
      logLevel: 'debug',
      publicBaseUrl: 'https://jobs.example.org',
    });
  });

  it('names the variable, the bad value and what is allowed, for every problem at once', () => {
    const message = problem({
      OXICLOUD_HTTP_PORT: 'abc',
      OXICLOUD_EMBEDDED_POSTGRES_PORT: '70000',
      OXICLOUD_ENV: 'prod',
      OXICLOUD_LOG_LEVEL: 'loud',
      OXICLOUD_STORAGE_BACKEND: 'ftp',
      OXICLOUD_PUBLIC_BASE_URL: 'jobs.example.org',
      OXICLOUD_LOG_FORMAT: 'xml',
      OXICLOUD_ADMIN_EMAIL: 'ops-at-example',
      OXICLOUD_HTTP_MAX_BODY_BYTES: '0x10000',
    });
    expect(message).toContain('OXICLOUD_LOG_FORMAT="xml": must be one of json, pretty');
    expect(message).toContain('OXICLOUD_ADMIN_EMAIL="ops-at-example": must be an e-mail address');
    expect(message).toContain(
      'OXICLOUD_HTTP_MAX_BODY_BYTES="0x10000": must be a plain decimal integer from 1024 to 16777216 (bytes)',
    );
    expect(message).toContain('OXICLOUD_HTTP_PORT="abc": must be an integer from 1 to 65535');
    expect(message).toContain('OXICLOUD_EMBEDDED_POSTGRES_PORT="70000": must be from 1 to 65535');
    expect(message).toContain('OXICLOUD_ENV="prod": must be one of development, production');
    expect(message).toContain(
      'OXICLOUD_LOG_LEVEL="loud": must be one of fatal, error, warn, info, debug, trace, silent',
    );
    expect(message).toContain('OXICLOUD_STORAGE_BACKEND="ftp": must be one of local, s3');
    expect(message).toContain(
      'OXICLOUD_PUBLIC_BASE_URL="jobs.example.org": must be an http:// or https:// URL',
    );
  });

  it('never echoes a secret', () => {
    const message = problem({
      OXICLOUD_JWT_SECRET: 'too-short-secret',
      DATABASE_URL: 'mysql://root:hunter2@x/db',
    });
    expect(message).toContain('OXICLOUD_JWT_SECRET=(hidden): must be at least 32 characters');
    expect(message).toContain('DATABASE_URL=(hidden): must be a postgres:// or postgresql:// URL');
    expect(message).not.toContain('too-short-secret');
    expect(message).not.toContain('hunter2');
  });

  it('refuses production without OXICLOUD_JWT_SECRET', () => {
    expect(problem({ OXICLOUD_ENV: 'production' })).toContain(
      'OXICLOUD_JWT_SECRET (unset): required when OXICLOUD_ENV=production',
    );
  });

  it("OXICLOUD_STORAGE_PATH: OxiCloud's storage root for the local backend, relative to the working folder, never created", () => {
    for (const [value, root] of [
      ['/var/lib/oxicloud/storage', '/var/lib/oxicloud/storage'],
      ['./storage', '/srv/storage'],
      ['storage', '/srv/storage'],
    ] as const) {
      const config = loadConfig({ OXICLOUD_STORAGE_PATH: value }, '/srv');
      expect(config.storage, value).toEqual({ backend: 'local', root });
      expect(config.backends).toMatchObject({ localRoot: root, createLocalRoot: false });
    }
    // With S3 as the source it is still the local backend (a storage_migration target).
    const s3 = loadConfig(
      {
        OXICLOUD_STORAGE_BACKEND: 's3',
        OXICLOUD_S3_BUCKET: 'oxicloud',
        OXICLOUD_S3_REGION: 'us-east-1',
        OXICLOUD_STORAGE_PATH: '/data/storage',
      },
      '/srv',
    );
    expect(s3.backends.localRoot).toBe('/data/storage');
    expect(loadConfig({ OXICLOUD_STORAGE_PATH: '  ' }, '/srv').backends).toMatchObject({
      localRoot: '/srv/.oxicloud/storage',
      createLocalRoot: true,
    });
  });

  it('OXICLOUD_STORAGE_ENCRYPTION_ENABLED / _KEY: the key of 32 bytes, validated at load, never shown', () => {
    const key = randomBytes(32).toString('base64');
    const config = loadConfig(
      { OXICLOUD_STORAGE_ENCRYPTION_ENABLED: 'true', OXICLOUD_STORAGE_ENCRYPTION_KEY: key },
      '/srv',
    );
    expect(config.storageEncryption?.key.export().toString('base64')).toBe(key);
    expect(JSON.stringify(config)).not.toContain(key);
    expect(loadConfig({ OXICLOUD_STORAGE_ENCRYPTION_KEY: key }, '/srv').storageEncryption).toBeNull();
    expect(problem({ OXICLOUD_STORAGE_ENCRYPTION_ENABLED: 'true' })).toContain(
      'OXICLOUD_STORAGE_ENCRYPTION_KEY (unset) is required when OXICLOUD_STORAGE_ENCRYPTION_ENABLED=true',
    );
    const short = randomBytes(24).toString('base64');
    const bad = problem({
      OXICLOUD_STORAGE_ENCRYPTION_ENABLED: 'true',
      OXICLOUD_STORAGE_ENCRYPTION_KEY: short,
    });
    expect(bad).toContain(
      'OXICLOUD_STORAGE_ENCRYPTION_KEY is not a valid key: it decodes to 24 bytes, not 32',
    );
    expect(bad).toContain('standard base64');
    expect(bad).toContain('exactly 32 bytes');
    expect(bad).not.toContain(short);
    expect(problem({ OXICLOUD_STORAGE_ENCRYPTION_ENABLED: 'maybe' })).toContain(
      'OXICLOUD_STORAGE_ENCRYPTION_ENABLED="maybe" is not a boolean',
    );
  });

  it('validates the S3 settings through s3ConfigFromEnv', () => {
    expect(problem({ OXICLOUD_STORAGE_BACKEND: 's3' })).toContain('OXICLOUD_S3_BUCKET is required');
    const config = loadConfig({
      OXICLOUD_STORAGE_BACKEND: 's3',
      OXICLOUD_S3_BUCKET: 'blobs',
      OXICLOUD_S3_REGION: 'us-east-1',
    });
    expect(config.storage).toMatchObject({ backend: 's3', s3: { bucket: 'blobs', region: 'us-east-1' } });
  });
});
