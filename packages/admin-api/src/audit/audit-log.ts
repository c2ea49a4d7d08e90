import type { Logger } from '@oxicloud/scheduler';
import type { Context, MiddlewareHandler } from 'hono';
import type { AdminEnv } from '../http/admin-env.js';

/** The `target` of audit lines. */
export const AUDIT_TARGET = 'audit';

/** What the audit line says was decided. */
export type AuditDecision = 'allowed' | 'refused';

const JOB_IN_PATH = /^\/api\/admin\/jobs\/([^/]+)/;

function remoteAddress(c: Context<AdminEnv>): string | undefined {
  // @hono/node-server passes the Node request as `env.incoming`.
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress;
}

function jobName(path: string): string | undefined {
  const raw = JOB_IN_PATH.exec(path)?.[1];
  if (raw === undefined) return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

function writeAuditLine(
  logger: Logger,
  c: Context<AdminEnv>,
  decision: AuditDecision,
  extra: Record<string, unknown>,
): void {
  c.set('audited', true);
  const principal = c.get('principal');
  logger.info(
    {
      target: AUDIT_TARGET,
      event: 'admin.request',
      decision,
      user_id: principal?.userId ?? null,
      username: principal ? (principal.username ?? null) : 'anonymous',
      method: c.req.method,
      path: c.req.path,
      job: jobName(c.req.path) ?? null,
      query: c.req.query(),
      remote_address: remoteAddress(c) ?? null,
      user_agent: c.req.header('user-agent') ?? null,
      ...extra,
    },
    decision === 'allowed' ? 'admin action allowed' : 'admin action refused',
  );
}

/**
 * Writes the `allowed` audit line of a POST right before the handler acts.
 * Route handlers call it after every check passed and before they call a port.
 */
export function auditAllowed(
  logger: Logger,
  c: Context<AdminEnv>,
  extra: Record<string, unknown> = {},
): void {
  writeAuditLine(logger, c, 'allowed', extra);
}

/**
 * Audit middleware for every POST under `/api/admin/jobs`: register it
 * BEFORE the auth middleware. When the request ends without the handler
 * having written its `allowed` line (refused by auth, validation, an unknown
 * job, a wrong method), it writes the `refused` line with the status and
 * error code: a refused request never acted, so the line still precedes any
 * effect. When the action itself was refused after its `allowed` line (the
 * job rejected the params, no active run to cancel, shutting down), a second
 * `refused` line with the status and error code follows.
 */
export function auditAdminPosts(logger: Logger): MiddlewareHandler<AdminEnv> {
  return async (c, next) => {
    if (c.req.method !== 'POST') return next();
    await next();
    const status = c.res.status;
    if (c.get('auditClosed') || (c.get('audited') && status < 400)) return;
    c.set('auditClosed', true);
    writeAuditLine(logger, c, status < 400 ? 'allowed' : 'refused', {
      status,
      error_code: c.get('errorCode') ?? null,
    });
  };
}
