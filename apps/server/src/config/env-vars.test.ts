import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_VARS, ENV_VARS, envVarsHelp, OXICLOUD_ONLY_VARS, SMTP_VARS } from './env-vars.js';

/**
 * Configuration names OxiCloud itself reads (its environment reference,
 * docs/config/env.md, and fact sheet §13): the ones near this engine's own.
 * A name here that the engine also reads must mean the same thing to both.
 */
const OXICLOUD_NAMES = new Set([
  'OXICLOUD_DB_CONNECTION_STRING',
  'OXICLOUD_DB_MAX_CONNECTIONS',
  'OXICLOUD_DB_MIN_CONNECTIONS',
  'OXICLOUD_DB_POOL_MONITOR_INTERVAL_SECS',
  'OXICLOUD_DB_STATEMENT_TIMEOUT_SECS',
  'OXICLOUD_SERVER_HOST',
  'OXICLOUD_SERVER_PORT',
  'OXICLOUD_BASE_URL',
  'OXICLOUD_BASE_PATH',
  'OXICLOUD_METRICS_LISTEN',
  'OXICLOUD_TEMP_DIR',
  'OXICLOUD_STARTUP_JOBS',
  'OXICLOUD_STORAGE_PATH',
  'OXICLOUD_STORAGE_BACKEND',
  'OXICLOUD_S3_BUCKET',
  'OXICLOUD_S3_REGION',
  'OXICLOUD_S3_ACCESS_KEY',
  'OXICLOUD_S3_SECRET_KEY',
  'OXICLOUD_S3_ENDPOINT_URL',
  'OXICLOUD_S3_FORCE_PATH_STYLE',
  'OXICLOUD_AZURE_ACCOUNT_NAME',
  'OXICLOUD_AZURE_ACCOUNT_KEY',
  'OXICLOUD_AZURE_CONTAINER',
  'OXICLOUD_AZURE_SAS_TOKEN',
  'OXICLOUD_AZURE_ENDPOINT_URL',
  'OXICLOUD_STORAGE_CACHE_ENABLED',
  'OXICLOUD_STORAGE_CACHE_MAX_SIZE',
  'OXICLOUD_STORAGE_CACHE_PATH',
  'OXICLOUD_STORAGE_ENCRYPTION_ENABLED',
  'OXICLOUD_STORAGE_ENCRYPTION_KEY',
  'OXICLOUD_STORAGE_RETRY_ENABLED',
  'OXICLOUD_STORAGE_USAGE_RECONCILE_SECS',
  'OXICLOUD_CHUNK_DIR',
  'OXICLOUD_LEGACY_RECHUNK',
  'OXICLOUD_JWT_SECRET',
  'OXICLOUD_ACCESS_TOKEN_EXPIRY_SECS',
  'OXICLOUD_REFRESH_TOKEN_EXPIRY_SECS',
  'OXICLOUD_ENABLE_AUTH',
  'OXICLOUD_ENABLE_TRASH',
  'OXICLOUD_ENABLE_SEARCH',
  'OXICLOUD_ENABLE_CONTENT_SEARCH',
  'OXICLOUD_ENABLE_MUSIC',
  'OXICLOUD_ENABLE_ADMIN_INTERNAL_ENDPOINTS',
  'OXICLOUD_GRANT_CLEANUP_ENABLED',
  'OXICLOUD_GRANT_CLEANUP_GRACE_DAYS',
  'OXICLOUD_GRANT_CLEANUP_INTERVAL_HOURS',
  'OXICLOUD_TRASH_RETENTION_DAYS',
  'OXICLOUD_NOTIFICATIONS_RETENTION_DAYS',
  'OXICLOUD_TREE_ETAG_FLUSH_MS',
  'OXICLOUD_SMTP_HOST',
  'OXICLOUD_SMTP_PORT',
  'OXICLOUD_SMTP_USER',
  'OXICLOUD_SMTP_PASS',
  'OXICLOUD_SMTP_FROM',
  'OXICLOUD_SMTP_TLS',
  'OXICLOUD_SMTP_MOCK',
  'OXICLOUD_WOPI_SECRET',
]);

const engineRead = [...ENV_VARS, ...SMTP_VARS, ...CLIENT_VARS];

describe('the configuration names', () => {
  it("every OxiCloud name the engine reads is documented as OxiCloud's, with OxiCloud's meaning", () => {
    const shared = engineRead.filter((v) => OXICLOUD_NAMES.has(v.name));
    expect(shared.map((v) => v.name).sort()).toEqual(
      [
        'OXICLOUD_DB_CONNECTION_STRING',
        'OXICLOUD_SERVER_PORT',
        'OXICLOUD_STORAGE_BACKEND',
        'OXICLOUD_STORAGE_PATH',
        'OXICLOUD_STORAGE_ENCRYPTION_ENABLED',
        'OXICLOUD_STORAGE_ENCRYPTION_KEY',
        'OXICLOUD_SMTP_HOST',
        'OXICLOUD_SMTP_PORT',
        'OXICLOUD_SMTP_USER',
        'OXICLOUD_SMTP_PASS',
        'OXICLOUD_SMTP_FROM',
        'OXICLOUD_SMTP_TLS',
      ].sort(),
    );
    for (const v of shared) {
      expect(v.meaning, v.name).toMatch(/OxiCloud's|as OxiCloud/);
    }
  });

  it("the engine's own names are OXIJOBS_* or names OxiCloud does not read; OxiCloud's own switches are never the engine's", () => {
    for (const v of engineRead.filter((e) => !OXICLOUD_NAMES.has(e.name))) {
      expect(v.name, v.name).toMatch(/^(OXIJOBS_|OXICLOUD_|DATABASE_URL$)/);
    }
    const own = new Set(engineRead.map((v) => v.name));
    for (const v of OXICLOUD_ONLY_VARS) {
      expect(OXICLOUD_NAMES.has(v.name), v.name).toBe(true);
      expect(own.has(v.name), `${v.name} is OxiCloud's only`).toBe(false);
    }
    expect(own.has('OXIJOBS_JWT_SECRET')).toBe(true);
    expect(own.has('OXICLOUD_JWT_SECRET')).toBe(false);
  });

  it('the README configuration table lists every variable the help lists', () => {
    const readme = readFileSync(new URL('../../../../README.md', import.meta.url), 'utf8');
    const table = readme.slice(
      readme.indexOf('<!-- config-table:start -->'),
      readme.indexOf('<!-- config-table:end -->'),
    );
    expect(table.length).toBeGreaterThan(1000);
    for (const v of [...engineRead, ...OXICLOUD_ONLY_VARS]) {
      expect(table, v.name).toContain(`\`${v.name}\``);
    }
    // The help lists the same, OxiCloud's own last.
    const help = envVarsHelp();
    for (const v of [...ENV_VARS, ...SMTP_VARS]) expect(help, v.name).toContain(`  ${v.name} `);
    for (const v of OXICLOUD_ONLY_VARS) expect(help, v.name).toContain(`  ${v.name}: `);
  });
});
