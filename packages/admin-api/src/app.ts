import { OpenAPIHono } from '@hono/zod-openapi';
import { JobCatalog, type RecoverableJobList } from '@oxicloud/recoverable';
import { type Logger, NO_CAPABILITIES } from '@oxicloud/scheduler';
import { auditAdminPosts } from './audit/audit-log.js';
import { adminAuth } from './auth/admin-auth.js';
import { tokenKey } from './auth/admin-token.js';
import { AdminApiError } from './errors.js';
import type { AdminEnv } from './http/admin-env.js';
import { errorResponse, toAdminApiError } from './http/error-response.js';
import { methodNotAllowed } from './http/method-not-allowed.js';
import { DEFAULT_MAX_BODY_BYTES, MAX_BODY_BYTES_RANGE, requestBodyLimit } from './http/request-body-limit.js';
import { validationHook } from './http/validation-hook.js';
import { registerAdminPageRoutes } from './page/page-routes.js';
import type { AdminUserLookup } from './ports/admin-user-lookup.js';
import type { AlertsView } from './ports/alerts-view.js';
import type { ClusterView } from './ports/cluster-view.js';
import type { FindingKindsView } from './ports/finding-kinds.js';
import type { FindingsLedger } from './ports/findings-ledger.js';
import type { FindingsReader } from './ports/findings-reader.js';
import type { HealthProbe } from './ports/health-probe.js';
import type { JobCatalogView, PeriodicJobs } from './ports/job-catalog.js';
import type { JobFreshness } from './ports/job-freshness.js';
import type { ReadinessProbe } from './ports/readiness-probe.js';
import type { RepairService } from './ports/repair-service.js';
import type { RunService } from './ports/run-service.js';
import { registerAlertsRoutes } from './routes/alerts.js';
import { registerFindingRoutes } from './routes/findings.js';
import { registerHealthRoute } from './routes/health.js';
import { JobDirectory } from './routes/job-directory.js';
import { registerJobRoutes } from './routes/jobs.js';
import { registerClusterRoutes } from './routes/nodes.js';
import { registerProbeRoutes } from './routes/probes.js';
import { registerRepairRoutes } from './routes/repairs.js';
import { registerRunRoutes } from './routes/runs.js';

/** No recoverable jobs (an app without `runs`). */
const NO_RECOVERABLE_JOBS: RecoverableJobList = { names: () => [], capabilities: () => NO_CAPABILITIES };

/** Where the OpenAPI document is served (public: it holds no data). */
export const OPENAPI_PATH = '/api/admin/openapi.json';

