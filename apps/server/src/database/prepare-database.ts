import { migrate } from '@oxicloud/migrations';
import type { Logger } from '@oxicloud/scheduler';
import { PgUsersRepository } from '@oxicloud/storage';
import type pg from 'pg';
import { SERVER_TARGET } from '../logger.js';
import { ServerError } from '../server-error.js';

/** The username of the admin created on first boot. */
export const FIRST_ADMIN_USERNAME = 'admin';

/** Applies the pending migrations; a failure becomes `MIGRATION_FAILED` naming the migration. */
export async function applyMigrations(pool: pg.Pool, logger: Logger): Promise<{ applied: string[] }> {
  let result: Awaited<ReturnType<typeof migrate>>;
  try {
    result = await migrate(pool);
  } catch (cause) {
    throw new ServerError('MIGRATION_FAILED', `migrations could not run: ${(cause as Error).message}`, {
      cause,
    });
  }
  if (result.error) {
    throw new ServerError('MIGRATION_FAILED', `migrations failed: ${result.error.message}`, {
      cause: result.error,
    });
  }
  logger.info(
    {
      target: SERVER_TARGET,
      event: 'database.migrated',
      applied: result.applied,
      already_applied: result.alreadyApplied.length,
    },
    result.applied.length > 0
      ? `applied ${result.applied.length} migration(s): ${result.applied.join(', ')}`
      : `database schema up to date (${result.alreadyApplied.length} migration(s))`,
  );
  return { applied: result.applied };
}

/**
 * First boot: when no user has role `admin`, creates one named `admin` and
 * logs how to get a token for it.
 */
export async function ensureFirstAdmin(pool: pg.Pool, logger: Logger): Promise<void> {
  const created = await new PgUsersRepository(pool).ensureFirstAdmin(FIRST_ADMIN_USERNAME);
  if (created) {
    logger.info(
      { target: SERVER_TARGET, event: 'admin.created', user_id: created.id, username: created.username },
      `no admin user existed: created "${created.username}"; get a bearer token with \`pnpm oxijobs token --user ${created.username}\``,
    );
  }
}
