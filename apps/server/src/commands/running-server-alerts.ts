import { type AlertsStatus, describeAlertsStatus } from '@oxicloud/alerts';
import { AdminClient } from '../jobs-client/admin-client.js';
import type { ApiAlertsState } from '../jobs-client/api-types.js';
import { JobsClientError } from '../jobs-client/jobs-client-error.js';

/** How long `alerts test` waits for the running server's answer. */
const ASK_TIMEOUT_MS = 5_000;

function statusOf(state: ApiAlertsState): AlertsStatus {
  if (state.enabled && state.smtp !== null) {
    return { enabled: true, smtp: state.smtp, adminRecipients: state.admin_recipients };
  }
  return {
    enabled: false,
    missing: state.missing ?? 'OXICLOUD_SMTP_HOST',
    adminRecipients: state.admin_recipients,
  };
}

/**
 * One line saying whether the server at `baseUrl` mails alerts, from its
 * `GET /api/admin/alerts`: "the server at … has alerts on (SMTP host:port, …)",
 * "… has alerts off (OXICLOUD_SMTP_HOST is not set): …", "no server answered
 * at … (…)", or why it could not say. Never throws: `alerts test` goes on.
 */
export async function runningServerAlerts(
  baseUrl: string,
  token: string,
  fetchImpl?: typeof fetch,
): Promise<string> {
  const client = new AdminClient({
    baseUrl,
    token,
    timeoutMs: ASK_TIMEOUT_MS,
    ...(fetchImpl === undefined ? {} : { fetch: fetchImpl }),
  });
  try {
    const status = statusOf((await client.alertsState()).body);
    const detail = describeAlertsStatus(status);
    if (status.enabled) return `the server at ${client.baseUrl} has alerts on (${detail})`;
    return (
      `the server at ${client.baseUrl} has alerts off (${detail} in its environment): it mails nothing; ` +
      'set the same OXICLOUD_SMTP_* where the server runs and restart it'
    );
  } catch (error) {
    if (error instanceof JobsClientError && (error.code === 'UNREACHABLE' || error.code === 'TIMEOUT')) {
      const reason =
        error.code === 'TIMEOUT'
          ? `no answer within ${ASK_TIMEOUT_MS / 1000} s`
          : (/not reachable at \S+ \(([^)]*)\)/.exec(error.message)?.[1] ?? error.message);
      return (
        `no server answered at ${client.baseUrl} (${reason}); a server mails alerts only with OXICLOUD_SMTP_* ` +
        'in its own environment (set --url or OXICLOUD_ADMIN_URL to ask another one)'
      );
    }
    const why = error instanceof Error ? error.message : String(error);
    return `the server at ${client.baseUrl} did not say whether it has alerts on: ${why}`;
  }
}
