import { randomBytes } from 'node:crypto';
import { smtpConfigFromEnv } from '@oxicloud/alerts';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ADMIN_URL } from '../jobs-client/cli-values.js';
import { ServerError } from '../server-error.js';
import { CONFIG_DEFAULTS } from './env-vars.js';
import { loadConfig } from './server-config.js';
import { tenantConfigsFromEnv } from './tenant-configs.js';

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
      databaseUrlVar: undefined,
      engineSchema: undefined,
      dataDir: '/srv/.oxicloud',
      postgresDir: '/srv/.oxicloud/postgres',
      embeddedPostgresPort: 54329,
      http: { host: '127.0.0.1', port: 8087, maxBodyBytes: 65536 },
      jwtSecret: undefined,
      logLevel: 'info',
      databaseRetryMs: 60_000,
      runLeases: { leaseMs: 30_000, heartbeatMs: 10_000, janitorIntervalMs: 10_000 },
      logFormat: undefined,
      adminEmail: undefined,
      publicBaseUrl: 'http://127.0.0.1:8087',
      storage: { backend: 'local', root: '/srv/.oxicloud/storage' },
      storageDomain: 'oxicloud',
      storageEncryption: null,
      backends: { localRoot: '/srv/.oxicloud/storage', createLocalRoot: true, s3: null },
      notices: [],
    });
    expect(CONFIG_DEFAULTS.embeddedPostgresPort).not.toBe(5432);
    // Not OxiCloud's 8086, and the CLI client's default is the server's.
    expect(CONFIG_DEFAULTS.httpPort).not.toBe(CONFIG_DEFAULTS.oxicloudServerPort);
    expect(DEFAULT_ADMIN_URL).toBe(`http://127.0.0.1:${CONFIG_DEFAULTS.httpPort}`);
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
        OXIJOBS_JWT_SECRET: 'x'.repeat(32),
        OXIJOBS_SCHEMA: ' oxijobs ',
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
      databaseUrlVar: 'DATABASE_URL',
      engineSchema: 'oxijobs',
      jwtSecret: 'x'.repeat(32),
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
    expect(problem({ OXICLOUD_STORAGE_BACKEND: 'azure' })).toContain(
      'OXICLOUD_STORAGE_BACKEND="azure": OxiCloud\'s Azure backend is not one this engine reads; must be one of local, s3',
    );
    expect(message).toContain(
      'OXICLOUD_PUBLIC_BASE_URL="jobs.example.org": must be an http:// or https:// URL',
    );
  });

  it('never echoes a secret', () => {
    const message = problem({
      OXIJOBS_JWT_SECRET: 'too-short-secret',
      DATABASE_URL: 'mysql://root:hunter2@x/db',
      OXICLOUD_DB_CONNECTION_STRING: 'mysql://root:swordfish@x/db',
    });
    expect(message).toContain('OXIJOBS_JWT_SECRET=(hidden): must be at least 32 characters');
    expect(message).toContain('DATABASE_URL=(hidden): must be a postgres:// or postgresql:// URL');
    expect(message).toContain(
      'OXICLOUD_DB_CONNECTION_STRING=(hidden): must be a postgres:// or postgresql:// URL',
    );
    expect(message).not.toContain('too-short-secret');
    expect(message).not.toContain('hunter2');
    expect(message).not.toContain('swordfish');
  });

  it("refuses production without OXIJOBS_JWT_SECRET, saying OxiCloud's OXICLOUD_JWT_SECRET does not count", () => {
    expect(problem({ OXICLOUD_ENV: 'production' })).toContain(
      'OXIJOBS_JWT_SECRET (unset): required when OXICLOUD_ENV=production',
    );
    expect(problem({ OXICLOUD_ENV: 'production', OXICLOUD_JWT_SECRET: 'o'.repeat(40) })).toContain(
      'OXIJOBS_JWT_SECRET (unset): required when OXICLOUD_ENV=production (at least 32 characters, e.g. `openssl rand -hex 32`); ' +
        "OXICLOUD_JWT_SECRET is set, but it is OxiCloud's session secret, which the engine never signs or verifies with",
    );
    expect(
      loadConfig({ OXICLOUD_ENV: 'production', OXIJOBS_JWT_SECRET: 'e'.repeat(32) }, '/srv').jwtSecret,
    ).toBe('e'.repeat(32));
  });

  it("OXIJOBS_JWT_SECRET is the token secret; OXICLOUD_JWT_SECRET (OxiCloud's) is never used, and the same value is refused", () => {
    const engine = 'e'.repeat(40);
    const oxicloud = 'o'.repeat(40);
    // Both set: the engine's own.
    const both = loadConfig({ OXIJOBS_JWT_SECRET: engine, OXICLOUD_JWT_SECRET: oxicloud }, '/srv');
    expect(both.jwtSecret).toBe(engine);
    expect(both.notices).toEqual([
      {
        level: 'warn',
        variable: 'OXICLOUD_JWT_SECRET',
        message:
          "OXICLOUD_JWT_SECRET is OxiCloud's session secret: the engine never signs or verifies a token with it; its own is OXIJOBS_JWT_SECRET",
      },
    ]);
    // Only OxiCloud's: not used (the generated one in the data folder is), and said so.
    const only = loadConfig({ OXICLOUD_JWT_SECRET: oxicloud }, '/srv');
    expect(only.jwtSecret).toBeUndefined();
    expect(only.notices[0]?.message).toContain(
      'its own is OXIJOBS_JWT_SECRET (unset: the secret in /srv/.oxicloud/jwt-secret is used)',
    );
    expect(JSON.stringify(only)).not.toContain(oxicloud);
    const same = problem({ OXIJOBS_JWT_SECRET: oxicloud, OXICLOUD_JWT_SECRET: oxicloud });
    expect(same).toContain(
      "OXIJOBS_JWT_SECRET=(hidden) has the value of OXICLOUD_JWT_SECRET, OxiCloud's session secret: the engine signs its admin tokens with a secret of its own",
    );
    expect(same).not.toContain(oxicloud);
  });

  it("OXICLOUD_DB_CONNECTION_STRING: OxiCloud's database, an alternative to DATABASE_URL; two different URLs are an error", () => {
    const url = 'postgres://oxicloud:pw@db:5432/oxicloud';
    expect(loadConfig({ OXICLOUD_DB_CONNECTION_STRING: url }, '/srv')).toMatchObject({
      databaseUrl: url,
      databaseUrlVar: 'OXICLOUD_DB_CONNECTION_STRING',
    });
    expect(
      loadConfig({ DATABASE_URL: url, OXICLOUD_DB_CONNECTION_STRING: ` ${url} ` }, '/srv'),
    ).toMatchObject({
      databaseUrl: url,
      databaseUrlVar: 'DATABASE_URL',
    });
    const message = problem({ DATABASE_URL: `${url}-jobs`, OXICLOUD_DB_CONNECTION_STRING: url });
    expect(message).toContain(
      'DATABASE_URL=(hidden) and OXICLOUD_DB_CONNECTION_STRING=(hidden) name different databases',
    );
    expect(message).not.toContain('pw@');
  });

  it("OXIJOBS_SCHEMA: the engine's own schema, never one of OxiCloud's or Postgres'", () => {
    expect(loadConfig({}, '/srv').engineSchema).toBeUndefined();
    expect(loadConfig({ OXIJOBS_SCHEMA: '' }, '/srv').engineSchema).toBeUndefined();
    expect(loadConfig({ OXIJOBS_SCHEMA: 'jobs' }, '/srv').engineSchema).toBe('jobs');
    expect(loadConfig({ OXIJOBS_SCHEMA: 'oxijobs_2' }, '/srv').engineSchema).toBe('oxijobs_2');
    expect(problem({ OXIJOBS_SCHEMA: 'storage' })).toContain(
      'OXIJOBS_SCHEMA="storage": "storage" is a schema of OxiCloud or of Postgres, not one the engine may own',
    );
    expect(problem({ OXIJOBS_SCHEMA: 'Jobs' })).toContain(
      'OXIJOBS_SCHEMA="Jobs": "Jobs" is not a schema name the engine takes: use lower-case letters',
    );
    expect(problem({ OXIJOBS_SCHEMA: 'pg_jobs' })).toContain('reserved by Postgres');
  });

  it("OXICLOUD_HTTP_PORT never takes OxiCloud's port: OXICLOUD_SERVER_PORT, or 8086 beside OxiCloud", () => {
    expect(problem({ OXICLOUD_SERVER_PORT: '8087' })).toContain(
      'OXICLOUD_HTTP_PORT (default) is OxiCloud\'s own HTTP port (OXICLOUD_SERVER_PORT="8087"): the engine listens beside OxiCloud ' +
        'on a port of its own; set OXICLOUD_HTTP_PORT to another one (default 8087)',
    );
    expect(problem({ OXICLOUD_SERVER_PORT: '9000', OXICLOUD_HTTP_PORT: '9000' })).toContain(
      'OXICLOUD_HTTP_PORT="9000" is OxiCloud\'s own HTTP port (OXICLOUD_SERVER_PORT="9000")',
    );
    // Beside OxiCloud (its database named) with OXICLOUD_SERVER_PORT unset, OxiCloud listens on 8086.
    expect(
      problem({ OXICLOUD_HTTP_PORT: '8086', OXICLOUD_DB_CONNECTION_STRING: 'postgres://db/oxicloud' }),
    ).toContain('(OXICLOUD_SERVER_PORT is unset: OxiCloud listens on 8086)');
    // A value OxiCloud cannot parse is its default 8086, as OxiCloud reads it.
    expect(problem({ OXICLOUD_HTTP_PORT: '8086', OXICLOUD_SERVER_PORT: 'http' })).toContain(
      'OXICLOUD_HTTP_PORT="8086" is OxiCloud\'s own HTTP port',
    );
    expect(loadConfig({ OXICLOUD_SERVER_PORT: '8086' }, '/srv').http.port).toBe(8087);
    // Not beside OxiCloud, 8086 is a port like any other.
    expect(loadConfig({ OXICLOUD_HTTP_PORT: '8086' }, '/srv').http.port).toBe(8086);
  });

  it("OXICLOUD_STORAGE_PATH is relative to where OxiCloud runs: OXIJOBS_OXICLOUD_WORKDIR, whose ./storage is OxiCloud's default", () => {
    const at = (env: Record<string, string>) => loadConfig(env, '/srv').backends;
    expect(at({ OXIJOBS_OXICLOUD_WORKDIR: '/opt/oxicloud', OXICLOUD_STORAGE_PATH: './data' })).toMatchObject({
      localRoot: '/opt/oxicloud/data',
      createLocalRoot: false,
    });
    expect(
      at({ OXIJOBS_OXICLOUD_WORKDIR: '/opt/oxicloud', OXICLOUD_STORAGE_PATH: '/mnt/blobs' }),
    ).toMatchObject({ localRoot: '/mnt/blobs' });
    // OXICLOUD_STORAGE_PATH unset: OxiCloud's own default, ./storage where it runs.
    expect(at({ OXIJOBS_OXICLOUD_WORKDIR: '/opt/oxicloud' })).toMatchObject({
      localRoot: '/opt/oxicloud/storage',
      createLocalRoot: false,
    });
    // A relative workdir is taken from this process's working folder.
    expect(at({ OXIJOBS_OXICLOUD_WORKDIR: '../oxicloud' })).toMatchObject({ localRoot: '/oxicloud/storage' });
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

  it("validates the S3 settings through s3ConfigFromEnv (OxiCloud's names, its default region)", () => {
    expect(problem({ OXICLOUD_STORAGE_BACKEND: 's3' })).toContain('OXICLOUD_S3_BUCKET is required');
    const config = loadConfig({ OXICLOUD_STORAGE_BACKEND: 's3', OXICLOUD_S3_BUCKET: 'blobs' });
    expect(config.storage).toMatchObject({ backend: 's3', s3: { bucket: 'blobs', region: 'us-east-1' } });
  });

  it("reads OxiCloud's environment file with OxiCloud's meaning, and none of its own switches touches the engine's jobs", () => {
    const key = randomBytes(32).toString('base64');
    const oxicloudEnv = {
      OXICLOUD_DB_CONNECTION_STRING: 'postgres://oxicloud:pw@db:5432/oxicloud',
      OXICLOUD_SERVER_HOST: '0.0.0.0',
      OXICLOUD_SERVER_PORT: '8086',
      OXICLOUD_STORAGE_PATH: './storage',
      OXICLOUD_STORAGE_BACKEND: 's3',
      OXICLOUD_S3_BUCKET: 'oxicloud',
      OXICLOUD_S3_ENDPOINT_URL: 'http://minio:9000',
      OXICLOUD_S3_ACCESS_KEY: 'minio',
      OXICLOUD_S3_SECRET_KEY: 'minio-secret',
      OXICLOUD_S3_FORCE_PATH_STYLE: 'true',
      OXICLOUD_STORAGE_ENCRYPTION_ENABLED: 'true',
      OXICLOUD_STORAGE_ENCRYPTION_KEY: key,
      OXICLOUD_JWT_SECRET: 'o'.repeat(64),
      OXICLOUD_SMTP_HOST: 'smtp.example.org',
      OXICLOUD_SMTP_PORT: '465',
      OXICLOUD_SMTP_TLS: 'tls',
      OXICLOUD_SMTP_USER: 'oxicloud',
      OXICLOUD_SMTP_PASS: 'smtp-pass',
      OXICLOUD_SMTP_FROM: 'OxiCloud <noreply@example.org>',
      OXICLOUD_ENABLE_TRASH: 'false',
      OXICLOUD_GRANT_CLEANUP_ENABLED: 'false',
      OXICLOUD_GRANT_CLEANUP_GRACE_DAYS: '3',
      OXICLOUD_GRANT_CLEANUP_INTERVAL_HOURS: '1',
      OXICLOUD_STORAGE_USAGE_RECONCILE_SECS: '30',
      OXICLOUD_LEGACY_RECHUNK: 'false',
    };
    const config = loadConfig({ ...oxicloudEnv, OXIJOBS_OXICLOUD_WORKDIR: '/opt/oxicloud' }, '/srv');
    expect(config).toMatchObject({
      databaseUrl: 'postgres://oxicloud:pw@db:5432/oxicloud',
      databaseUrlVar: 'OXICLOUD_DB_CONNECTION_STRING',
      jwtSecret: undefined,
      http: { host: '127.0.0.1', port: 8087 },
      storage: {
        backend: 's3',
        s3: {
          bucket: 'oxicloud',
          region: 'us-east-1',
          endpoint: 'http://minio:9000',
          accessKeyId: 'minio',
          secretAccessKey: 'minio-secret',
          forcePathStyle: true,
        },
      },
      backends: { localRoot: '/opt/oxicloud/storage', createLocalRoot: false },
    });
    expect(config.storageEncryption?.key.export().toString('base64')).toBe(key);
    expect(smtpConfigFromEnv(oxicloudEnv)).toEqual({
      host: 'smtp.example.org',
      port: 465,
      secure: 'tls',
      user: 'oxicloud',
      password: 'smtp-pass',
      from: 'OxiCloud <noreply@example.org>',
    });
    // OxiCloud's own switches: said at boot, and the jobs' configuration is the one of an empty environment.
    expect(config.notices.map((n) => [n.level, n.variable])).toEqual([
      ['warn', 'OXICLOUD_JWT_SECRET'],
      ['warn', 'OXICLOUD_GRANT_CLEANUP_INTERVAL_HOURS'],
      [
        'info',
        'OXICLOUD_ENABLE_TRASH,OXICLOUD_GRANT_CLEANUP_ENABLED,OXICLOUD_GRANT_CLEANUP_GRACE_DAYS,OXICLOUD_STORAGE_USAGE_RECONCILE_SECS,OXICLOUD_LEGACY_RECHUNK',
      ],
    ]);
    expect(config.notices[1]?.message).toBe(
      'OXICLOUD_GRANT_CLEANUP_INTERVAL_HOURS="1" sets OxiCloud\'s grant cleanup daemon, not the engine\'s grant_cleanup, ' +
        'whose period is OXIJOBS_GRANT_CLEANUP_INTERVAL_HOURS (unset: 24 h; OXICLOUD_GRANT_CLEANUP_INTERVAL_HOURS was its earlier name)',
    );
    expect(JSON.stringify(config.notices)).not.toContain('o'.repeat(64));
    expect(tenantConfigsFromEnv(oxicloudEnv)).toEqual(tenantConfigsFromEnv({}));
    // The engine's own name sets grant_cleanup's period.
    expect(
      tenantConfigsFromEnv({ ...oxicloudEnv, OXIJOBS_GRANT_CLEANUP_INTERVAL_HOURS: '0' }).grantCleanup
        .intervalMs,
    ).toBeNull();
    // OXICLOUD_TRASH_RETENTION_DAYS is OxiCloud's documented name with the same meaning: read.
    expect(tenantConfigsFromEnv({ OXICLOUD_TRASH_RETENTION_DAYS: '60' }).trashCleanup.retentionDays).toBe(60);
  });
});
