import { z } from 'zod';
import type { ServerConfig } from '../config/server-config.js';
import { openDatabase } from '../database/open-database.js';
import { applyMigrations, ensureFirstAdmin } from '../database/prepare-database.js';
import { domainUsers } from '../domain/storage-domain-wiring.js';
import { createLogger } from '../logger.js';
import { ServerError } from '../server-error.js';

const Email = z.email();

/**
 * `oxijobs users set-email <username> <email>`: sets or changes a user's
 * e-mail address (alerts go to every admin with one). Uses the server's own
 * database choice, like `oxijobs token`; needs no token.
 */
export async function setEmailCommand(
  config: ServerConfig,
  options: { readonly username: string; readonly email: string },
): Promise<void> {
  const email = options.email.trim();
  if (!Email.safeParse(email).success) {
    throw new ServerError(
      'BAD_ARGUMENT',
      `"${options.email}" is not an e-mail address; give one like ops@example.org`,
    );
  }
  const logger = createLogger({ level: config.logLevel, destination: 'stderr', format: config.logFormat });
  const db = await openDatabase(config, logger, { max: 2 });
  let previous: string | null | undefined;
  let role: string | undefined;
  try {
    await applyMigrations(db.pool, logger, {
      source: db.source,
      engineSchema: config.engineSchema,
      refuseBesideOxiCloud: "`oxijobs users` changes a user's e-mail address",
    });
    await ensureFirstAdmin(db.pool, logger, config.adminEmail, config.storageDomain);
    const users = domainUsers(config.storageDomain, db.pool);
    previous = await users.setEmail(options.username, email);
    role = (await users.findByUsername(options.username))?.role;
  } finally {
    await db.close();
  }
  if (previous === undefined) {
    throw new ServerError(
      'USER_NOT_FOUND',
      `no user named "${options.username}" (the first boot creates "admin")`,
    );
  }
  const was = previous === null ? 'had none' : previous === email ? 'unchanged' : `was ${previous}`;
  process.stdout.write(
    `${options.username}: e-mail set to ${email} (${was})` +
      `${role === 'admin' ? '; alerts now reach this address' : `; role "${role}": alerts go to admins only`}\n`,
  );
}
