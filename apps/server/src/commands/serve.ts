import { resolveJwtSecret } from '../auth/jwt-secret.js';
import { composeServer } from '../compose.js';
import type { ServerConfig } from '../config/server-config.js';
import { tenantConfigsFromEnv } from '../config/tenant-configs.js';
import { openDatabase } from '../database/open-database.js';
import { applyMigrations, ensureFirstAdmin } from '../database/prepare-database.js';
import { listen } from '../http-listener.js';
import { createLogger, SERVER_TARGET } from '../logger.js';
import { metricsConfigFromEnv } from '../metrics/metrics-config.js';
import { startMetricsListener } from '../metrics/start-metrics-listener.js';
import { logAlertsStatus } from './alerts-boot-line.js';
import { logConfigNotices } from './config-notices.js';
import { nextStopRequest } from './shutdown-signals.js';

/**
 * `oxijobs serve`: opens the database (DATABASE_URL, else the embedded
 * Postgres it starts), migrates, creates the first admin, serves HTTP, starts
 * the scheduler, and on SIGTERM/SIGINT shuts down in order: HTTP, scheduler
 * and engine, pool, then logs "shut down cleanly" and stops the embedded
 * Postgres. Resolves when shut down.
 */
export async function serveCommand(
  config: ServerConfig,
  env: Readonly<Record<string, string | undefined>>,
): Promise<void> {
  const logger = createLogger({ level: config.logLevel, destination: 'stdout', format: config.logFormat });
  logConfigNotices(config, logger);
  const tenants = tenantConfigsFromEnv(env);
  const metricsConfig = metricsConfigFromEnv(env);
  let forceStop: () => void = () => undefined;
  const signal = nextStopRequest(logger, () => forceStop());
  const db = await openDatabase(config, logger);
  forceStop = () => db.stopNow();
  let composed: ReturnType<typeof composeServer> | undefined;
  let http: Awaited<ReturnType<typeof listen>>;
  let metrics: Awaited<ReturnType<typeof startMetricsListener>> = null;
  try {
    const { mode } = await applyMigrations(db.pool, logger, {
      source: db.source,
      engineSchema: config.engineSchema,
    });
    // Beside OxiCloud the admins are OxiCloud's active admins: the engine creates no user there.
    if (mode.kind === 'owned')
      await ensureFirstAdmin(db.pool, logger, config.adminEmail, config.storageDomain);
    const jwt = await resolveJwtSecret(config);
    if (jwt.source === 'generated') {
      logger.info(
        { target: SERVER_TARGET, event: 'auth.secret_generated', path: jwt.path },
        `OXIJOBS_JWT_SECRET is unset: generated a token secret in ${jwt.path}`,
      );
    }
    composed = composeServer({
      config,
      tenants,
      logger,
      pool: db.pool,
      jwtSecret: jwt.secret,
      env,
      database: mode,
    });
    // The boot sweep lands before the HTTP port opens: no trigger can see a
    // run a crash left Running as "already running".
    await composed.start();
    metrics = await startMetricsListener(composed.metrics, metricsConfig, logger);
    // Said before the port opens: whoever sees /healthz answer can already read it.
    logAlertsStatus(await composed.alertsStatus(), logger);
    http = await listen(composed.app.fetch, config.http);
  } catch (error) {
    await metrics?.close().catch(() => undefined);
    await composed?.stop().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw error;
  }
  logger.info(
    {
      target: SERVER_TARGET,
      event: 'server.listening',
      host: config.http.host,
      port: http.port,
      public_base_url: config.publicBaseUrl,
      database: db.source,
      storage_backend: config.storage.backend,
      ...(config.storage.backend === 'local' ? { storage_root: config.storage.root } : {}),
      storage_encrypted: config.storageEncryption !== null,
      node: composed.engine.nodeId,
    },
    `listening on http://${config.http.host}:${http.port} (admin API at ${config.publicBaseUrl}/api/admin/jobs; token: pnpm oxijobs token --user admin)`,
  );

  const received = await signal;
  logger.info(
    { target: SERVER_TARGET, event: 'server.stopping', signal: received },
    `${received}: shutting down`,
  );
  await http.close();
  await metrics?.close();
  await composed.stop();
  await db.closePool();
  // The server's part is done (runs landed, pool closed): say so, then stop
  // the embedded Postgres it started ("embedded Postgres stopped" comes last).
  logger.info({ target: SERVER_TARGET, event: 'server.stopped' }, 'shut down cleanly');
  await db.close();
}
