import type { KeyObject } from 'node:crypto';
import { isAbsolute, join, resolve } from 'node:path';
import { MAX_BODY_BYTES_RANGE } from '@oxicloud/admin-api';
import { engineSchemaProblem, leaseSettings } from '@oxicloud/recoverable';
import {
  type S3BlobStorageOptions,
  StorageError,
  s3ConfigFromEnv,
  storageEncryptionFromEnv,
} from '@oxicloud/storage';
import { z } from 'zod';
import { ServerError } from '../server-error.js';
import { CONFIG_DEFAULTS, OXICLOUD_ONLY_VARS } from './env-vars.js';

/** The one storage domain (`OXICLOUD_STORAGE_DOMAIN`): OxiCloud's drive-era schema. */
export const STORAGE_DOMAIN = CONFIG_DEFAULTS.storageDomain;

/** The log levels pino knows. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** How log lines are written: JSON lines, or readable lines for a person at a terminal. */
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * Where the blobs live. `root` of the local backend is a storage root in
 * OxiCloud's sense (`OXICLOUD_STORAGE_PATH`): the blobs are under
 * `<root>/.blobs/<aa>/<hash>.blob`.
 */
export type BlobStorageConfig =
  | { readonly backend: 'local'; readonly root: string }
  | { readonly backend: 's3'; readonly s3: S3BlobStorageOptions };

/** Encryption at rest (`OXICLOUD_STORAGE_ENCRYPTION_ENABLED=true`): the AES-256 key, as a `KeyObject` that never prints. */
export interface StorageEncryptionConfig {
  readonly key: KeyObject;
}

/**
 * Something about the environment the server says at boot without refusing
 * it: an OxiCloud setting that is set but never read for the engine (its
 * session secret, its own daemons' switches).
 */
export interface ConfigNotice {
  readonly level: 'warn' | 'info';
  /** The variable it is about. */
  readonly variable: string;
  readonly message: string;
}

/** The validated configuration of the server and the CLI. */
export interface ServerConfig {
  readonly env: 'development' | 'production';
  /**
   * `DATABASE_URL`, else OxiCloud's `OXICLOUD_DB_CONNECTION_STRING` (the
   * two, when both set, name the same database); `undefined` = use the
   * embedded Postgres.
   */
  readonly databaseUrl: string | undefined;
  /** Which variable {@link databaseUrl} came from. */
  readonly databaseUrlVar: 'DATABASE_URL' | 'OXICLOUD_DB_CONNECTION_STRING' | undefined;
  /**
   * `OXIJOBS_SCHEMA`: the engine's own Postgres schema (validated with
   * `engineSchemaProblem`). `undefined` = the server picks one: `jobs` on a
   * database of its own, `oxijobs` beside OxiCloud.
   */
  readonly engineSchema: string | undefined;
  /** Absolute. */
  readonly dataDir: string;
  /** `<dataDir>/postgres`: the embedded Postgres cluster. */
  readonly postgresDir: string;
  readonly embeddedPostgresPort: number;
  readonly http: {
    readonly host: string;
    readonly port: number;
    /** The largest request body the admin API reads (`OXICLOUD_HTTP_MAX_BODY_BYTES`). */
    readonly maxBodyBytes: number;
  };
  /**
   * `OXIJOBS_JWT_SECRET`, the engine's own token secret (never OxiCloud's
   * `OXICLOUD_JWT_SECRET`, which is never read for it). `undefined` =
   * generated and kept in `<dataDir>/jwt-secret` (not allowed in production).
   */
  readonly jwtSecret: string | undefined;
  readonly logLevel: LogLevel;
  /** How long a run's batch loop rides out a database outage before the run lands Paused (`OXICLOUD_DATABASE_RETRY_SECONDS`). */
  readonly databaseRetryMs: number;
  /**
   * Leases of recoverable runs (`OXICLOUD_RUN_LEASE_SECONDS`,
   * `OXICLOUD_RUN_HEARTBEAT_SECONDS`, `OXICLOUD_RUN_JANITOR_SECONDS`), in ms.
   */
  readonly runLeases: {
    readonly leaseMs: number;
    readonly heartbeatMs: number;
    readonly janitorIntervalMs: number;
  };
  /** `undefined` = readable lines when the output is a terminal, JSON lines otherwise. */
  readonly logFormat: LogFormat | undefined;
  /** The address the first admin gets (`OXICLOUD_ADMIN_EMAIL`), for alerts. */
  readonly adminEmail: string | undefined;
  /** No trailing slash. */
  readonly publicBaseUrl: string;
  readonly storage: BlobStorageConfig;
  /**
   * `OXICLOUD_STORAGE_DOMAIN`: the storage domain an empty database is
   * migrated to and the jobs are wired on: `oxicloud` (OxiCloud's drive-era
   * schema), the only one (the engine's old model, `engine`, is removed).
   */
  readonly storageDomain: typeof STORAGE_DOMAIN;
  /**
   * `OXICLOUD_STORAGE_ENCRYPTION_ENABLED` / `_KEY`: every backend this server
   * reads and writes holds OxiCloud's encrypted format; `null` = plaintext.
   */
  readonly storageEncryption: StorageEncryptionConfig | null;
  /**
   * Every backend this server can reach, for `storage_migration` targets:
   * `local` always (the storage root `OXICLOUD_STORAGE_PATH`, default
   * `<dataDir>/storage`), `s3` when `OXICLOUD_S3_BUCKET` is set (whatever
   * `OXICLOUD_STORAGE_BACKEND` says).
   */
  readonly backends: {
    readonly localRoot: string;
    /**
     * Whether the server creates `localRoot` when it is missing: only the
     * default `<dataDir>/storage`. A storage root named by
     * `OXICLOUD_STORAGE_PATH` (OxiCloud's) is never created, so a wrong path
     * fails the listing (and the migration target's health) instead of
     * passing for an empty store.
     */
    readonly createLocalRoot: boolean;
    readonly s3: S3BlobStorageOptions | null;
  };
  /** What `serve` says at boot about the environment (OxiCloud's settings set but not read for the engine). */
  readonly notices: readonly ConfigNotice[];
}

