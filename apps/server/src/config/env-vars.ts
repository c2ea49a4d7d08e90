import { WRITE_JOBS } from '../domain/write-jobs.js';
/**
 * Every environment variable the server itself reads, with its default and
 * meaning: the one table behind `oxijobs --help`, the config errors and the
 * README. Defaults are the values in {@link CONFIG_DEFAULTS}.
 *
 * Three kinds of names (the engine runs beside a real OxiCloud, started with
 * OxiCloud's own environment file):
 * - OxiCloud's names read with OxiCloud's meaning (`OXICLOUD_DB_CONNECTION_STRING`,
 *   `OXICLOUD_STORAGE_*`, `OXICLOUD_S3_*`, `OXICLOUD_SMTP_*`, …): the same
 *   value means the same thing to both;
 * - the engine's own: `OXIJOBS_*` wherever the `OXICLOUD_*` name is
 *   OxiCloud's with another meaning (`OXIJOBS_JWT_SECRET`, never
 *   `OXICLOUD_JWT_SECRET`), and the engine's `OXICLOUD_*` names OxiCloud does
 *   not read (`OXICLOUD_HTTP_PORT`, `OXICLOUD_DATA_DIR`, …);
 * - OxiCloud's own switches ({@link OXICLOUD_ONLY_VARS}), never read for the
 *   engine's jobs.
 */
