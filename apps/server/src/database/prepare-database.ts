import { describeRecognition, migrate, recogniseDatabase, type StorageDomain } from '@oxicloud/migrations';
import type { Logger } from '@oxicloud/scheduler';
import type pg from 'pg';
import { CONFIG_DEFAULTS } from '../config/env-vars.js';
import { domainUsers } from '../domain/storage-domain-wiring.js';
import { SERVER_TARGET } from '../logger.js';
import { ServerError } from '../server-error.js';

/** The username of the admin created on first boot. */
export const FIRST_ADMIN_USERNAME = 'admin';

/**
 * Refuses, before any statement that changes anything, a database this build
 * must not migrate:
 *
 * - OxiCloud's own (its `_sqlx_migrations` and storage tables): this build
 *   creates its storage domain itself (OxiCloud's schema in its own SQL),
 *   which would half-apply there and leave objects behind in OxiCloud's
 *   schemas; running beside OxiCloud's database (a sidecar that writes only
 *   its own schema) is what the sidecar mode adds.
 * - A database of the engine's **old storage model** (the `.oxicloud` folder
 *   of an earlier version): this version no longer runs that model, and its
 *   runs, findings and paused cursors were recorded against tables OxiCloud
 *   does not have, so nothing of it is migrated; the message says what it
 *   holds, how to start fresh, and that an earlier version still reads it.
 *
 * @throws ServerError `DATABASE_REFUSED` with what was found.
 */
export async function refuseForeignDatabase(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  let found: Awaited<ReturnType<typeof recogniseDatabase>>;
  try {
    found = await recogniseDatabase(client);
  } finally {
    client.release();
  }
  if (found.kind === 'oxicloud') {
    throw new ServerError(
      'DATABASE_REFUSED',
      `${describeRecognition(found)}. This build does not run on OxiCloud's own database yet (it migrates its storage domain itself); nothing was written. Unset DATABASE_URL to use the embedded Postgres, or point it at a database of its own`,
    );
  }
  if (found.kind === 'engine-old-model') {
    throw new ServerError(
      'DATABASE_REFUSED',
      `${describeRecognition(found)}. This version no longer runs the engine's old storage model: it runs on OxiCloud's storage schema only, ` +
        "and migrates nothing of the old model's data, runs, findings or cursors; nothing was written. " +
        'An earlier version, one from before issue 30 removed the old model, can still read this database as it is',
    );
  }
}

/**
 * Applies the pending migrations of the storage domain `domain`
 * (`OXICLOUD_STORAGE_DOMAIN`); a failure becomes `MIGRATION_FAILED` naming
 * the migration, a database migrated with the other domain
 * `DATABASE_REFUSED` (nothing written).
 */
export async function applyMigrations(
  pool: pg.Pool,
  logger: Logger,
  domain: StorageDomain = CONFIG_DEFAULTS.storageDomain,
): Promise<{ applied: string[]; total: number }> {
  await refuseForeignDatabase(pool);
  let result: Awaited<ReturnType<typeof migrate>>;
  try {
    result = await migrate(pool, { domain });
  } catch (cause) {
    throw new ServerError('MIGRATION_FAILED', `migrations could not run: ${(cause as Error).message}`, {
      cause,
    });
  }
  if (result.error?.code === 'DOMAIN_MISMATCH') {
    throw new ServerError(
      'DATABASE_REFUSED',
      `OXICLOUD_STORAGE_DOMAIN=${domain} does not match this database: ${result.error.message}. ` +
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
  logger.info(
    {
      target: SERVER_TARGET,
      event: 'database.migrated',
      storage_domain: domain,
      applied: result.applied,
      already_applied: result.alreadyApplied.length,
      total,
    },
    result.applied.length > 0
      ? `applied ${result.applied.length} of ${total} migration(s)`
      : `database schema up to date (${total} migration(s))`,
  );
  return { applied: result.applied, total };
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
