import type { JobOutcomeEvent, Logger } from '@oxicloud/scheduler';
import type { AdminRecipients } from './admin-recipients.js';
import { alertsEnabledFor, validateAlertEnv } from './alert-env.js';
import { AlertsError } from './alerts-error.js';
import type { EmailSender } from './email-sender.js';
import type { Env } from './smtp-config.js';
import type { FindingCount, FindingExample } from './templates/consistency-findings.js';
import { groupFindingCounts, renderConsistencyFindings } from './templates/consistency-findings.js';
import type { FindingChangesData } from './templates/finding-changes.js';
import { changedTotal, renderFindingChanges } from './templates/finding-changes.js';
import type { JobFailureCause } from './templates/job-failed.js';
import { renderJobFailed } from './templates/job-failed.js';
import type { JobOverdueData } from './templates/job-overdue.js';
import { renderJobOverdue } from './templates/job-overdue.js';
import type { QueueStalledData } from './templates/queue-stalled.js';
import { renderQueueStalled } from './templates/queue-stalled.js';
import type { RenderedEmail } from './templates/rendered-email.js';

/** The log target of every line alerts write. */
export const ALERTS_TARGET = 'oxicloud::alerts';

/** The kinds of alert; the dedup key is (job name, kind), (queue table, kind) for `queue_stalled`. */
export type AlertKind =
  | 'job_failed'
  | 'consistency_findings'
  | 'job_overdue'
  | 'finding_changes'
  | 'queue_stalled';

/** A job with no success within 1.5 × its expected cadence (see `renderJobOverdue`). */
export type JobOverdueEvent = Omit<JobOverdueData, 'publicBaseUrl'>;

/** One of OxiCloud's queues whose oldest row stopped moving (see `renderQueueStalled`). */
export type QueueStalledEvent = QueueStalledData;

/** A run that ended in `err` (Part 1 handler / timeout / throw, or a failed Part 2 run). */
export interface JobFailedEvent {
  readonly job: string;
  readonly cause: JobFailureCause;
  readonly message: string;
  /** Part 2 runs only. */
  readonly runId?: string | undefined;
  readonly elapsedMs: number;
  /** The time of the run's `job.run` log line. */
  readonly at: Date;
}

/** A consistency run that recorded findings. */
export interface ConsistencyFindingsEvent {
  readonly job: string;
  readonly runId: string;
  /** Counts per (kind, severity), e.g. `PgFindingStore.countByKind(runId)`. */
  readonly counts: readonly FindingCount[];
  /** Candidates for the example (e.g. the first page of the run's findings, worst first). */
  readonly examples: readonly FindingExample[];
  /** @defaultValue now */
  readonly at?: Date | undefined;
}

/** What a consistency run changed (new, reopened, worse, expired findings): see `renderFindingChanges`. */
export type FindingChangesEvent = Omit<FindingChangesData, 'publicBaseUrl' | 'at'> & {
  /** @defaultValue now */
  readonly at?: Date | undefined;
};

/**
 * What happened to one alert. The promise of `jobFailed` /
 * `consistencyFindings` resolves to it and never rejects.
 *
 * - `sent`: mailed to every admin.
 * - `no_sender`: SMTP is not configured (silent no-op, nothing logged).
 * - `disabled`: `OXICLOUD_JOB_<NAME>_ALERT_ON_FAIL=false`.
 * - `deduplicated`: the same (job, kind) was mailed within the dedup window.
 * - `no_recipients`: no admin has an e-mail address.
 * - `empty`: a findings event with no findings.
 * - `failed`: reading recipients or sending failed (logged as a warning).
 */
export type AlertResult =
  | 'sent'
  | 'no_sender'
  | 'disabled'
  | 'deduplicated'
  | 'no_recipients'
  | 'empty'
  | 'failed';

export interface JobAlertsOptions {
  /** `null` when SMTP is not configured: every alert is a silent no-op. */
  readonly sender: EmailSender | null;
  readonly recipients: AdminRecipients;
  readonly logger: Logger;
  /** `http(s)://host[/prefix]`; when set, mails link to the admin jobs page. */
  readonly publicBaseUrl?: string | undefined;
  /** Where `OXICLOUD_JOB_<NAME>_ALERT_ON_FAIL` is read. @defaultValue `process.env` */
  readonly env?: Env | undefined;
  /** @defaultValue `() => new Date()` */
  readonly now?: (() => Date) | undefined;
  /** At most one mail per (job, kind) within this window. @defaultValue 6 h */
  readonly dedupWindowMs?: number | undefined;
}

