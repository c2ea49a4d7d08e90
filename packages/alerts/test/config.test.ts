import { CapturingLogger } from '@oxicloud/test-support';
import { describe, expect, it } from 'vitest';
import {
  AlertsError,
  alertsEnabledFor,
  alertsStatus,
  describeAlertsStatus,
  JobAlerts,
  smtpConfigFromEnv,
  validateAlertEnv,
} from '../src/index.js';

function configError(fn: () => unknown): AlertsError {
  try {
    fn();
  } catch (error) {
    if (error instanceof AlertsError) return error;
    throw error;
  }
  throw new Error('expected an AlertsError');
}

const base = { OXICLOUD_SMTP_HOST: 'smtp.example.org', OXICLOUD_SMTP_FROM: 'alerts@example.org' };

describe('smtpConfigFromEnv', () => {
  it('returns null when OXICLOUD_SMTP_HOST is unset or empty', () => {
    expect(smtpConfigFromEnv({})).toBeNull();
    expect(smtpConfigFromEnv({ OXICLOUD_SMTP_HOST: '  ', OXICLOUD_SMTP_PORT: 'junk' })).toBeNull();
  });

  it("applies OxiCloud's defaults: starttls on 587 (587 for tls too), no AUTH", () => {
    expect(smtpConfigFromEnv(base)).toEqual({
      host: 'smtp.example.org',
      port: 587,
      secure: 'starttls',
      user: undefined,
      password: undefined,
      from: 'alerts@example.org',
    });
    expect(smtpConfigFromEnv({ ...base, OXICLOUD_SMTP_TLS: 'TLS' })).toMatchObject({
      port: 587,
      secure: 'tls',
    });
    expect(
      smtpConfigFromEnv({
        ...base,
        OXICLOUD_SMTP_TLS: 'none',
        OXICLOUD_SMTP_PORT: '2525',
        OXICLOUD_SMTP_USER: 'ops',
        OXICLOUD_SMTP_PASS: ' secret ',
        OXICLOUD_SMTP_FROM: 'OxiCloud <alerts@example.org>',
      }),
    ).toEqual({
      host: 'smtp.example.org',
      port: 2525,
      secure: 'none',
      user: 'ops',
      password: ' secret ',
      from: 'OxiCloud <alerts@example.org>',
    });
  });

  it("takes OxiCloud's spellings of OXICLOUD_SMTP_TLS", () => {
    for (const [raw, mode] of [
      ['starttls', 'starttls'],
      [' Implicit ', 'tls'],
      ['smtps', 'tls'],
      ['PLAIN', 'none'],
      ['none', 'none'],
    ] as const) {
      expect(smtpConfigFromEnv({ ...base, OXICLOUD_SMTP_TLS: raw })?.secure, raw).toBe(mode);
    }
  });

  it("still reads the engine's earlier names OXICLOUD_SMTP_SECURE and OXICLOUD_SMTP_PASSWORD; another value beside OxiCloud's name is an error", () => {
    const earlier = {
      ...base,
      OXICLOUD_SMTP_SECURE: 'none',
      OXICLOUD_SMTP_USER: 'ops',
      OXICLOUD_SMTP_PASSWORD: 'pw 1',
    };
    expect(smtpConfigFromEnv(earlier)).toMatchObject({ secure: 'none', user: 'ops', password: 'pw 1' });
    expect(
      smtpConfigFromEnv({ ...earlier, OXICLOUD_SMTP_TLS: 'NONE', OXICLOUD_SMTP_PASS: 'pw 1' }),
    ).toMatchObject({ secure: 'none', password: 'pw 1' });
    expect(configError(() => smtpConfigFromEnv({ ...earlier, OXICLOUD_SMTP_TLS: 'tls' })).message).toBe(
      'OXICLOUD_SMTP_TLS="tls" and OXICLOUD_SMTP_SECURE="none" differ: OXICLOUD_SMTP_SECURE is the engine\'s ' +
        "earlier name of OXICLOUD_SMTP_TLS (OxiCloud's); set OXICLOUD_SMTP_TLS only",
    );
    const pass = configError(() => smtpConfigFromEnv({ ...earlier, OXICLOUD_SMTP_PASS: 'pw 2' })).message;
    expect(pass).toContain('OXICLOUD_SMTP_PASS and OXICLOUD_SMTP_PASSWORD differ');
    expect(pass).not.toContain('pw ');
  });

  it('rejects bad values with INVALID_CONFIG naming the variable and what is allowed', () => {
    const secure = configError(() => smtpConfigFromEnv({ ...base, OXICLOUD_SMTP_TLS: 'ssl' }));
    expect(secure.code).toBe('INVALID_CONFIG');
    expect(secure.message).toBe(
      'OXICLOUD_SMTP_TLS must be one of none, starttls, tls (OxiCloud\'s implicit and smtps mean tls, plain means none), got "ssl"',
    );
    expect(configError(() => smtpConfigFromEnv({ ...base, OXICLOUD_SMTP_SECURE: 'ssl' })).message).toMatch(
      /^OXICLOUD_SMTP_SECURE must be one of none, starttls, tls/,
    );

    for (const port of ['0', '65536', '25.5', 'abc', '-1']) {
      expect(configError(() => smtpConfigFromEnv({ ...base, OXICLOUD_SMTP_PORT: port })).message).toMatch(
        /^OXICLOUD_SMTP_PORT must be an integer from 1 to 65535/,
      );
    }
    expect(configError(() => smtpConfigFromEnv({ OXICLOUD_SMTP_HOST: 'smtp.example.org' })).message).toMatch(
      /^OXICLOUD_SMTP_FROM is required when OXICLOUD_SMTP_HOST is set/,
    );
    expect(
      configError(() => smtpConfigFromEnv({ ...base, OXICLOUD_SMTP_FROM: 'not an address' })).message,
    ).toMatch(/^OXICLOUD_SMTP_FROM must be an address/);
    expect(configError(() => smtpConfigFromEnv({ ...base, OXICLOUD_SMTP_USER: 'ops' })).message).toMatch(
      /OXICLOUD_SMTP_USER and OXICLOUD_SMTP_PASS must be set together/,
    );
  });
});

