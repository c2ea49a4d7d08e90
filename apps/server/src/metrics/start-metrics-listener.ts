import type { Logger } from '@oxicloud/scheduler';
import type { HttpListener } from '../http-listener.js';
import { SERVER_TARGET } from '../logger.js';
import type { MetricsConfig } from './metrics-config.js';
import { listenMetrics, type MetricsSource } from './metrics-listener.js';

/**
 * Opens the metrics listener, or nothing when `config` is `null`
 * (`OXICLOUD_METRICS_ADDR=`). A busy port fails the start when the address
 * was set, and is logged (metrics off) when it is the default: a second
 * server on the same machine must not be refused for its metrics.
 */
export async function startMetricsListener(
  source: MetricsSource,
  config: MetricsConfig | null,
  logger: Logger,
): Promise<HttpListener | null> {
  if (config === null) {
    logger.info(
      { target: SERVER_TARGET, event: 'metrics.off' },
      'OXICLOUD_METRICS_ADDR is empty: no /metrics',
    );
    return null;
  }
  try {
    const listener = await listenMetrics(source, config);
    logger.info(
      {
        target: SERVER_TARGET,
        event: 'metrics.listening',
        host: config.host,
        port: listener.port,
        token: config.token !== null,
      },
      `metrics on http://${config.host}:${listener.port}/metrics${config.token === null ? '' : ' (bearer token)'}`,
    );
    return listener;
  } catch (error) {
    if (!config.isDefault) throw error;
    logger.warn(
      { target: SERVER_TARGET, event: 'metrics.unavailable', error: (error as Error).message },
      `${(error as Error).message}; running without /metrics`,
    );
    return null;
  }
}
