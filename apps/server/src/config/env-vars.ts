/**
 * Every environment variable the server itself reads, with its default and
 * meaning: the one table behind `oxijobs --help`, the config errors and the
 * README. Defaults are the values in {@link CONFIG_DEFAULTS}.
 */
export const CONFIG_DEFAULTS = {
  env: 'development',
  dataDir: './.oxicloud',
  httpPort: 8086,
  httpHost: '127.0.0.1',
  embeddedPostgresPort: 54329,
  logLevel: 'info',
  storageBackend: 'local',
} as const;

/** One row of the configuration table. */
export interface EnvVarDoc {
  readonly name: string;
  readonly default: string;
  readonly meaning: string;
}

export const ENV_VARS: readonly EnvVarDoc[] = [
  {
    name: 'DATABASE_URL',
    default: '(unset: embedded Postgres)',
    meaning: 'postgres:// URL of the database; unset = the embedded Postgres under OXICLOUD_DATA_DIR',
  },
  {
    name: 'OXICLOUD_DATA_DIR',
    default: CONFIG_DEFAULTS.dataDir,
    meaning:
      'embedded Postgres data (<dir>/postgres), local blobs (<dir>/blobs), generated JWT secret (<dir>/jwt-secret)',
  },
  { name: 'OXICLOUD_HTTP_PORT', default: String(CONFIG_DEFAULTS.httpPort), meaning: 'HTTP port (1-65535)' },
  {
    name: 'OXICLOUD_HTTP_HOST',
    default: CONFIG_DEFAULTS.httpHost,
    meaning: 'HTTP listen address (0.0.0.0 = all)',
  },
  {
    name: 'OXICLOUD_EMBEDDED_POSTGRES_PORT',
    default: String(CONFIG_DEFAULTS.embeddedPostgresPort),
    meaning: 'port of the embedded Postgres on 127.0.0.1 (ignored with DATABASE_URL)',
  },
  {
    name: 'OXICLOUD_JWT_SECRET',
    default: '(generated, <data dir>/jwt-secret)',
    meaning: 'HS256 secret of admin bearer tokens, at least 32 characters; required in production',
  },
  {
    name: 'OXICLOUD_ENV',
    default: CONFIG_DEFAULTS.env,
    meaning: 'development | production (production refuses to start without OXICLOUD_JWT_SECRET)',
  },
  {
    name: 'OXICLOUD_LOG_LEVEL',
    default: CONFIG_DEFAULTS.logLevel,
    meaning: 'fatal | error | warn | info | debug | trace | silent (JSON lines on stdout)',
  },
  {
    name: 'OXICLOUD_PUBLIC_BASE_URL',
    default: '(http://<host>:<port>)',
    meaning: 'the URL operators and alert e-mails use to reach this server',
  },
  {
    name: 'OXICLOUD_STORAGE_BACKEND',
    default: CONFIG_DEFAULTS.storageBackend,
    meaning:
      'local | s3 (s3 reads OXICLOUD_S3_BUCKET, _REGION, _ENDPOINT, _ACCESS_KEY_ID, _SECRET_ACCESS_KEY, _FORCE_PATH_STYLE, _PREFIX)',
  },
];

/** The variables as help text: one aligned line each. */
export function envVarsHelp(): string {
  const width = Math.max(...ENV_VARS.map((v) => v.name.length));
  const lines = ENV_VARS.map((v) => `  ${v.name.padEnd(width)}  ${v.meaning} [default: ${v.default}]`);
  return `\nEnvironment:\n${lines.join('\n')}\n\nJobs read their own knobs (OXICLOUD_TRASH_CLEANUP_*, OXICLOUD_TRASH_RETENTION_DAYS,\nOXICLOUD_STORAGE_USAGE_RECONCILE_*, OXICLOUD_DEDUP_GC_*, OXICLOUD_GRANT_CLEANUP_*, OXICLOUD_GRANTS_CONSISTENCY_*,\nOXICLOUD_JOB_<NAME>_*);\nalerts read OXICLOUD_SMTP_*. The README lists them all.\n`;
}