export const CONFIG_DEFAULTS = {
  env: 'development',
  dataDir: './.oxicloud',
  /** Not OxiCloud's 8086 (`OXICLOUD_SERVER_PORT`), so the two can run side by side. */
  httpPort: 8087,
  /** OxiCloud's HTTP port when `OXICLOUD_SERVER_PORT` is unset. */
  oxicloudServerPort: 8086,
  httpHost: '127.0.0.1',
  embeddedPostgresPort: 54329,
  logLevel: 'info',
  storageBackend: 'local',
  /** The storage domain the server migrates and runs on (`OXICLOUD_STORAGE_DOMAIN`): OxiCloud's. */
  storageDomain: 'oxicloud',
  /** The local backend's storage root under the data folder, when `OXICLOUD_STORAGE_PATH` is unset. */
  storageDirName: 'storage',
  /** OxiCloud's own default storage root (`OXICLOUD_STORAGE_PATH` unset), relative to where OxiCloud runs. */
  oxicloudStoragePath: './storage',
  databaseRetrySeconds: 60,
  runLeaseSeconds: 30,
  runHeartbeatSeconds: 10,
  runJanitorSeconds: 10,
  /** 64 KiB: run params are a small JSON object. */
  httpMaxBodyBytes: 64 * 1024,
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
    meaning:
      'postgres:// URL of the database; with it and OXICLOUD_DB_CONNECTION_STRING both unset, the embedded Postgres under OXICLOUD_DATA_DIR',
  },
  {
    name: 'OXICLOUD_DB_CONNECTION_STRING',
    default: '(unset)',
    meaning:
      "OxiCloud's database URL (OxiCloud's name and meaning): the engine runs on OxiCloud's database; an alternative to DATABASE_URL (both set to different URLs is an error); OxiCloud's own default when unset is not assumed",
  },
  {
    name: 'OXIJOBS_SCHEMA',
    default: '(on a database of its own jobs; beside OxiCloud a schema named oxijobs)',
    meaning:
      "the engine's own Postgres schema (runs, findings, nodes): lower-case letters, digits and _, never one of OxiCloud's (public, auth, storage, audio, caldav, carddav) nor pg_*",
  },
  {
    name: 'OXIJOBS_WRITE_JOBS',
    default: '(unset: none beside OxiCloud)',
    meaning: `beside OxiCloud, the write jobs switched on, comma-separated engine names (${[...WRITE_JOBS.keys()].join(', ')}); on a database of its own every job runs`,
  },
  {
    name: 'OXICLOUD_DATA_DIR',
    default: CONFIG_DEFAULTS.dataDir,
    meaning:
      'embedded Postgres data (<dir>/postgres), the default local storage root (<dir>/storage), the generated OXIJOBS_JWT_SECRET (<dir>/jwt-secret)',
  },
  {
    name: 'OXICLOUD_HTTP_PORT',
    default: String(CONFIG_DEFAULTS.httpPort),
    meaning: `HTTP port (1-65535); never OxiCloud's own (OXICLOUD_SERVER_PORT, ${CONFIG_DEFAULTS.oxicloudServerPort} when unset): the same port is refused`,
  },
  {
    name: 'OXICLOUD_SERVER_PORT',
    default: `(unset: OxiCloud's ${CONFIG_DEFAULTS.oxicloudServerPort})`,
    meaning:
      "OxiCloud's HTTP port (OxiCloud's name): read only so that OXICLOUD_HTTP_PORT never takes it (with OxiCloud's database or workdir set, an unset one is 8086)",
  },
  {
    name: 'OXICLOUD_HTTP_HOST',
    default: CONFIG_DEFAULTS.httpHost,
    meaning: 'HTTP listen address (0.0.0.0 = all)',
  },
  {
    name: 'OXICLOUD_HTTP_MAX_BODY_BYTES',
    default: String(CONFIG_DEFAULTS.httpMaxBodyBytes),
    meaning: 'largest request body the admin API reads, 1024-16777216 bytes; larger ones get 413',
  },
  {
    name: 'OXICLOUD_EMBEDDED_POSTGRES_PORT',
    default: String(CONFIG_DEFAULTS.embeddedPostgresPort),
    meaning: 'port of the embedded Postgres on 127.0.0.1 (ignored with DATABASE_URL)',
  },
  {
    name: 'OXIJOBS_JWT_SECRET',
    default: '(generated, <data dir>/jwt-secret)',
    meaning:
      "HS256 secret of the engine's admin tokens (iss oxijobs, aud oxijobs-admin), at least 32 characters, never OxiCloud's; required in production. OXICLOUD_JWT_SECRET, OxiCloud's session secret, is never used to sign or verify: the same value is refused",
  },
  {
    name: 'OXICLOUD_ENV',
    default: CONFIG_DEFAULTS.env,
    meaning: 'development | production (production refuses to start without OXIJOBS_JWT_SECRET)',
  },
  {
    name: 'OXICLOUD_DATABASE_RETRY_SECONDS',
    default: String(CONFIG_DEFAULTS.databaseRetrySeconds),
    meaning:
      'seconds a run retries its batch while the database is unreachable before it lands Paused ("database unreachable"; a trigger resumes it), 0-86400',
  },
  {
    name: 'OXICLOUD_RUN_LEASE_SECONDS',
    default: String(CONFIG_DEFAULTS.runLeaseSeconds),
    meaning:
      'seconds a run\'s lease lasts after each renewal (database clock); a node\'s run whose lease passed is paused by another node ("node <id> lost mid-run"), 2-86400',
  },
  {
    name: 'OXICLOUD_RUN_HEARTBEAT_SECONDS',
    default: String(CONFIG_DEFAULTS.runHeartbeatSeconds),
    meaning:
      "seconds between renewals of this node's run leases; at most half the lease's trust window (the lease minus a sixth, at most 5 s), 1-43200",
  },
  {
    name: 'OXICLOUD_RUN_JANITOR_SECONDS',
    default: String(CONFIG_DEFAULTS.runJanitorSeconds),
    meaning: 'seconds between two looks for runs of other nodes whose lease expired, 1-86400',
  },
  {
    name: 'OXICLOUD_LOG_LEVEL',
    default: CONFIG_DEFAULTS.logLevel,
    meaning: 'fatal | error | warn | info | debug | trace | silent',
  },
  {
    name: 'OXICLOUD_LOG_FORMAT',
    default: '(pretty at a terminal, json otherwise)',
    meaning: 'json | pretty: JSON lines, or readable lines',
  },
  {
    name: 'OXICLOUD_ADMIN_EMAIL',
    default: '(unset)',
    meaning:
      'e-mail address of the first admin (and of "admin" at a later boot when it has none); alerts go there',
  },
  {
    name: 'OXICLOUD_PUBLIC_BASE_URL',
    default: '(http://<host>:<port>)',
    meaning: 'the URL operators and alert e-mails use to reach this server',
  },
  {
    name: 'OXICLOUD_STORAGE_DOMAIN',
    default: CONFIG_DEFAULTS.storageDomain,
    meaning:
      "oxicloud (the only value): the storage domain an empty database is migrated to and the jobs run on, OxiCloud's drive-era schema (every job registered, repair included); the engine's old model (engine) is removed, and a database of it is refused",
  },
  {
    name: 'OXICLOUD_STORAGE_BACKEND',
    default: CONFIG_DEFAULTS.storageBackend,
    meaning:
      "OxiCloud's (same meaning): local | s3 (s3 reads OXICLOUD_S3_BUCKET, _REGION, _ENDPOINT_URL, _ACCESS_KEY, _SECRET_KEY, _FORCE_PATH_STYLE, and the engine's _PREFIX); OxiCloud's azure is refused",
  },
  {
    name: 'OXICLOUD_STORAGE_PATH',
    default: '(<data dir>/storage; <OXIJOBS_OXICLOUD_WORKDIR>/storage when that is set)',
    meaning:
      "OxiCloud's storage root (same name, same meaning): local blobs at <path>/.blobs/<aa>/<hash>.blob. A relative path is relative to where OxiCloud runs, so the engine resolves it against OXIJOBS_OXICLOUD_WORKDIR when set, else against its own working folder; serve does not create it",
  },
  {
    name: 'OXIJOBS_OXICLOUD_WORKDIR',
    default: "(unset: this process's working folder)",
    meaning:
      "the folder OxiCloud runs in: a relative OXICLOUD_STORAGE_PATH is resolved against it, and with OXICLOUD_STORAGE_PATH unset the storage root is OxiCloud's default <workdir>/storage",
  },
  {
    name: 'OXICLOUD_STORAGE_ENCRYPTION_ENABLED',
    default: 'false',
    meaning:
      "OxiCloud's (same meaning): true | false: blobs are AES-256-GCM encrypted at rest, in OxiCloud's format",
  },
  {
    name: 'OXICLOUD_STORAGE_ENCRYPTION_KEY',
    default: '(required when enabled)',
    meaning: "OxiCloud's key: standard base64 of exactly 32 bytes (openssl rand -base64 32)",
  },
  {
    name: 'OXICLOUD_METRICS_ADDR',
    default: '127.0.0.1:9464',
    meaning: 'host:port of the Prometheus /metrics listener (its own port, loopback by default); empty = off',
  },
  {
    name: 'OXICLOUD_METRICS_TOKEN',
    default: '(unset: no token)',
    meaning: 'bearer token every /metrics scrape must send, at least 16 characters',
  },
  {
    name: 'OXICLOUD_FRESHNESS_CHECK_INTERVAL_SECONDS',
    default: '60',
    meaning: 'how often overdue jobs are looked for and mailed (job_overdue); 0 = never',
  },
  {
    name: 'OXIJOBS_QUEUE_STALL_SECONDS',
    default: "(3600 beside OxiCloud; 0 on a database of the engine's own)",
    meaning:
      "how long the oldest row of one of OxiCloud's queues (storage.tree_etag_dirty, storage.search_index_dirty) may stay at its head before the queue is stalled and mailed once (queue_stalled), 0-604800; 0 = no alert (the gauges stay)",
  },
  {
    name: 'OXIJOBS_QUEUE_CHECK_INTERVAL_SECONDS',
    default: '60',
    meaning:
      "how often OxiCloud's queues are read and a stall is mailed, 0-86400; 0 = only at scrapes, never mailed",
  },
  {
    name: 'OXICLOUD_NODE_HEARTBEAT_SECONDS',
    default: '5',
    meaning: 'how often this process touches its row in jobs.nodes (database clock), 1-300',
  },
  {
    name: 'OXICLOUD_NODE_PRUNE_SECONDS',
    default: '300',
    meaning:
      'a node whose last heartbeat is older is deleted from jobs.nodes by any node; at least 2 heartbeats',
  },
  {
    name: 'OXICLOUD_PERIODIC_LEASE_SECONDS',
    default: '30',
    meaning:
      "how long a periodic job's run is held by its node without renewal (renewed every third of it), 2-86400",
  },
  {
    name: 'OXICLOUD_PERIODIC_HISTORY_DAYS',
    default: '30',
    meaning: 'periodic run history (jobs.periodic_runs) older than this is pruned, 1-3650',
  },
];

