import { type AlertsStatus, describeAlertsStatus } from '@oxicloud/alerts';
import type { Logger } from '@oxicloud/scheduler';
import { SERVER_TARGET } from '../logger.js';

/**
 * The one boot line that says whether this server mails alerts: `alerts.on`
 * with the SMTP host, port and how many admins have an address (a warning
 * when none has, with how to give one), or `alerts.off` naming the variable
 * that is missing from the server's own environment.
 */
export function logAlertsStatus(status: AlertsStatus, logger: Logger): void {
  const detail = describeAlertsStatus(status);
  if (!status.enabled) {
    logger.info(
      { target: SERVER_TARGET, event: 'alerts.off', missing: status.missing },
      `alerts off: ${detail}, so failed runs and findings are mailed to nobody; set OXICLOUD_SMTP_HOST and ` +
        "OXICLOUD_SMTP_FROM (and OXICLOUD_SMTP_PORT, OXICLOUD_SMTP_TLS as your relay needs) in this server's environment",
    );
    return;
  }
  const fields = {
    target: SERVER_TARGET,
    event: 'alerts.on',
    smtp_host: status.smtp.host,
    smtp_port: status.smtp.port,
    smtp_secure: status.smtp.secure,
    admin_recipients: status.adminRecipients,
  };
  if (status.adminRecipients === 0) {
    logger.warn(
      fields,
      `alerts on: ${detail}. Set OXICLOUD_ADMIN_EMAIL (used for the user "admin" at the next boot) ` +
        'or run `pnpm oxijobs users set-email admin you@example.org`',
    );
    return;
  }
  logger.info(fields, `alerts on: ${detail}`);
}