/** Variables whose values never appear in error messages. */
const SECRET_VARS = new Set([
  'OXIJOBS_JWT_SECRET',
  'OXICLOUD_JWT_SECRET',
  'DATABASE_URL',
  'OXICLOUD_DB_CONNECTION_STRING',
  'OXICLOUD_STORAGE_ENCRYPTION_KEY',
]);

const unsetIfEmpty = (value: unknown) =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

const port = (fallback: number) =>
  z.preprocess(
    unsetIfEmpty,
    z
      .string()
      .regex(/^\d+$/, { error: 'must be an integer from 1 to 65535' })
      .transform(Number)
      .pipe(
        z
          .number()
          .int()
          .min(1, { error: 'must be from 1 to 65535' })
          .max(65535, { error: 'must be from 1 to 65535' }),
      )
      .default(fallback),
  );

const byteCount = (fallback: number, min: number, max: number) =>
  z.preprocess(
    unsetIfEmpty,
    z
      .string()
      .regex(/^\d+$/, { error: `must be a plain decimal integer from ${min} to ${max} (bytes)` })
      .transform(Number)
      .pipe(
        z
          .number()
          .int()
          .min(min, { error: `must be from ${min} to ${max} (bytes)` })
          .max(max, { error: `must be from ${min} to ${max} (bytes)` }),
      )
      .default(fallback),
  );

const wholeSeconds = (fallback: number, min: number, max: number) =>
  z.preprocess(
    unsetIfEmpty,
    z
      .string()
      .regex(/^\d+$/, { error: `must be a whole number of seconds from ${min} to ${max}` })
      .transform(Number)
      .pipe(
        z
          .number()
          .int()
          .min(min, { error: `must be a whole number of seconds from ${min} to ${max}` })
          .max(max, { error: `must be a whole number of seconds from ${min} to ${max}` }),
      )
      .default(fallback),
  );

const oneOf = <const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
  z.preprocess(
    (v) => (typeof unsetIfEmpty(v) === 'string' ? (v as string).trim().toLowerCase() : undefined),
    z.enum(values, { error: `must be one of ${values.join(', ')}` }).default(fallback as never),
  );

const httpUrl = z.preprocess(
  unsetIfEmpty,
  z
    .string()
    .refine((v) => /^https?:$/.test(URL.canParse(v) ? new URL(v).protocol : ''), {
      error: 'must be an http:// or https:// URL, for example https://jobs.example.org',
    })
    .optional(),
);