/** The alert variables (read by @oxicloud/alerts): OxiCloud's `OXICLOUD_SMTP_*`, with OxiCloud's meaning. */
export const SMTP_VARS: readonly EnvVarDoc[] = [
  {
    name: 'OXICLOUD_SMTP_HOST',
    default: '(unset: no alerts)',
    meaning: "OxiCloud's SMTP server (same meaning), for the alert mails; unset or empty = no alerts",
  },
  {
    name: 'OXICLOUD_SMTP_PORT',
    default: '587',
    meaning:
      'SMTP port (1-65535); 587 whatever _TLS says, as OxiCloud (465 for implicit TLS, 25 for a plain relay)',
  },
  {
    name: 'OXICLOUD_SMTP_TLS',
    default: 'starttls',
    meaning:
      "starttls | tls | none, as OxiCloud (its implicit and smtps = tls, plain = none; none for a plain relay on port 25 or a local sink); the engine's earlier OXICLOUD_SMTP_SECURE is still read",
  },
  {
    name: 'OXICLOUD_SMTP_USER',
    default: '(unset)',
    meaning: "OxiCloud's SMTP AUTH user (same meaning); with OXICLOUD_SMTP_PASS",
  },
  {
    name: 'OXICLOUD_SMTP_PASS',
    default: '(unset)',
    meaning:
      "OxiCloud's SMTP AUTH password (same meaning); the engine's earlier OXICLOUD_SMTP_PASSWORD is still read",
  },
  {
    name: 'OXICLOUD_SMTP_FROM',
    default: '(required with a host)',
    meaning: "OxiCloud's sender (same meaning), e.g. OxiCloud <alerts@example.org>",
  },
];

