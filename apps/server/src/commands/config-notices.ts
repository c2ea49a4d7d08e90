import type { Logger } from '@oxicloud/scheduler';
import type { ServerConfig } from '../config/server-config.js';
import { SERVER_TARGET } from '../logger.js';

/**
 * Says each of the configuration's notices (OxiCloud's settings that are set
 * but never read for the engine: its session secret, its daemons' switches)
 * at its level, event `config.notice`; `serve` and `token` call it first.
 */
export function logConfigNotices(config: ServerConfig, logger: Pick<Logger, 'info' | 'warn'>): void {
  for (const notice of config.notices) {
    logger[notice.level](
      { target: SERVER_TARGET, event: 'config.notice', variable: notice.variable },
      notice.message,
    );
  }
}
