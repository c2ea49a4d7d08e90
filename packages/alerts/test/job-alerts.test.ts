import { err, JobRegistry } from '@oxicloud/scheduler';
import { CapturingLogger, createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
// OxiAdminRecipients lives in @oxicloud/storage (an adapter of our port); imported from its source so
// this package does not need a dependency on storage just for the test.
import {
  OXI_FIRST_ADMIN_PLACEHOLDER_EMAIL,
  OxiAdminRecipients,
} from '../../storage/src/oxicloud/oxi-users-repository.js';
import type { AlertResult, Env } from '../src/index.js';
import { JobAlerts, SmtpEmailSender, smtpConfigFromEnv } from '../src/index.js';
import { closedPort, parseMail, type SmtpListener, startSmtpListener } from './smtp-listener.js';

const HOUR = 3_600_000;

let db: TestDatabase;
let smtp: SmtpListener;
let sender: SmtpEmailSender;
let logger: CapturingLogger;
let clock: number;

function smtpEnv(port: number, extra: Env = {}): Env {
  return {
    OXICLOUD_SMTP_HOST: '127.0.0.1',
    OXICLOUD_SMTP_PORT: String(port),
    OXICLOUD_SMTP_TLS: 'none',
    OXICLOUD_SMTP_FROM: 'OxiCloud <alerts@oxicloud.test>',
    ...extra,
  };
}

function newAlerts(env: Env = {}): JobAlerts {
  return new JobAlerts({
    sender,
    recipients: new OxiAdminRecipients(db.pool),
    logger,
    publicBaseUrl: 'https://cloud.example.org',
    env,
    now: () => new Date(clock),
  });
}

const failure = (job: string, message = 'database unreachable') => ({
  job,
  cause: 'handler' as const,
  message,
  elapsedMs: 42,
  at: new Date('2026-03-01T03:00:00.000Z'),
});

beforeAll(async () => {
  db = await createTestDatabase({ domain: 'oxicloud' });
  // OxiCloud's auth.users.email is NOT NULL: an admin with no address has the first admin's placeholder.
  await db.pool.query(
    `INSERT INTO auth.users (username, email, role) VALUES
       ('alice', 'alice@example.org', 'admin'),
       ('bob', 'bob@example.org', 'admin'),
       ('carol', '${OXI_FIRST_ADMIN_PLACEHOLDER_EMAIL}', 'admin'),
       ('dave', 'dave@example.org', 'user'),
       ('erin', 'erin@example.org', 'user')`,
  );
  smtp = await startSmtpListener();
  const config = smtpConfigFromEnv(smtpEnv(smtp.port));
  if (config === null) throw new Error('expected an SMTP config');
  sender = new SmtpEmailSender(config);
});

afterAll(async () => {
  sender?.close();
  await smtp?.close();
  await db?.drop();
});

beforeEach(() => {
  smtp.received.length = 0;
  logger = new CapturingLogger();
  clock = Date.parse('2026-03-01T03:00:00.000Z');
});

afterEach(() => {
  expect(logger.lines.filter((line) => line.level === 'error')).toEqual([]);
});

describe('JobAlerts over real SMTP and Postgres recipients', () => {
  it('mails a failing scheduler job once to each admin with an address, and to no other user', async () => {
    const alerts = newAlerts();
    const pending: Promise<AlertResult | undefined>[] = [];
    const registry = new JobRegistry({
      logger,
      onOutcome: (event) => void pending.push(alerts.onJobOutcome(event)),
    });
    registry.register({ name: 'trash_cleanup', run: async () => err('disk full') }, null, null);

    expect(await registry.trigger('trash_cleanup')).toEqual(err('disk full'));
    expect(await Promise.all(pending)).toEqual(['sent']);

    expect(smtp.received).toHaveLength(1);
    const [mail] = smtp.received;
    expect(mail?.rcptTo.sort()).toEqual(['alice@example.org', 'bob@example.org']);
    expect(mail?.from).toBe('alerts@oxicloud.test');
    const parsed = parseMail(mail?.raw ?? '');
    expect(parsed.headers.get('subject')).toBe('[OxiCloud] Job trash_cleanup failed');
    expect(parsed.headers.get('to')).toContain('alice@example.org');
    expect(parsed.headers.get('to')).not.toContain('dave@example.org');
    expect(parsed.text).toContain('Job: trash_cleanup');
    expect(parsed.text).toContain('Cause: handler');
    expect(parsed.text).toContain('Message: disk full');
    expect(parsed.text).toContain('https://cloud.example.org/admin/jobs?highlight=trash_cleanup');
    expect(parsed.html).toContain('disk full');
    expect(logger.events('alert.sent')[0]?.fields).toMatchObject({
      target: 'oxicloud::alerts',
      job: 'trash_cleanup',
      kind: 'job_failed',
      recipients: 2,
    });
  });

  it('sends nothing for a second failure within 6 h, and again after the window', async () => {
    const alerts = newAlerts();
    expect(await alerts.jobFailed(failure('grant_cleanup'))).toBe('sent');
    clock += 6 * HOUR - 1;
    expect(await alerts.jobFailed(failure('grant_cleanup'))).toBe('deduplicated');
    expect(smtp.received).toHaveLength(1);
    // The dedup key is (job, kind): another job and a findings alert for the same job still go out.
    expect(await alerts.jobFailed(failure('dedup_gc'))).toBe('sent');
    expect(
      await alerts.consistencyFindings({
        job: 'grant_cleanup',
        runId: 'r1',
        counts: [{ kind: 'k', severity: 'Drift', count: 1 }],
        examples: [],
      }),
    ).toBe('sent');
    expect(smtp.received).toHaveLength(3);
    clock += 1;
    expect(await alerts.jobFailed(failure('grant_cleanup'))).toBe('sent');
    expect(smtp.received).toHaveLength(4);
  });

  it('stays silent for a job with OXICLOUD_JOB_<NAME>_ALERT_ON_FAIL=false', async () => {
    const alerts = newAlerts({ OXICLOUD_JOB_STORAGE_RECONCILE_ALERT_ON_FAIL: 'false' });
    expect(await alerts.jobFailed(failure('storage_reconcile'))).toBe('disabled');
    expect(await alerts.jobFailed(failure('trash_cleanup'))).toBe('sent');
    expect(smtp.received.map((mail) => parseMail(mail.raw).headers.get('subject'))).toEqual([
      '[OxiCloud] Job trash_cleanup failed',
    ]);
  });

  it('mails the grouped finding counts and the worst example of a consistency run', async () => {
    const alerts = newAlerts();
    const result = await alerts.consistencyFindings({
      job: 'files_consistency',
      runId: '0197a0c4-run',
      counts: [
        { kind: 'blob_size_mismatch', severity: 'Drift', count: 4 },
        { kind: 'missing_blob', severity: 'DataLoss', count: 2 },
        { kind: 'parent_folder_trashed', severity: 'Drift', count: 1 },
      ],
      examples: [
        {
          kind: 'blob_size_mismatch',
          severity: 'Drift',
          resourceId: 'file-9',
          detail: { expected: 10, actual: 11 },
        },
        {
          kind: 'missing_blob',
          severity: 'DataLoss',
          resourceId: 'file-1',
          detail: { blob_hash: 'ab'.repeat(32) },
        },
      ],
    });
    expect(result).toBe('sent');
    const parsed = parseMail(smtp.received[0]?.raw ?? '');
    expect(parsed.headers.get('subject')).toBe('[OxiCloud] files_consistency found 7 inconsistencies');
    expect(parsed.text).toContain('Run id: 0197a0c4-run');
    expect(parsed.text).toContain(
      [
        '  DataLoss  missing_blob: 2',
        '  Drift  blob_size_mismatch: 4',
        '  Drift  parent_folder_trashed: 1',
      ].join('\n'),
    );
    expect(parsed.text).toContain('Worst example (DataLoss, missing_blob):');
    expect(parsed.text).toContain('resource: file-1');
    expect(parsed.text).toContain('https://cloud.example.org/admin/jobs/files_consistency/runs/0197a0c4-run');
    expect(parsed.html).toContain(
      '<code>missing_blob</code></td><td style="text-align: left; padding: 2px 12px 2px 0;">2</td>',
    );
    // No findings → no mail.
    expect(
      await alerts.consistencyFindings({ job: 'drives_consistency', runId: 'r', counts: [], examples: [] }),
    ).toBe('empty');
    expect(smtp.received).toHaveLength(1);
  });

  it('mails what a run changed, every run (no 6 h dedup), and nothing when nothing changed', async () => {
    const alerts = newAlerts();
    const changes = (n: number) => ({
      job: 'files_consistency',
      runId: `run-${n}`,
      changed: [
        {
          id: 'f1',
          kind: 'missing_blob',
          severity: 'DataLoss' as const,
          resourceId: 'ab'.repeat(32),
          change: 'new' as const,
          magnitude: 3,
        },
        {
          id: 'f2',
          kind: 'blob_size_mismatch',
          severity: 'Drift' as const,
          resourceId: 'file-2',
          change: 'reopened' as const,
          magnitude: 5,
        },
      ],
      counts: { new: 1, reopened: 1, worse: 0, expired: 0, stillOpen: 7, fixed: 2 },
    });
    expect(await alerts.findingChanges(changes(1))).toBe('sent');
    expect(await alerts.findingChanges(changes(2))).toBe('sent');
    expect(smtp.received).toHaveLength(2);
    const parsed = parseMail(smtp.received[0]?.raw ?? '');
    expect(parsed.headers.get('subject')).toBe('[OxiCloud] files_consistency: 2 new or reopened findings');
    expect(parsed.text).toContain('Summary: 1 new, 1 reopened, 0 worse, 7 still open, 2 fixed by this run');
    expect(parsed.text).toContain(`  DataLoss  missing_blob  ${'ab'.repeat(32)}  (new)`);
    expect(parsed.text).toContain('  Drift  blob_size_mismatch  file-2  (reopened (was fixed))');
    expect(
      await alerts.findingChanges({
        ...changes(3),
        changed: [],
        counts: { new: 0, reopened: 0, worse: 0, expired: 0, stillOpen: 7, fixed: 1 },
      }),
    ).toBe('empty');
    expect(smtp.received).toHaveLength(2);
    // Failures keep their dedup.
    expect(await alerts.jobFailed(failure('files_consistency'))).toBe('sent');
    expect(await alerts.jobFailed(failure('files_consistency'))).toBe('deduplicated');
  });

  it('delivers HTML in an error message escaped in the html part', async () => {
    const alerts = newAlerts();
    const message = '<script>alert("pwned")</script> & <b>bold</b>';
    expect(await alerts.jobFailed(failure('reextract_audio', message))).toBe('sent');
    const parsed = parseMail(smtp.received[0]?.raw ?? '');
    expect(parsed.html).toContain(
      '&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;',
    );
    expect(parsed.html).not.toContain('<script>');
    expect(parsed.html).not.toContain('<b>bold</b>');
    expect(parsed.text).toContain(message);
  });

  it('resolves and logs a warning when the SMTP server is down, then retries on the next failure', async () => {
    const config = smtpConfigFromEnv(smtpEnv(await closedPort()));
    if (config === null) throw new Error('expected an SMTP config');
    const down = new SmtpEmailSender(config, { connectionTimeoutMs: 2_000 });
    const alerts = new JobAlerts({
      sender: down,
      recipients: new OxiAdminRecipients(db.pool),
      logger,
      env: {},
    });
    await expect(alerts.jobFailed(failure('trash_cleanup'))).resolves.toBe('failed');
    const [warning, ...more] = logger.events('alert.send_failed');
    expect(more).toHaveLength(0);
    expect(warning?.level).toBe('warn');
    expect(warning?.fields).toMatchObject({
      target: 'oxicloud::alerts',
      job: 'trash_cleanup',
      kind: 'job_failed',
    });
    expect(String(warning?.fields['error'])).toMatch(/ECONNREFUSED/);
    // A failed send does not consume the 6 h slot.
    await expect(alerts.jobFailed(failure('trash_cleanup'))).resolves.toBe('failed');
    expect(logger.events('alert.send_failed')).toHaveLength(2);
    down.close();
  });

  it('authenticates with OXICLOUD_SMTP_USER / OXICLOUD_SMTP_PASS', async () => {
    const authed = await startSmtpListener({ user: 'ops', password: 's3cret' });
    try {
      const config = smtpConfigFromEnv(
        smtpEnv(authed.port, { OXICLOUD_SMTP_USER: 'ops', OXICLOUD_SMTP_PASS: 's3cret' }),
      );
      if (config === null) throw new Error('expected an SMTP config');
      const authSender = new SmtpEmailSender(config);
      const alerts = new JobAlerts({
        sender: authSender,
        recipients: new OxiAdminRecipients(db.pool),
        logger,
        env: {},
      });
      expect(await alerts.jobFailed(failure('trash_cleanup'))).toBe('sent');
      expect(authed.received[0]?.user).toBe('ops');
      authSender.close();
    } finally {
      await authed.close();
    }
  });
});

describe('JobAlerts without SMTP or recipients', () => {
  it('is a silent no-op when no sender is configured', async () => {
    const alerts = new JobAlerts({
      sender: null,
      recipients: new OxiAdminRecipients(db.pool),
      logger,
      env: {},
    });
    expect(await alerts.jobFailed(failure('trash_cleanup'))).toBe('no_sender');
    expect(logger.lines).toEqual([]);
  });

  it('sends nothing and logs a warning for each skipped alert when no admin has an address', async () => {
    const alerts = new JobAlerts({ sender, recipients: { adminEmails: async () => [] }, logger, env: {} });
    expect(await alerts.jobFailed(failure('trash_cleanup'))).toBe('no_recipients');
    expect(await alerts.jobFailed(failure('dedup_gc'))).toBe('no_recipients');
    expect(smtp.received).toHaveLength(0);
    const skipped = logger.events('alert.no_recipients');
    expect(skipped.map((line) => [line.level, line.fields['job']])).toEqual([
      ['warn', 'trash_cleanup'],
      ['warn', 'dedup_gc'],
    ]);
    expect(skipped[0]?.message).toContain('oxijobs users set-email');
  });

  it('never rejects when reading recipients fails', async () => {
    const broken = {
      adminEmails: async (): Promise<string[]> => {
        throw new Error('pool ended');
      },
    };
    const alerts = new JobAlerts({ sender, recipients: broken, logger, env: {} });
    await expect(alerts.jobFailed(failure('trash_cleanup'))).resolves.toBe('failed');
    expect(logger.events('alert.send_failed')[0]?.fields['error']).toBe('pool ended');
  });
});

describe('OxiAdminRecipients', () => {
  it('reads admins with an address at each call', async () => {
    const recipients = new OxiAdminRecipients(db.pool);
    expect(await recipients.adminEmails()).toEqual(['alice@example.org', 'bob@example.org']);
    await db.pool.query("UPDATE auth.users SET email = 'carol@example.org' WHERE username = 'carol'");
    try {
      expect(await recipients.adminEmails()).toEqual([
        'alice@example.org',
        'bob@example.org',
        'carol@example.org',
      ]);
    } finally {
      await db.pool.query("UPDATE auth.users SET email = $1 WHERE username = 'carol'", [
        OXI_FIRST_ADMIN_PLACEHOLDER_EMAIL,
      ]);
    }
  });
});