const postgresUrl = z.preprocess(
  (v) => (typeof unsetIfEmpty(v) === 'string' ? (v as string).trim() : undefined),
  z
    .string()
    .refine((v) => /^postgres(ql)?:$/.test(URL.canParse(v) ? new URL(v).protocol : ''), {
      error: 'must be a postgres:// or postgresql:// URL (or unset for the embedded Postgres)',
    })
    .optional(),
);

const EnvSchema = z.object({
  DATABASE_URL: postgresUrl,
  OXICLOUD_DB_CONNECTION_STRING: postgresUrl,
  OXIJOBS_SCHEMA: z.preprocess(
    (v) => (typeof unsetIfEmpty(v) === 'string' ? (v as string).trim() : undefined),
    z
      .string()
      .superRefine((name, ctx) => {
        const problem = engineSchemaProblem(name);
        if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
  ),
  OXICLOUD_DATA_DIR: z.preprocess(unsetIfEmpty, z.string().default(CONFIG_DEFAULTS.dataDir)),
  OXICLOUD_HTTP_PORT: port(CONFIG_DEFAULTS.httpPort),
  OXICLOUD_HTTP_HOST: z.preprocess(
    unsetIfEmpty,
    z
      .string()
      .regex(/^[A-Za-z0-9.:[\]-]+$/, {
        error: 'must be a host name or IP address, for example 127.0.0.1 or 0.0.0.0',
      })
      .default(CONFIG_DEFAULTS.httpHost),
  ),
  OXICLOUD_HTTP_MAX_BODY_BYTES: byteCount(
    CONFIG_DEFAULTS.httpMaxBodyBytes,
    MAX_BODY_BYTES_RANGE.min,
    MAX_BODY_BYTES_RANGE.max,
  ),
  OXICLOUD_EMBEDDED_POSTGRES_PORT: port(CONFIG_DEFAULTS.embeddedPostgresPort),
  OXIJOBS_JWT_SECRET: z.preprocess(
    unsetIfEmpty,
    z.string().min(32, { error: 'must be at least 32 characters (HS256 needs 256 bits)' }).optional(),
  ),
  OXICLOUD_ENV: oneOf(['development', 'production'], CONFIG_DEFAULTS.env),
  OXICLOUD_LOG_LEVEL: oneOf(LOG_LEVELS, CONFIG_DEFAULTS.logLevel),
  OXICLOUD_DATABASE_RETRY_SECONDS: z.preprocess(
    unsetIfEmpty,
    z
      .string()
      .regex(/^\d+$/, { error: 'must be a whole number of seconds from 0 to 86400' })
      .transform(Number)
      .pipe(z.number().int().max(86_400, { error: 'must be a whole number of seconds from 0 to 86400' }))
      .default(CONFIG_DEFAULTS.databaseRetrySeconds),
  ),
  OXICLOUD_RUN_LEASE_SECONDS: wholeSeconds(CONFIG_DEFAULTS.runLeaseSeconds, 2, 86_400),
  OXICLOUD_RUN_HEARTBEAT_SECONDS: wholeSeconds(CONFIG_DEFAULTS.runHeartbeatSeconds, 1, 43_200),
  OXICLOUD_RUN_JANITOR_SECONDS: wholeSeconds(CONFIG_DEFAULTS.runJanitorSeconds, 1, 86_400),
  OXICLOUD_LOG_FORMAT: z.preprocess(
    (v) => (typeof unsetIfEmpty(v) === 'string' ? (v as string).trim().toLowerCase() : undefined),
    z
      .enum(LOG_FORMATS, {
        error: `must be one of ${LOG_FORMATS.join(', ')} (unset: pretty at a terminal, JSON otherwise)`,
      })
      .optional(),
  ),
  OXICLOUD_ADMIN_EMAIL: z.preprocess(
    (v) => (typeof unsetIfEmpty(v) === 'string' ? (v as string).trim() : undefined),
    z.email({ error: 'must be an e-mail address, for example ops@example.org' }).optional(),
  ),
  OXICLOUD_PUBLIC_BASE_URL: httpUrl,
  OXICLOUD_STORAGE_BACKEND: oneOf(['local', 's3'], CONFIG_DEFAULTS.storageBackend),
  OXICLOUD_STORAGE_DOMAIN: z.preprocess(
    (v) => (typeof unsetIfEmpty(v) === 'string' ? (v as string).trim().toLowerCase() : undefined),
    z
      .literal(STORAGE_DOMAIN, {
        error: `must be ${STORAGE_DOMAIN}, the only storage domain (engine, the old storage model, is removed)`,
      })
      .default(STORAGE_DOMAIN),
  ),
  OXICLOUD_STORAGE_PATH: z.preprocess(unsetIfEmpty, z.string().optional()),
  OXIJOBS_OXICLOUD_WORKDIR: z.preprocess(unsetIfEmpty, z.string().optional()),
});

type Env = Readonly<Record<string, string | undefined>>;

function describeValue(env: Env, name: string): string {
  if (!(name in env) || env[name] === undefined) return `${name} (unset)`;
  return SECRET_VARS.has(name) ? `${name}=(hidden)` : `${name}=${JSON.stringify(env[name])}`;
}

function configError(problems: string[]): ServerError {
  return new ServerError(
    'BAD_CONFIG',
    `invalid configuration:\n  - ${problems.join('\n  - ')}\nRun \`oxijobs --help\` for every variable and its default.`,
  );
}

/**
 * Reads and validates the server's configuration from `env`, with every
 * default from `CONFIG_DEFAULTS`. Throws one {@link ServerError}
 * `BAD_CONFIG` listing every problem: which variable, the bad value (never a
 * secret's) and what is allowed.
 *
 * @example
 * ```ts
 * const config = loadConfig(process.env);
 * ```
 */
export function loadConfig(env: Env, cwd: string = process.cwd()): ServerConfig {
  const parsed = EnvSchema.safeParse(env);
  const problems: string[] = parsed.success
    ? []
    : parsed.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? '(environment)');
        if (name === 'OXICLOUD_STORAGE_BACKEND' && env[name]?.trim().toLowerCase() === 'azure') {
          return `${describeValue(env, name)}: OxiCloud's Azure backend is not one this engine reads; ${issue.message}`;
        }
        return `${describeValue(env, name)}: ${issue.message}`;
      });
  const production = env['OXICLOUD_ENV']?.trim().toLowerCase() === 'production';
  const engineSecret = set(env, 'OXIJOBS_JWT_SECRET');
  const oxicloudSecret = set(env, 'OXICLOUD_JWT_SECRET');
  if (production && engineSecret === undefined) {
    problems.push(
      'OXIJOBS_JWT_SECRET (unset): required when OXICLOUD_ENV=production (at least 32 characters, e.g. `openssl rand -hex 32`)' +
        (oxicloudSecret === undefined
          ? ''
          : "; OXICLOUD_JWT_SECRET is set, but it is OxiCloud's session secret, which the engine never signs or verifies with: give the engine a secret of its own"),
    );
  }
  if (engineSecret !== undefined && engineSecret === oxicloudSecret) {
    problems.push(
      "OXIJOBS_JWT_SECRET=(hidden) has the value of OXICLOUD_JWT_SECRET, OxiCloud's session secret: the engine signs its admin tokens " +
        "with a secret of its own, never OxiCloud's; give it another one (e.g. `openssl rand -hex 32`)",
    );
  }
  const databaseUrl = set(env, 'DATABASE_URL');
  const oxicloudDatabaseUrl = set(env, 'OXICLOUD_DB_CONNECTION_STRING');
  if (
    databaseUrl !== undefined &&
    oxicloudDatabaseUrl !== undefined &&
    databaseUrl.trim() !== oxicloudDatabaseUrl.trim()
  ) {
    problems.push(
      "DATABASE_URL=(hidden) and OXICLOUD_DB_CONNECTION_STRING=(hidden) name different databases: OXICLOUD_DB_CONNECTION_STRING is OxiCloud's database, " +
        'and the engine runs on one database; set only one of them (or both to the same URL)',
    );
  }
  if (!parsed.success) throw configError(problems);
  const v = parsed.data;
  const dataDir = isAbsolute(v.OXICLOUD_DATA_DIR) ? v.OXICLOUD_DATA_DIR : resolve(cwd, v.OXICLOUD_DATA_DIR);
  // OxiCloud resolves its (relative) storage path against the folder it runs in: OXIJOBS_OXICLOUD_WORKDIR.
  const workdir =
    v.OXIJOBS_OXICLOUD_WORKDIR === undefined ? undefined : resolve(cwd, v.OXIJOBS_OXICLOUD_WORKDIR);
  const storagePath =
    v.OXICLOUD_STORAGE_PATH ?? (workdir === undefined ? undefined : CONFIG_DEFAULTS.oxicloudStoragePath);
  const localRoot =
    storagePath === undefined
      ? join(dataDir, CONFIG_DEFAULTS.storageDirName)
      : resolve(workdir ?? cwd, storagePath);
  const besideOxiCloud =
    set(env, 'OXICLOUD_SERVER_PORT') !== undefined ||
    oxicloudDatabaseUrl !== undefined ||
    workdir !== undefined;
  const oxicloudPort = besideOxiCloud ? oxicloudServerPort(env) : undefined;
  if (oxicloudPort !== undefined && oxicloudPort === v.OXICLOUD_HTTP_PORT) {
    const why =
      set(env, 'OXICLOUD_SERVER_PORT') === undefined
        ? `OxiCloud's own HTTP port (OXICLOUD_SERVER_PORT is unset: OxiCloud listens on ${CONFIG_DEFAULTS.oxicloudServerPort})`
        : `OxiCloud's own HTTP port (OXICLOUD_SERVER_PORT=${JSON.stringify(env['OXICLOUD_SERVER_PORT'])})`;
    problems.push(
      `OXICLOUD_HTTP_PORT${set(env, 'OXICLOUD_HTTP_PORT') === undefined ? ' (default)' : `=${JSON.stringify(env['OXICLOUD_HTTP_PORT'])}`} is ${why}: ` +
        `the engine listens beside OxiCloud on a port of its own; set OXICLOUD_HTTP_PORT to another one (default ${CONFIG_DEFAULTS.httpPort})`,
    );
  }
  let storage: BlobStorageConfig = { backend: 'local', root: localRoot };
  if (v.OXICLOUD_STORAGE_BACKEND === 's3') {
    try {
      storage = { backend: 's3', s3: s3ConfigFromEnv(env) };
    } catch (cause) {
      if (!(cause instanceof StorageError)) throw cause;
      problems.push(`OXICLOUD_STORAGE_BACKEND=s3: ${cause.message.replace(/\n- /g, '\n      - ')}`);
    }
  }
  let s3: S3BlobStorageOptions | null = storage.backend === 's3' ? storage.s3 : null;
  if (s3 === null && (env['OXICLOUD_S3_BUCKET'] ?? '').trim() !== '') {
    try {
      s3 = s3ConfigFromEnv(env);
    } catch (cause) {
      if (!(cause instanceof StorageError)) throw cause;
      problems.push(`OXICLOUD_S3_BUCKET is set: ${cause.message.replace(/\n- /g, '\n      - ')}`);
    }
  }
  let storageEncryption: StorageEncryptionConfig | null = null;
  try {
    storageEncryption = storageEncryptionFromEnv(env);
  } catch (cause) {
    if (!(cause instanceof StorageError)) throw cause;
    problems.push(cause.message);
  }
  const runLeases = {
    leaseMs: v.OXICLOUD_RUN_LEASE_SECONDS * 1000,
    heartbeatMs: v.OXICLOUD_RUN_HEARTBEAT_SECONDS * 1000,
    janitorIntervalMs: v.OXICLOUD_RUN_JANITOR_SECONDS * 1000,
  };
  try {
    leaseSettings(runLeases);
  } catch {
    const trustMs = leaseSettings({ leaseMs: runLeases.leaseMs, heartbeatMs: 100 }).trustMs;
    problems.push(
      `OXICLOUD_RUN_HEARTBEAT_SECONDS=${v.OXICLOUD_RUN_HEARTBEAT_SECONDS} with OXICLOUD_RUN_LEASE_SECONDS=${v.OXICLOUD_RUN_LEASE_SECONDS}: ` +
        `the heartbeat must be at most half the lease's trust window (${trustMs / 1000} s of a ${v.OXICLOUD_RUN_LEASE_SECONDS} s lease), ` +
        `so one missed renewal does not lose the lease: at most ${Math.floor(trustMs / 2000)} s here`,
    );
  }
  if (problems.length > 0) throw configError(problems);
  const host = v.OXICLOUD_HTTP_HOST;
  const shownHost =
    host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    env: v.OXICLOUD_ENV,
    databaseUrl: v.DATABASE_URL ?? v.OXICLOUD_DB_CONNECTION_STRING,
    databaseUrlVar:
      v.DATABASE_URL !== undefined
        ? 'DATABASE_URL'
        : v.OXICLOUD_DB_CONNECTION_STRING !== undefined
          ? 'OXICLOUD_DB_CONNECTION_STRING'
          : undefined,
    engineSchema: v.OXIJOBS_SCHEMA,
    dataDir,
    postgresDir: join(dataDir, 'postgres'),
    embeddedPostgresPort: v.OXICLOUD_EMBEDDED_POSTGRES_PORT,
    http: { host, port: v.OXICLOUD_HTTP_PORT, maxBodyBytes: v.OXICLOUD_HTTP_MAX_BODY_BYTES },
    jwtSecret: v.OXIJOBS_JWT_SECRET,
    logLevel: v.OXICLOUD_LOG_LEVEL,
    databaseRetryMs: v.OXICLOUD_DATABASE_RETRY_SECONDS * 1000,
    runLeases,
    logFormat: v.OXICLOUD_LOG_FORMAT,
    adminEmail: v.OXICLOUD_ADMIN_EMAIL,
    publicBaseUrl: (v.OXICLOUD_PUBLIC_BASE_URL ?? `http://${shownHost}:${v.OXICLOUD_HTTP_PORT}`).replace(
      /\/+$/,
      '',
    ),
    storage,
    storageDomain: v.OXICLOUD_STORAGE_DOMAIN,
    storageEncryption,
    backends: { localRoot, createLocalRoot: storagePath === undefined, s3 },
    notices: configNotices(env, dataDir),
  };
}