/**
 * OxiCloud's own settings that this engine never reads for its own jobs or
 * tokens, though they share the prefix: each configures OxiCloud (its
 * session tokens, its daemons), and the engine's copy of a job keeps its own
 * settings. `oxijobs serve` says which of them are set and ignored.
 */
export const OXICLOUD_ONLY_VARS: readonly EnvVarDoc[] = [
  {
    name: 'OXICLOUD_JWT_SECRET',
    default: "(OxiCloud's)",
    meaning:
      "OxiCloud's session secret: never signs or verifies an engine token (the engine's is OXIJOBS_JWT_SECRET; the same value is refused)",
  },
  {
    name: 'OXICLOUD_ENABLE_TRASH',
    default: "(OxiCloud's)",
    meaning: "OxiCloud's trash and its scheduled GC; trash_cleanup and dedup_gc keep their own settings",
  },
  {
    name: 'OXICLOUD_GRANT_CLEANUP_ENABLED',
    default: "(OxiCloud's)",
    meaning: "OxiCloud's grant cleanup daemon; grant_cleanup keeps its own settings",
  },
  {
    name: 'OXICLOUD_GRANT_CLEANUP_INTERVAL_HOURS',
    default: "(OxiCloud's)",
    meaning:
      "the period of OxiCloud's grant cleanup daemon; grant_cleanup's is OXIJOBS_GRANT_CLEANUP_INTERVAL_HOURS (the engine's earlier name was this one)",
  },
  {
    name: 'OXICLOUD_GRANT_CLEANUP_GRACE_DAYS',
    default: "(OxiCloud's)",
    meaning: "OxiCloud's grant cleanup grace; grant_cleanup's is OXICLOUD_GRANT_CLEANUP_GRACE_SECONDS",
  },
  {
    name: 'OXICLOUD_STORAGE_USAGE_RECONCILE_SECS',
    default: "(OxiCloud's)",
    meaning:
      "OxiCloud's usage sweep; storage_reconcile's period is OXICLOUD_STORAGE_USAGE_RECONCILE_INTERVAL_SECONDS",
  },
  {
    name: 'OXICLOUD_LEGACY_RECHUNK',
    default: "(OxiCloud's)",
    meaning: "OxiCloud's startup rechunk of legacy blobs; no engine job reads it",
  },
];

/** The variables a client of the running server reads (`oxijobs alerts test` asks it). */
export const CLIENT_VARS: readonly EnvVarDoc[] = [
  {
    name: 'OXICLOUD_ADMIN_URL',
    default: `http://127.0.0.1:${CONFIG_DEFAULTS.httpPort}`,
    meaning: 'the running server (asked whether it has alerts on); --url overrides',
  },
  {
    name: 'OXICLOUD_ADMIN_TOKEN',
    default: '(one minted for "admin")',
    meaning: 'admin bearer token for it; --token overrides',
  },
];

