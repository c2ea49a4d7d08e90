import {
  describeRecognition,
  migrate,
  type Recognition,
  recogniseDatabase,
  type StorageDomain,
} from '@oxicloud/migrations';
import { DEFAULT_ENGINE_SCHEMA, engineSchemaProblem, SIDECAR_ENGINE_SCHEMA } from '@oxicloud/recoverable';
import type { Logger } from '@oxicloud/scheduler';
import type pg from 'pg';
import { CONFIG_DEFAULTS } from '../config/env-vars.js';
import { domainUsers } from '../domain/storage-domain-wiring.js';
import { SERVER_TARGET } from '../logger.js';
import { ServerError } from '../server-error.js';
import type { DatabaseSource } from './open-database.js';
import { describeRolePrivileges, type RolePrivileges, readRolePrivileges } from './role-privileges.js';

/** The username of the admin created on first boot. */
export const FIRST_ADMIN_USERNAME = 'admin';

/** How this process uses its database (see {@link applyMigrations}). */
export type DatabaseMode =
  /** A database of the engine's own (the embedded default, or one it was told to create): it holds the storage domain too. */
  | { readonly kind: 'owned'; readonly engineSchema: string }
  /**
   * Beside a real OxiCloud, on OxiCloud's own database: the engine writes only
   * its own schema (and OxiCloud's only through an approved repair or a write
   * job switched on by name).
   */
  | {
      readonly kind: 'sidecar';
      readonly engineSchema: string;
      /** OxiCloud's latest migration (`_sqlx_migrations`), `null` when unreadable or empty. */
      readonly oxicloudLatest: number | null;
      /** OxiCloud migrated past the fact sheet's HEAD: write jobs stay off unless switched on by name. */
      readonly newerOxiCloud: boolean;
      /** What the engine's role may do on OxiCloud's tables (read at boot, from the catalog). */
      readonly privileges: RolePrivileges;
    };

/** OxiCloud's latest migration as the fact sheet (`OXICLOUD.md` §1) knows it. */
export const KNOWN_OXICLOUD_MIGRATION = 20260921000000;

/** The oldest Postgres major the engine runs on; OxiCloud's own migrations target 13 (fact sheet §1). */
export const MIN_POSTGRES_MAJOR = 13;

/** Where the database came from and what a command may do to it. */
export interface PrepareOptions {
  /** `DATABASE_URL` (an external database) or the embedded Postgres: only the latter gets the storage domain implicitly. */
  readonly source: DatabaseSource;
  /** `OXIJOBS_SCHEMA`: the engine's own schema. @defaultValue `jobs` on a database it owns, `oxijobs` beside OxiCloud */
  readonly engineSchema?: string | undefined;
  /** An explicit command (`oxijobs migrate --create-storage-domain`) may create the storage domain on an empty external database. */
  readonly createStorageDomain?: boolean;
  /**
   * A command that writes OxiCloud's users or storage (`seed`, `users`):
   * refused on OxiCloud's own database before anything is written, with this
   * as what it would have done (e.g. "`oxijobs seed` writes users, drives and files").
   */
  readonly refuseBesideOxiCloud?: string;
}

/** What {@link applyMigrations} did. */
export interface PreparedDatabase {
  readonly applied: string[];
  readonly total: number;
  readonly mode: DatabaseMode;
}

async function recognise(pool: pg.Pool): Promise<Recognition> {
  const client = await pool.connect();
  try {
    return await recogniseDatabase(client);
  } finally {
    client.release();
  }
}

async function checkPostgresVersion(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ v: string }>("SELECT current_setting('server_version_num') AS v");
  const major = Math.floor(Number(rows[0]?.v ?? 0) / 10_000);
  if (major < MIN_POSTGRES_MAJOR) {
    throw new ServerError(
      'DATABASE_REFUSED',
      `this Postgres is version ${major}; the engine needs ${MIN_POSTGRES_MAJOR} or later (OxiCloud's own floor). Nothing was written`,
    );
  }
  return major;
}

/**
 * Reads the catalog before any statement that changes anything, decides the
 * mode, then migrates (one transaction: a failure leaves nothing behind):
 *
 * - **OxiCloud's own database** (`_sqlx_migrations` and its storage tables):
 *   sidecar mode. Only the engine's own schema is written (`oxijobs` unless
 *   `OXIJOBS_SCHEMA` says otherwise, never `jobs`), its bookkeeping in it;
 *   nothing in `public` or OxiCloud's schemas, `_sqlx_migrations` only read.
 * - **A database of this engine** (its bookkeeping and the storage tables): migrated as before.
 * - **An empty database**: given the storage domain only on the embedded
 *   Postgres or by an explicit command (`createStorageDomain`); as
 *   `DATABASE_URL` it is refused (it may be prepared for an OxiCloud not yet
 *   started, whose own migrations would then fail).
 * - **The engine's old storage model** and **anything else**: refused, naming what was found.
 *
 * @throws ServerError `DATABASE_REFUSED` (nothing written) or `MIGRATION_FAILED` (nothing written either).
 */