/** What {@link createAdminApp} needs: ports, the token secret and a logger. */
export interface AdminAppDeps {
  /** The periodic jobs' live state and dispatch: `JobRegistry` from `@oxicloud/scheduler` as it is. */
  readonly jobs: PeriodicJobs;
  /**
   * The Part 2 runs port: `RecoverableEngine` from `@oxicloud/recoverable` as
   * it is. Its jobs are listed (kind `recoverable`) even when `jobs` does not
   * list them, and their triggers go to it. Without it every job is periodic.
   */
  readonly runs?: RunService;
  /**
   * The one catalog of every job (kind, cadence, capabilities): `JobCatalog`
   * of `@oxicloud/recoverable`, the same one `consistency_batch` runs its
   * checks from. Every name lookup, kind and capability of the API reads it.
   * @defaultValue `new JobCatalog(jobs, runs)`
   */
  readonly catalog?: JobCatalogView;
  /**
   * The finding kinds each job declares: `FindingKindCatalog` of
   * `@oxicloud/consistency` as it is. The listing's `finding_kinds` and a
   * finding's `kind_declaration` read it; without it they are empty.
   */
  readonly findingKinds?: FindingKindsView;
  /** A run's findings: `PgFindingStore` from `@oxicloud/consistency` as it is. */
  readonly findings?: FindingsReader;
  /** Findings across runs (`PgFindingLedger`): `/api/admin/findings` is served only with it. */
  readonly ledger?: FindingsLedger;
  /** Repair plans and their runs (`/api/admin/repairs`); without it those routes are absent. */
  readonly repairs?: RepairService;
  /**
   * Jobs this server does not register, and why (a storage domain with no
   * adapter for them): asked for one, the API answers 404 `JOB_NOT_FOUND`
   * with that reason; `repair` among them answers so on `/api/admin/repairs`.
   */
  readonly unavailableJobs?: readonly { readonly job: string; readonly reason: string }[];
  /** Checks every verified token's user against `auth.users`. */
  readonly users: AdminUserLookup;
  /** HS256 secret the bearer tokens are signed with; at least 32 bytes. */
  readonly jwtSecret: string | Uint8Array;
  /** Audit lines (`target: 'audit'`) and unexpected errors go here. */
  readonly logger: Logger;
  /** Answers `GET /healthz`; the route is absent when not given. */
  readonly health?: HealthProbe;
  /** Answers `GET /readyz`; the route is absent when not given (`GET /livez` is always there). */
  readonly readiness?: ReadinessProbe;
  /** Overdue jobs for the listing's `overdue` field; without it `overdue` is always `null`. */
  readonly freshness?: JobFreshness;
  /**
   * The largest request body read, in bytes (1 KiB to 16 MiB); a larger one
   * is answered 413 `PAYLOAD_TOO_LARGE` without being buffered.
   * @defaultValue 65536 (64 KiB, {@link DEFAULT_MAX_BODY_BYTES})
   */
  readonly maxBodyBytes?: number;
  /**
   * The cluster (`@oxicloud/cluster` through the server): `GET /api/admin/nodes`,
   * `GET /api/admin/jobs/{name}/periodic-runs`, and the listing's shared last
   * outcome, `missed_slots` and `last_slot_at`. Absent: those routes are too.
   */
  readonly cluster?: ClusterView;
  /** The server's e-mail alerts: `GET /api/admin/alerts`; absent: that route is too. */
  readonly alerts?: AlertsView;
  /** The `info.version` of the OpenAPI document. @defaultValue '0.1.0' */
  readonly version?: string;
}

/**
 * Creates the admin HTTP app: `GET /healthz` (public), the OpenAPI document
 * at {@link OPENAPI_PATH} (public), and the admin routes under
 * `/api/admin/jobs` behind bearer-token admin auth, every POST audit-logged.
 * Every error is JSON `{ error: { code, message } }`.
 *
 * @example
 * ```ts
 * import { serve } from '@hono/node-server';
 * const app = createAdminApp({
 *   jobs: registry, runs: engine, findings: new PgFindingStore({ pool }),
 *   users, jwtSecret, logger, health,
 * });
 * serve({ fetch: app.fetch, port: 8087 });
 * ```
 */
