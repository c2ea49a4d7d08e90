import { signAdminToken } from '@oxicloud/admin-api';
import { AlertsError, describeSmtpError, SmtpEmailSender, smtpConfigFromEnv } from '@oxicloud/alerts';
import type pg from 'pg';
import { resolveJwtSecret } from '../auth/jwt-secret.js';
import type { ServerConfig } from '../config/server-config.js';
import { openDatabase } from '../database/open-database.js';
import { applyMigrations, ensureFirstAdmin } from '../database/prepare-database.js';
import { domainAdminRecipients, domainUsers } from '../domain/storage-domain-wiring.js';
import { resolveConnection } from '../jobs-client/cli-values.js';
import { createLogger } from '../logger.js';
import { ServerError } from '../server-error.js';
import { runningServerAlerts } from './running-server-alerts.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Where the running server is asked (`--url`, `--token`; else OXICLOUD_ADMIN_URL / OXICLOUD_ADMIN_TOKEN). */
export interface AlertsTestFlags {
  readonly url?: string;
  readonly token?: string;
}

/** A one-minute token of the user "admin" to ask the running server, or `undefined` without such an admin. */
async function askingToken(pool: pg.Pool, config: ServerConfig): Promise<string | undefined> {
  const admin = await domainUsers(config.storageDomain, pool).findByUsername('admin');
  if (admin === null || admin.role !== 'admin') return undefined;
  const { secret } = await resolveJwtSecret(config);
  return signAdminToken({ secret, user: admin, expiresInSeconds: 60 });
}

/**
 * `oxijobs alerts test`: sends one test mail to every admin with an address,
 * through the server's own `OXICLOUD_SMTP_*`, and prints what the SMTP server
 * answered. Fails (exit 1) with what went wrong and what to set: no SMTP
 * configured, no admin address, connection refused, TLS required or not
 * offered, authentication failed. First it says whether the server at
 * OXICLOUD_ADMIN_URL (`--url`) has alerts on: the variables set for this
 * command only reach this command, not a running server.
 */
export async function alertsTestCommand(
  config: ServerConfig,
  env: Env,
  flags: AlertsTestFlags = {},
): Promise<void> {
  let smtp: ReturnType<typeof smtpConfigFromEnv>;
  try {
    smtp = smtpConfigFromEnv(env);
  } catch (cause) {
    if (cause instanceof AlertsError) throw new ServerError('BAD_CONFIG', cause.message, { cause });
    throw cause;
  }
  const logger = createLogger({ level: config.logLevel, destination: 'stderr', format: config.logFormat });
  const db = await openDatabase(config, logger, { max: 2 });
  let to: string[];
  let minted: string | undefined;
  try {
    const { mode } = await applyMigrations(db.pool, logger, {
      source: db.source,
      engineSchema: config.engineSchema,
    });
    if (mode.kind === 'owned')
      await ensureFirstAdmin(db.pool, logger, config.adminEmail, config.storageDomain);
    to = await domainAdminRecipients(config.storageDomain, db.pool).adminEmails();
    if ((flags.token ?? env['OXICLOUD_ADMIN_TOKEN'] ?? '').trim() === '')
      minted = await askingToken(db.pool, config);
  } finally {
    await db.close();
  }
  let connection: ReturnType<typeof resolveConnection> | undefined;
  try {
    connection = resolveConnection({ url: flags.url, token: flags.token ?? minted }, env);
  } catch (cause) {
    process.stdout.write(
      `could not ask the running server whether it has alerts on: ${(cause as Error).message}\n`,
    );
  }
  if (connection !== undefined) {
    process.stdout.write(`${await runningServerAlerts(connection.baseUrl, connection.token)}\n`);
  }
  if (smtp === null) {
    throw new ServerError(
      'BAD_CONFIG',
      'OXICLOUD_SMTP_HOST is not set: alerts are off. Set OXICLOUD_SMTP_HOST and OXICLOUD_SMTP_FROM (and OXICLOUD_SMTP_PORT, OXICLOUD_SMTP_TLS as your relay needs)',
    );
  }
  if (to.length === 0) {
    throw new ServerError(
      'ALERT_SEND_FAILED',
      'no admin has an e-mail address, so alerts reach nobody: run `oxijobs users set-email admin you@example.org` (or set OXICLOUD_ADMIN_EMAIL before the first boot)',
    );
  }
  const sender = new SmtpEmailSender(smtp, { connectionTimeoutMs: 10_000, greetingTimeoutMs: 10_000 });
  const via = `${smtp.host}:${smtp.port} (OXICLOUD_SMTP_TLS=${smtp.secure})`;
  process.stderr.write(`sending a test alert to ${to.join(', ')} through ${via}…\n`);
  try {
    const receipt = await sender.send({
      to,
      subject: '[OxiCloud] Test alert',
      text: `This is a test alert from OxiCloud jobs (${config.publicBaseUrl}).\nJob failures and consistency findings are mailed to this address.\n`,
      html: `<p>This is a test alert from OxiCloud jobs (${config.publicBaseUrl}).</p><p>Job failures and consistency findings are mailed to this address.</p>`,
    });
    const refused = receipt.rejected.length > 0 ? `; refused: ${receipt.rejected.join(', ')}` : '';
    process.stdout.write(
      `sent to ${receipt.accepted.join(', ')} through ${via}; the server answered: ${receipt.response}${refused}\n`,
    );
    if (receipt.rejected.length > 0) {
      throw new ServerError('ALERT_SEND_FAILED', `the SMTP server refused ${receipt.rejected.join(', ')}`);
    }
  } catch (cause) {
    if (cause instanceof ServerError) throw cause;
    throw new ServerError(
      'ALERT_SEND_FAILED',
      `the test alert was not sent: ${describeSmtpError(cause, smtp)}`,
      {
        cause,
      },
    );
  } finally {
    sender.close();
  }
}