/** Every documented variable by name. */
const BY_NAME = new Map(
  [...ENV_VARS, ...SMTP_VARS, ...CLIENT_VARS, ...OXICLOUD_ONLY_VARS].map((v) => [v.name, v]),
);

/** The variables every command that opens the server's database reads. */
export const DATABASE_VAR_NAMES = [
  'DATABASE_URL',
  'OXICLOUD_DB_CONNECTION_STRING',
  'OXIJOBS_SCHEMA',
  'OXICLOUD_DATA_DIR',
  'OXICLOUD_EMBEDDED_POSTGRES_PORT',
  'OXICLOUD_STORAGE_DOMAIN',
  'OXICLOUD_ADMIN_EMAIL',
  'OXICLOUD_LOG_LEVEL',
  'OXICLOUD_LOG_FORMAT',
] as const;

/**
 * Help text listing the variables a command reads: one aligned line each,
 * then `extra` lines (variables documented elsewhere, e.g. the jobs' knobs).
 * The full list (`names` undefined) ends with OxiCloud's own settings the
 * engine never acts on ({@link OXICLOUD_ONLY_VARS}).
 */
export function envVarsHelp(names?: readonly string[], extra: readonly string[] = []): string {
  const vars =
    names === undefined
      ? [...ENV_VARS, ...SMTP_VARS]
      : names.map((n) => BY_NAME.get(n)).filter((v) => v !== undefined);
  const width = Math.max(...vars.map((v) => v.name.length));
  const lines = vars.map((v) => `  ${v.name.padEnd(width)}  ${v.meaning} [default: ${v.default}]`);
  const oxicloudOnly =
    names === undefined
      ? `\nOxiCloud's own (read by OxiCloud; never for this engine's jobs or tokens):\n${OXICLOUD_ONLY_VARS.map(
          (v) => `  ${v.name}: ${v.meaning}`,
        ).join('\n')}\n`
      : '';
  return `\nEnvironment (read by this command):\n${[...lines, ...extra.map((l) => `  ${l}`)].join('\n')}\n${oxicloudOnly}`;
}

/** The jobs' own knobs, as `serve --help` lists them (each job reads its variables itself). */
export const JOB_VARS_HELP: readonly string[] = [
  "OXICLOUD_TRASH_CLEANUP_INTERVAL_HOURS, OXICLOUD_TRASH_RETENTION_DAYS (also OxiCloud's name, same meaning), OXICLOUD_TRASH_CLEANUP_BATCH_SIZE",
  'OXICLOUD_STORAGE_USAGE_RECONCILE_INTERVAL_SECONDS',
  'OXICLOUD_DEDUP_GC_GRACE_SECONDS, OXICLOUD_DEDUP_GC_BATCH_SIZE',
  'OXIJOBS_GRANT_CLEANUP_INTERVAL_HOURS, OXICLOUD_GRANT_CLEANUP_GRACE_SECONDS, OXICLOUD_GRANT_CLEANUP_BATCH_SIZE',
  "OXICLOUD_GRANTS_CONSISTENCY_LINGER_MARGIN_DAYS (grants_consistency: days past grant_cleanup's grace before expired_grant_lingering)",
  "OXICLOUD_ENABLE_MUSIC (OxiCloud's, same meaning: true | false, default true; with it, deep files_consistency runs look for missing audio tags rows)",
  'OXICLOUD_DB_POOL_MONITOR_INTERVAL_SECONDS',
  "OXICLOUD_JOB_<NAME>_ALERT_ON_FAIL (true | false: one job's alerts)",
  'OXICLOUD_JOB_<NAME>_MISFIRE (skip | once: catch up once on slots missed while no node was up; default skip)',
  'OXICLOUD_JOB_<NAME>_MAX_AGE_HOURS, OXICLOUD_JOB_<NAME>_DEEP_MAX_AGE_HOURS for a check with a deep mode (freshness: overdue after 1.5x)',
  "OXICLOUD_S3_BUCKET, _REGION (us-east-1), _ENDPOINT_URL, _ACCESS_KEY, _SECRET_KEY, _FORCE_PATH_STYLE: OxiCloud's S3 settings; _PREFIX the engine's (default none, as OxiCloud)",
];
