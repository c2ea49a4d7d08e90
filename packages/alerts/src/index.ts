/**
 * @oxicloud/alerts: Email alerts for failed jobs and consistency findings, over an EmailSender port with an SMTP adapter.
 *
 * @packageDocumentation
 */
export {};