export async function applyMigrations(
  pool: pg.Pool,
  logger: Logger,
  options: PrepareOptions,
): Promise<PreparedDatabase> {
  const postgresMajor = await checkPostgresVersion(pool);
  const found = await recognise(pool);
  let mode: DatabaseMode;
  switch (found.kind) {
    case 'oxicloud': {
      if (options.refuseBesideOxiCloud !== undefined) {
        throw new ServerError(
          'DATABASE_REFUSED',
          `${describeRecognition(found)}. ${options.refuseBesideOxiCloud}: that never runs on OxiCloud's own database ` +
            '(beside OxiCloud the engine creates and changes no user and no file); nothing was written',
        );
      }
      if (found.migrations !== 'not-readable' && found.migrations.failed > 0) {
        throw new ServerError(
          'DATABASE_REFUSED',
          `${describeRecognition(found)}. OxiCloud does not boot on a failed migration, and the engine does not run beside one; nothing was written`,
        );
      }
      const latest = found.migrations === 'not-readable' ? null : found.migrations.latest;
      const privileges = await readRolePrivileges(pool);
      if (!privileges.canRead) {
        throw new ServerError(
          'DATABASE_REFUSED',
          `${describeRolePrivileges(privileges)}: the checks need SELECT on OxiCloud's schemas auth and storage ` +
            '(see "Run beside OxiCloud" in the README for the grants); nothing was written',
        );
      }
      mode = {
        kind: 'sidecar',
        engineSchema: options.engineSchema ?? SIDECAR_ENGINE_SCHEMA,
        oxicloudLatest: latest,
        newerOxiCloud: latest !== null && latest > KNOWN_OXICLOUD_MIGRATION,
        privileges,
      };
      break;
    }
    case 'engine':
      mode = { kind: 'owned', engineSchema: options.engineSchema ?? DEFAULT_ENGINE_SCHEMA };
      break;
    case 'empty':
      if (options.source === 'DATABASE_URL' && options.createStorageDomain !== true) {
        throw new ServerError(
          'DATABASE_REFUSED',
          `${describeRecognition(found)}. The engine does not create OxiCloud's storage schema in an external database by itself: ` +
            "if it is prepared for an OxiCloud not yet started, OxiCloud's own migrations would then fail on it. " +
            'To run beside OxiCloud, start OxiCloud on it first (the engine then keeps to a schema of its own); ' +
            'to give this database to the engine alone, run `oxijobs migrate --create-storage-domain` once. Nothing was written',
        );
      }
      mode = { kind: 'owned', engineSchema: options.engineSchema ?? DEFAULT_ENGINE_SCHEMA };
      break;
    case 'engine-old-model':
      throw new ServerError(
        'DATABASE_REFUSED',
        `${describeRecognition(found)}. This version no longer runs the engine's old storage model: it runs on OxiCloud's storage schema only, ` +
          "and migrates nothing of the old model's data, runs, findings or cursors; nothing was written. " +
          'An earlier version, one from before issue 30 removed the old model, can still read this database as it is',
      );
    case 'unknown':
      throw new ServerError(
        'DATABASE_REFUSED',
        `${describeRecognition(found)}. The engine runs on OxiCloud's database (beside OxiCloud), on a database of its own, ` +
          'or on an empty one it is told to create; this is none of them, so nothing was written',
      );
  }
  const problem = engineSchemaProblem(mode.engineSchema);
  if (problem !== null) throw new ServerError('BAD_CONFIG', `OXIJOBS_SCHEMA: ${problem}`);
  let result: Awaited<ReturnType<typeof migrate>>;
  try {
    result =
      mode.kind === 'sidecar'
        ? await migrate(pool, { sidecar: true, engineSchema: mode.engineSchema })
        : await migrate(pool, { domain: CONFIG_DEFAULTS.storageDomain, engineSchema: mode.engineSchema });
  } catch (cause) {
    throw new ServerError('MIGRATION_FAILED', `migrations could not run: ${(cause as Error).message}`, {
      cause,
    });
  }
  if (result.error?.code === 'DOMAIN_MISMATCH') {
    throw new ServerError(
      'DATABASE_REFUSED',
      `this database does not match: ${result.error.message}. ` +
        "This version runs on OxiCloud's storage domain only: use a database of its own",
      { cause: result.error },
    );
  }
  if (result.error) {
    throw new ServerError('MIGRATION_FAILED', `migrations failed: ${result.error.message}`, {
      cause: result.error,
    });
  }
  // Both counts include the packages' schema steps: "applied N of M" at the first boot is "up to date (M)" later.
  const total = result.applied.length + result.alreadyApplied.length;
  if (mode.kind === 'sidecar') {
    logger.info(
      {
        target: SERVER_TARGET,
        event: 'database.sidecar',
        engine_schema: mode.engineSchema,
        oxicloud_latest_migration: mode.oxicloudLatest,
        postgres_major: postgresMajor,
      },
      `beside OxiCloud (${describeRecognition(found)}): the engine writes only its schema ${mode.engineSchema}`,
    );
    logger.info(
      {
        target: SERVER_TARGET,
        event: 'database.role',
        role: mode.privileges.role,
        can_read: mode.privileges.canRead,
        missing_writes: mode.privileges.missingWrites,
      },
      describeRolePrivileges(mode.privileges),
    );
    if (mode.newerOxiCloud) {
      logger.warn(
        {
          target: SERVER_TARGET,
          event: 'database.oxicloud_newer',
          oxicloud_latest_migration: mode.oxicloudLatest,
          known_latest_migration: KNOWN_OXICLOUD_MIGRATION,
        },
        `OxiCloud's latest migration ${mode.oxicloudLatest} is newer than the ${KNOWN_OXICLOUD_MIGRATION} this engine knows: ` +
          'write jobs stay off unless switched on by name',
      );
    }
  }
  logger.info(
    {
      target: SERVER_TARGET,
      event: 'database.migrated',
      storage_domain: mode.kind === 'sidecar' ? 'oxicloud (sidecar)' : CONFIG_DEFAULTS.storageDomain,
      mode: mode.kind,
      engine_schema: mode.engineSchema,
      applied: result.applied,
      already_applied: result.alreadyApplied.length,
      total,
    },
    result.applied.length > 0
      ? `applied ${result.applied.length} of ${total} migration(s)`
      : `database schema up to date (${total} migration(s))`,
  );
  return { applied: result.applied, total, mode };
}

