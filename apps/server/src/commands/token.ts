import { signAdminToken } from '@oxicloud/admin-api';
import { resolveJwtSecret } from '../auth/jwt-secret.js';
import type { ServerConfig } from '../config/server-config.js';
import { openDatabase } from '../database/open-database.js';
import { applyMigrations, ensureFirstAdmin } from '../database/prepare-database.js';
import { domainUsers } from '../domain/storage-domain-wiring.js';
import { createLogger } from '../logger.js';
import { ServerError } from '../server-error.js';
import { logConfigNotices } from './config-notices.js';

/**
 * `oxijobs token --user <username>`: mints a bearer token for an ADMIN user
 * and prints it as the last line of stdout (logs go to stderr). On
 * OxiCloud's storage domain (`OXICLOUD_STORAGE_DOMAIN=oxicloud`) `--user`
 * also takes the user's e-mail address (its username is optional there). Refuses an
 * unknown or non-admin user. Uses the same database and JWT secret as `serve`.
 *
 * Its log lines (the database opening, the migrations) are warnings and
 * errors only unless `OXICLOUD_LOG_LEVEL` is set (`logLevelSet`): stderr
 * holds one line saying how to use the token, stdout the token.
 */
export async function tokenCommand(
  config: ServerConfig,
  options: { readonly user: string; readonly expiresInSeconds: number; readonly logLevelSet?: boolean },
): Promise<void> {
  const logger = createLogger({
    level: options.logLevelSet === true ? config.logLevel : 'warn',
    destination: 'stderr',
    format: config.logFormat,
  });
  logConfigNotices(config, logger);
  const db = await openDatabase(config, logger, { max: 2 });
  let token: string;
  try {
    const { mode } = await applyMigrations(db.pool, logger, {
      source: db.source,
      engineSchema: config.engineSchema,
    });
    // Beside OxiCloud the admins are OxiCloud's: the engine creates no user there.
    if (mode.kind === 'owned')
      await ensureFirstAdmin(db.pool, logger, config.adminEmail, config.storageDomain);
    const users = domainUsers(config.storageDomain, db.pool);
    const user = await users.findByUsername(options.user);
    if (!user) {
      throw new ServerError(
        'USER_NOT_FOUND',
        `no ${config.storageDomain === 'oxicloud' ? 'active user named or with the e-mail address' : 'user named'} "${options.user}"; tokens are for admin users (the first boot creates "admin")`,
      );
    }
    if (user.role !== 'admin') {
      throw new ServerError(
        'NOT_ADMIN',
        `user "${user.username}" has role "${user.role}"; tokens are only minted for users with role "admin"`,
      );
    }
    const { secret } = await resolveJwtSecret(config);
    token = await signAdminToken({ secret, user, expiresInSeconds: options.expiresInSeconds });
  } finally {
    await db.close();
  }
  process.stderr.write(
    `token for admin "${options.user}", valid ${options.expiresInSeconds} s; use it as: Authorization: Bearer <token>\n`,
  );
  process.stdout.write(`${token}\n`);
}
