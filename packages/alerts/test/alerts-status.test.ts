import { describe, expect, it } from 'vitest';
import { alertsStatus, describeAlertsStatus, smtpConfigFromEnv } from '../src/index.js';

describe('alertsStatus', () => {
  const smtp = smtpConfigFromEnv({
    OXICLOUD_SMTP_HOST: 'mail.example.org',
    OXICLOUD_SMTP_PORT: '2525',
    OXICLOUD_SMTP_SECURE: 'none',
    OXICLOUD_SMTP_FROM: 'alerts@example.org',
  });

  it('is off without OXICLOUD_SMTP_HOST, naming the variable', () => {
    const status = alertsStatus(smtpConfigFromEnv({}), 2);
    expect(status).toEqual({ enabled: false, missing: 'OXICLOUD_SMTP_HOST', adminRecipients: 2 });
    expect(describeAlertsStatus(status)).toBe('OXICLOUD_SMTP_HOST is not set');
  });

  it('is on with the SMTP host, port and security, and counts the admins with an address', () => {
    expect(describeAlertsStatus(alertsStatus(smtp, 1))).toBe(
      'SMTP mail.example.org:2525 (OXICLOUD_SMTP_SECURE=none), 1 admin with an e-mail address',
    );
    expect(describeAlertsStatus(alertsStatus(smtp, 3))).toBe(
      'SMTP mail.example.org:2525 (OXICLOUD_SMTP_SECURE=none), 3 admins with an e-mail address',
    );
    const status = alertsStatus(smtp, 0);
    expect(status).toEqual({
      enabled: true,
      smtp: { host: 'mail.example.org', port: 2525, secure: 'none' },
      adminRecipients: 0,
    });
    expect(describeAlertsStatus(status)).toContain('no admin has an e-mail address, so none is sent');
  });
});