/** The default dedup window: 6 hours (the operator-attention interval of the plan). */
export const DEFAULT_DEDUP_WINDOW_MS = 6 * 3_600_000;

/**
 * Mails every admin when a job fails or a consistency check finds
 * inconsistencies, at most once per (job, kind) per 6 h.
 *
 * Both methods are fire-and-forget: they resolve to an {@link AlertResult}
 * and never reject, so the job path does not await them. A failed send is
 * logged at warn (`target: 'oxicloud::alerts'`) and frees the dedup slot so
 * the next failure tries again.
 *
 * @example
 * ```ts
 * const smtp = smtpConfigFromEnv(process.env);
 * const alerts = new JobAlerts({
 *   sender: smtp === null ? null : new SmtpEmailSender(smtp),
 *   recipients: new OxiAdminRecipients(pool),
 *   logger,
 *   publicBaseUrl: 'https://cloud.example.org',
 * });
 * const registry = new JobRegistry({ logger, onOutcome: (event) => void alerts.onJobOutcome(event) });
 * ```
 */
export class JobAlerts {
  readonly #sender: EmailSender | null;
  readonly #recipients: AdminRecipients;
  readonly #logger: Logger;
  readonly #publicBaseUrl: string | undefined;
  readonly #env: Env;
  readonly #now: () => Date;
  readonly #windowMs: number;
  /** (job, kind) → epoch ms of the last mail (or of a send in progress). */
  readonly #lastSent = new Map<string, number>();

  /** @throws AlertsError `INVALID_CONFIG` for a bad option or a bad `…_ALERT_ON_FAIL` value. */
  constructor(options: JobAlertsOptions) {
    this.#sender = options.sender;
    this.#recipients = options.recipients;
    this.#logger = options.logger;
    this.#env = options.env ?? process.env;
    this.#now = options.now ?? (() => new Date());
    const window = options.dedupWindowMs ?? DEFAULT_DEDUP_WINDOW_MS;
    if (!Number.isFinite(window) || window < 0) {
      throw new AlertsError(
        'INVALID_CONFIG',
        `dedupWindowMs must be a finite number of milliseconds >= 0, got ${String(window)}`,
      );
    }
    this.#windowMs = window;
    this.#publicBaseUrl = validateBaseUrl(options.publicBaseUrl);
    validateAlertEnv(this.#env);
  }

  /**
   * The scheduler hook: mails `job_failed` for an `err` outcome, ignores `ok`.
   * Pass it as (or call it from) `JobRegistry`'s `onOutcome`.
   */
  onJobOutcome(event: JobOutcomeEvent): Promise<AlertResult | undefined> {
    if (event.outcome.kind !== 'err') return Promise.resolve(undefined);
    return this.jobFailed({
      job: event.job,
      cause: event.cause ?? 'handler',
      message: event.outcome.message,
      elapsedMs: event.elapsedMs,
      at: event.at,
    });
  }

  /** Mails `[OxiCloud] Job <name> failed` to every admin (subject to opt-out and dedup). */
  jobFailed(event: JobFailedEvent): Promise<AlertResult> {
    return this.#alert(event.job, 'job_failed', () =>
      renderJobFailed({ ...event, publicBaseUrl: this.#publicBaseUrl }),
    );
  }

  /** Mails `[OxiCloud] <job> found N inconsistencies` to every admin; nothing for zero findings. */
  consistencyFindings(event: ConsistencyFindingsEvent): Promise<AlertResult> {
    if (groupFindingCounts(event.counts).length === 0) return Promise.resolve('empty');
    return this.#alert(event.job, 'consistency_findings', () =>
      renderConsistencyFindings({
        job: event.job,
        runId: event.runId,
        counts: event.counts,
        examples: event.examples,
        at: event.at ?? this.#now(),
        publicBaseUrl: this.#publicBaseUrl,
      }),
    );
  }

  /**
   * Mails what a consistency run changed: its new, reopened and worse
   * findings (accepted and false-positive ones are never among them), with
   * the counts of what is still open and what it fixed. `empty` (nothing
   * sent) when nothing changed. Not deduplicated: each run's changes are
   * news once (the 6 h dedup is for failures and overdue jobs).
   */
  findingChanges(event: FindingChangesEvent): Promise<AlertResult> {
    if (changedTotal(event.counts) === 0) return Promise.resolve('empty');
    return this.#alert(
      event.job,
      'finding_changes',
      () =>
        renderFindingChanges({
          ...event,
          at: event.at ?? this.#now(),
          publicBaseUrl: this.#publicBaseUrl,
        }),
      { dedup: false },
    );
  }