export function createAdminApp(deps: AdminAppDeps): OpenAPIHono<AdminEnv> {
  // Validate options once, at creation.
  const secret = tokenKey(deps.jwtSecret);
  const maxBodyBytes = deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const { min, max } = MAX_BODY_BYTES_RANGE;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < min || maxBodyBytes > max) {
    throw new AdminApiError(
      'BAD_OPTIONS',
      `maxBodyBytes must be an integer from ${min} to ${max} (bytes), got ${String(maxBodyBytes)}`,
    );
  }
  const { logger } = deps;
  const app = new OpenAPIHono<AdminEnv>({ defaultHook: validationHook });

  app.onError((thrown, c) => {
    const known = toAdminApiError(thrown);
    if (known) return errorResponse(c, known);
    logger.error(
      {
        target: 'oxicloud::admin_api',
        event: 'request.failed',
        method: c.req.method,
        path: c.req.path,
        err:
          thrown instanceof Error
            ? { name: thrown.name, message: thrown.message, stack: thrown.stack }
            : thrown,
      },
      'unexpected error while answering an admin request',
    );
    return errorResponse(
      c,
      new AdminApiError('INTERNAL', 'an unexpected error occurred; the server log has the details'),
    );
  });
  app.notFound((c) =>
    errorResponse(c, new AdminApiError('NOT_FOUND', `no route for ${c.req.method} ${c.req.path}`)),
  );

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'mint one with `oxijobs token --user <admin>`',
  });

  if (deps.health) registerHealthRoute(app, deps.health);
  registerProbeRoutes(app, deps.readiness);
  registerAdminPageRoutes(app);

  app.use('/api/admin/jobs', auditAdminPosts(logger));
  app.use('/api/admin/jobs/*', auditAdminPosts(logger));
  app.use('/api/admin/jobs', adminAuth({ users: deps.users, secret }));
  app.use('/api/admin/jobs/*', adminAuth({ users: deps.users, secret }));
  // After auth: an unauthenticated body is never read at all.
  app.use('/api/admin/jobs', requestBodyLimit(maxBodyBytes));
  app.use('/api/admin/jobs/*', requestBodyLimit(maxBodyBytes));
  if (deps.cluster) {
    app.use('/api/admin/nodes', auditAdminPosts(logger));
    app.use('/api/admin/nodes', adminAuth({ users: deps.users, secret }));
    app.use('/api/admin/nodes', requestBodyLimit(maxBodyBytes));
  }

  const directory = new JobDirectory({
    catalog: deps.catalog ?? new JobCatalog(deps.jobs, deps.runs ?? NO_RECOVERABLE_JOBS),
    jobs: deps.jobs,
    runs: deps.runs,
    freshness: deps.freshness,
    cluster: deps.cluster,
    findingKinds: deps.findingKinds,
    unavailable: new Map((deps.unavailableJobs ?? []).map((u) => [u.job, u.reason])),
  });
  registerJobRoutes(app, { directory, jobs: deps.jobs, logger });
  registerRunRoutes(app, { directory, findings: deps.findings, logger });
  if (deps.cluster) registerClusterRoutes(app, { cluster: deps.cluster, directory });
  if (deps.alerts) {
    app.use('/api/admin/alerts', auditAdminPosts(logger));
    app.use('/api/admin/alerts', adminAuth({ users: deps.users, secret }));
    app.use('/api/admin/alerts', requestBodyLimit(maxBodyBytes));
    registerAlertsRoutes(app, deps.alerts);
  }
  if (deps.ledger) {
    for (const path of ['/api/admin/findings', '/api/admin/findings/*']) {
      app.use(path, auditAdminPosts(logger));
      app.use(path, adminAuth({ users: deps.users, secret }));
      app.use(path, requestBodyLimit(maxBodyBytes));
    }
    registerFindingRoutes(app, {
      ledger: deps.ledger,
      jobs: deps.jobs,
      runs: deps.runs,
      findingKinds: deps.findingKinds,
      users: deps.users,
      logger,
    });
  }
  if (deps.repairs) {
    for (const path of ['/api/admin/repairs', '/api/admin/repairs/*']) {
      app.use(path, auditAdminPosts(logger));
      app.use(path, adminAuth({ users: deps.users, secret }));
      app.use(path, requestBodyLimit(maxBodyBytes));
    }
    registerRepairRoutes(app, { repairs: deps.repairs, users: deps.users, logger });
  } else {
    const reason = deps.unavailableJobs?.find((u) => u.job === 'repair')?.reason;
    if (reason !== undefined) {
      for (const path of ['/api/admin/repairs', '/api/admin/repairs/*']) {
        app.use(path, adminAuth({ users: deps.users, secret }));
        app.all(path, () => {
          throw new AdminApiError('NOT_FOUND', `repair plans are not available on this server: ${reason}`);
        });
      }
    }
  }

  app.doc31(OPENAPI_PATH, {
    openapi: '3.1.0',
    info: {
      title: 'OxiCloud jobs admin API',
      version: deps.version ?? '0.1.0',
      description: 'Errors are JSON `{ error: { code, message } }` with a stable code.',
      license: { name: 'AGPL-3.0-only', url: 'https://www.gnu.org/licenses/agpl-3.0.html' },
    },
    servers: [{ url: '/', description: 'the OxiCloud jobs server that serves this document' }],
    security: [{ bearerAuth: [] }],
  });
  methodNotAllowed(app, OPENAPI_PATH, ['GET']);
  return app;
}
