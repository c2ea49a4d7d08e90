/**
 * @oxicloud/alerts: e-mail alerts for failed jobs and consistency findings,
 * over an {@link EmailSender} port with an SMTP adapter. Recipients are the
 * admins (`AdminRecipients`), at most one mail per (job, kind) per 6 h.
 *
 * @packageDocumentation
 */

export type { AdminRecipients } from './admin-recipients.js';
export { alertOnFailVariable, alertsEnabledFor, validateAlertEnv } from './alert-env.js';
export type { AlertsErrorCode } from './alerts-error.js';
export { AlertsError } from './alerts-error.js';
export type { AlertsSmtpTarget, AlertsStatus } from './alerts-status.js';
export { alertsStatus, describeAlertsStatus } from './alerts-status.js';
export type { EmailMessage, EmailSender } from './email-sender.js';
export { escapeHtml } from './html.js';
export type {
  AlertKind,
  AlertResult,
  ConsistencyFindingsEvent,
  FindingChangesEvent,
  JobAlertsOptions,
  JobFailedEvent,
  JobOverdueEvent,
  QueueStalledEvent,
} from './job-alerts.js';
export { ALERTS_TARGET, DEFAULT_DEDUP_WINDOW_MS, JobAlerts } from './job-alerts.js';
export type { Env, SmtpConfig, SmtpSecurity } from './smtp-config.js';
export { SMTP_ENV, SMTP_ENV_ALIASES, SMTP_SECURITY_VALUES, smtpConfigFromEnv } from './smtp-config.js';
export { describeSmtpError } from './smtp-diagnosis.js';
export type { SmtpReceipt, SmtpTimeouts } from './smtp-email-sender.js';
export { SmtpEmailSender } from './smtp-email-sender.js';
export type {
  AlertSeverity,
  ConsistencyFindingsData,
  FindingCount,
  FindingExample,
} from './templates/consistency-findings.js';
export {
  groupFindingCounts,
  renderConsistencyFindings,
  SEVERITY_ORDER,
  worstExample,
} from './templates/consistency-findings.js';
export type { ChangedFinding, FindingChangesData, MailedChange } from './templates/finding-changes.js';
export { changedTotal, renderFindingChanges } from './templates/finding-changes.js';
export type { JobFailedData, JobFailureCause } from './templates/job-failed.js';
export { renderJobFailed } from './templates/job-failed.js';
export type { JobOverdueData } from './templates/job-overdue.js';
export { renderJobOverdue } from './templates/job-overdue.js';
export type { QueueStalledData } from './templates/queue-stalled.js';
export { renderQueueStalled } from './templates/queue-stalled.js';
export type { RenderedEmail } from './templates/rendered-email.js';