  /**
   * Mails `[OxiCloud] Job <name> is overdue` to every admin, with the same
   * opt-out (`OXICLOUD_JOB_<NAME>_ALERT_ON_FAIL=false`) and 6 h dedup as a
   * failure. "Once per overdue episode" across processes is the caller's
   * (the freshness store claims the episode in the database first).
   */
  jobOverdue(event: JobOverdueEvent): Promise<AlertResult> {
    return this.#alert(event.job, 'job_overdue', () =>
      renderJobOverdue({ ...event, publicBaseUrl: this.#publicBaseUrl }),
    );
  }

  /**
   * Mails `[OxiCloud] Queue <table> is not draining` to every admin: one of
   * OxiCloud's queues kept its oldest row past the threshold (its drainer
   * stopped). The 6 h dedup applies per queue; "once per stall" is the
   * caller's. No per-job switch: the queue is no job (the caller's
   * threshold turns it off).
   */
  queueStalled(event: QueueStalledEvent): Promise<AlertResult> {
    return this.#alert(event.table, 'queue_stalled', () => renderQueueStalled(event), {
      dedup: true,
      perJobSwitch: false,
    });
  }

  async #alert(
    job: string,
    kind: AlertKind,
    render: () => RenderedEmail,
    options: { readonly dedup: boolean; readonly perJobSwitch?: boolean } = { dedup: true },
  ): Promise<AlertResult> {
    const sender = this.#sender;
    if (sender === null) return 'no_sender';
    let key: string | undefined;
    try {
      if (options.perJobSwitch !== false && !alertsEnabledFor(this.#env, job)) {
        this.#logger.debug(
          { target: ALERTS_TARGET, event: 'alert.disabled', job, kind },
          `alerts for ${job} are off (OXICLOUD_JOB_${job.toUpperCase()}_ALERT_ON_FAIL=false)`,
        );
        return 'disabled';
      }
      const now = this.#now().getTime();
      const reserved = options.dedup ? this.#reserve(job, kind, now) : `${job}\u0000${kind}\u0000once`;
      if (reserved === undefined) {
        this.#logger.debug(
          { target: ALERTS_TARGET, event: 'alert.deduplicated', job, kind },
          `${kind} alert for ${job} suppressed: one was sent within the last ${this.#windowMs} ms`,
        );
        return 'deduplicated';
      }
      key = reserved;

      const to = await this.#recipients.adminEmails();
      if (to.length === 0) {
        this.#release(key);
        // Every skipped alert says so: SMTP is set up, yet nobody is told.
        this.#logger.warn(
          { target: ALERTS_TARGET, event: 'alert.no_recipients', job, kind },
          `${kind} alert for ${job} not sent: no admin has an e-mail address ` +
            '(set OXICLOUD_ADMIN_EMAIL, or run `oxijobs users set-email admin you@example.org`)',
        );
        return 'no_recipients';
      }
      const mail = render();
      await sender.send({ to, subject: mail.subject, text: mail.text, html: mail.html });
      this.#logger.info(
        { target: ALERTS_TARGET, event: 'alert.sent', job, kind, recipients: to.length },
        `${kind} alert for ${job} sent to ${to.length} admin(s)`,
      );
      return 'sent';
    } catch (error) {
      if (key !== undefined) this.#release(key);
      this.#logger.warn(
        { target: ALERTS_TARGET, event: 'alert.send_failed', job, kind, error: messageOf(error) },
        `could not send the ${kind} alert for ${job}`,
      );
      return 'failed';
    }
  }

  /** Takes the (job, kind) slot unless it was taken within the window; cleans expired slots. */
  #reserve(job: string, kind: AlertKind, now: number): string | undefined {
    const key = `${job}\u0000${kind}`;
    const last = this.#lastSent.get(key);
    if (last !== undefined && now - last < this.#windowMs) return undefined;
    for (const [other, at] of this.#lastSent) {
      if (now - at >= this.#windowMs) this.#lastSent.delete(other);
    }
    this.#lastSent.set(key, now);
    return key;
  }

  #release(key: string): void {
    this.#lastSent.delete(key);
  }
}

function validateBaseUrl(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch (cause) {
    throw new AlertsError(
      'INVALID_CONFIG',
      `publicBaseUrl must be an http(s) URL, got ${JSON.stringify(value)}`,
      {
        cause,
      },
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AlertsError(
      'INVALID_CONFIG',
      `publicBaseUrl must be an http(s) URL, got ${JSON.stringify(value)}`,
    );
  }
  return value.trim().replace(/\/+$/, '');
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