describe('OXICLOUD_JOB_<NAME>_ALERT_ON_FAIL', () => {
  it('defaults to on, accepts true/false in any case, and names a bad variable', () => {
    const env = {
      OXICLOUD_JOB_TRASH_CLEANUP_ALERT_ON_FAIL: 'FALSE',
      OXICLOUD_JOB_DEDUP_GC_ALERT_ON_FAIL: 'true',
      OXICLOUD_OTHER: 'x',
    };
    expect(validateAlertEnv(env)).toEqual(['trash_cleanup']);
    expect(alertsEnabledFor(env, 'trash_cleanup')).toBe(false);
    expect(alertsEnabledFor(env, 'dedup_gc')).toBe(true);
    expect(alertsEnabledFor(env, 'grant_cleanup')).toBe(true);

    const bad = configError(() => validateAlertEnv({ OXICLOUD_JOB_DEDUP_GC_ALERT_ON_FAIL: 'no' }));
    expect(bad.message).toBe('OXICLOUD_JOB_DEDUP_GC_ALERT_ON_FAIL must be true or false, got "no"');
  });

  it('is validated when JobAlerts is constructed, with the other options', () => {
    const common = {
      sender: null,
      recipients: { adminEmails: async () => [] },
      logger: new CapturingLogger(),
    };
    expect(
      configError(() => new JobAlerts({ ...common, env: { OXICLOUD_JOB_X_ALERT_ON_FAIL: 'maybe' } })).code,
    ).toBe('INVALID_CONFIG');
    expect(
      configError(() => new JobAlerts({ ...common, env: {}, publicBaseUrl: 'ftp://x' })).message,
    ).toMatch(/publicBaseUrl must be an http\(s\) URL/);
    expect(configError(() => new JobAlerts({ ...common, env: {}, dedupWindowMs: -1 })).message).toMatch(
      /dedupWindowMs/,
    );
  });
});

describe('alertsStatus', () => {
  const smtp = smtpConfigFromEnv({
    OXICLOUD_SMTP_HOST: 'mail.example.org',
    OXICLOUD_SMTP_PORT: '2525',
    OXICLOUD_SMTP_TLS: 'none',
    OXICLOUD_SMTP_FROM: 'alerts@example.org',
  });

  it('is off without OXICLOUD_SMTP_HOST, naming the variable', () => {
    const status = alertsStatus(smtpConfigFromEnv({}), 2);
    expect(status).toEqual({ enabled: false, missing: 'OXICLOUD_SMTP_HOST', adminRecipients: 2 });
    expect(describeAlertsStatus(status)).toBe('OXICLOUD_SMTP_HOST is not set');
  });

  it('is on with the SMTP host, port and security, and counts the admins with an address', () => {
    expect(describeAlertsStatus(alertsStatus(smtp, 1))).toBe(
      'SMTP mail.example.org:2525 (OXICLOUD_SMTP_TLS=none), 1 admin with an e-mail address',
    );
    expect(describeAlertsStatus(alertsStatus(smtp, 3))).toBe(
      'SMTP mail.example.org:2525 (OXICLOUD_SMTP_TLS=none), 3 admins with an e-mail address',
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