/**
 * First boot: when no user has role `admin`, creates one named `admin` (with
 * `adminEmail` as its address when given) and logs how to get a token for it.
 * At a later boot `adminEmail` goes to the user `admin` when it has no
 * address yet; a different address it already has is kept, and a line says so.
 */
export async function ensureFirstAdmin(
  pool: pg.Pool,
  logger: Logger,
  adminEmail?: string,
  domain: StorageDomain = CONFIG_DEFAULTS.storageDomain,
): Promise<void> {
  const users = domainUsers(domain, pool);
  const created = await users.ensureFirstAdmin(FIRST_ADMIN_USERNAME, adminEmail);
  if (created) {
    logger.info(
      {
        target: SERVER_TARGET,
        event: 'admin.created',
        user_id: created.id,
        username: created.username,
        email: adminEmail ?? null,
      },
      `no admin user existed: created "${created.username}"${adminEmail ? ` <${adminEmail}>` : ''}; get a bearer token with \`pnpm oxijobs token --user ${created.username}\``,
    );
    return;
  }
  if (adminEmail === undefined) return;
  const previous = await users.setEmail(FIRST_ADMIN_USERNAME, adminEmail, { onlyIfUnset: true });
  if (previous === undefined) {
    logger.warn(
      { target: SERVER_TARGET, event: 'admin.email_unused', username: FIRST_ADMIN_USERNAME },
      `OXICLOUD_ADMIN_EMAIL is set but there is no user "${FIRST_ADMIN_USERNAME}"; set an admin's address with \`oxijobs users set-email <username> ${adminEmail}\``,
    );
  } else if (previous === null) {
    logger.info(
      { target: SERVER_TARGET, event: 'admin.email_set', username: FIRST_ADMIN_USERNAME, email: adminEmail },
      `admin "${FIRST_ADMIN_USERNAME}" had no e-mail address: set to ${adminEmail} (OXICLOUD_ADMIN_EMAIL)`,
    );
  } else if (previous !== adminEmail) {
    logger.info(
      {
        target: SERVER_TARGET,
        event: 'admin.email_kept',
        username: FIRST_ADMIN_USERNAME,
        email: previous,
        ignored: adminEmail,
      },
      `admin "${FIRST_ADMIN_USERNAME}" keeps its address ${previous}; OXICLOUD_ADMIN_EMAIL=${adminEmail} is only used when it has none (change it with \`oxijobs users set-email ${FIRST_ADMIN_USERNAME} ${adminEmail}\`)`,
    );
  }
}