/** A variable's value when set to something other than blanks (as is: a secret keeps its spaces). */
function set(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}

/**
 * OxiCloud's HTTP port as OxiCloud reads it: `OXICLOUD_SERVER_PORT` when it
 * parses as a port, else its default 8086 (OxiCloud ignores a value it cannot
 * parse); `undefined` for 0 (a port the system picks collides with nothing).
 */
function oxicloudServerPort(env: Env): number | undefined {
  const raw = env['OXICLOUD_SERVER_PORT']?.trim() ?? '';
  const port =
    /^\d{1,5}$/.test(raw) && Number(raw) <= 65_535 ? Number(raw) : CONFIG_DEFAULTS.oxicloudServerPort;
  return port === 0 ? undefined : port;
}

/** OxiCloud's settings that are set but never read for the engine, said at boot (never their values). */
function configNotices(env: Env, dataDir: string): ConfigNotice[] {
  const notices: ConfigNotice[] = [];
  if (set(env, 'OXICLOUD_JWT_SECRET') !== undefined) {
    notices.push({
      level: 'warn',
      variable: 'OXICLOUD_JWT_SECRET',
      message:
        "OXICLOUD_JWT_SECRET is OxiCloud's session secret: the engine never signs or verifies a token with it; its own is OXIJOBS_JWT_SECRET" +
        (set(env, 'OXIJOBS_JWT_SECRET') === undefined
          ? ` (unset: the secret in ${join(dataDir, 'jwt-secret')} is used)`
          : ''),
    });
  }
  const interval = env['OXICLOUD_GRANT_CLEANUP_INTERVAL_HOURS'];
  if (set(env, 'OXICLOUD_GRANT_CLEANUP_INTERVAL_HOURS') !== undefined) {
    const own = set(env, 'OXIJOBS_GRANT_CLEANUP_INTERVAL_HOURS') !== undefined;
    notices.push({
      level: own ? 'info' : 'warn',
      variable: 'OXICLOUD_GRANT_CLEANUP_INTERVAL_HOURS',
      message:
        `OXICLOUD_GRANT_CLEANUP_INTERVAL_HOURS=${JSON.stringify(interval)} sets OxiCloud's grant cleanup daemon, not the engine's grant_cleanup, ` +
        `whose period is OXIJOBS_GRANT_CLEANUP_INTERVAL_HOURS (${own ? 'set' : 'unset: 24 h'}; OXICLOUD_GRANT_CLEANUP_INTERVAL_HOURS was its earlier name)`,
    });
  }
  const others = OXICLOUD_ONLY_VARS.map((v) => v.name).filter(
    (name) =>
      name !== 'OXICLOUD_JWT_SECRET' &&
      name !== 'OXICLOUD_GRANT_CLEANUP_INTERVAL_HOURS' &&
      set(env, name) !== undefined,
  );
  if (others.length > 0) {
    notices.push({
      level: 'info',
      variable: others.join(','),
      message: `${others.join(', ')}: OxiCloud's own settings, read by OxiCloud for its own daemons and never for this engine's jobs (their settings: \`oxijobs serve --help\`)`,
    });
  }
  return notices;
}
