import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';

function capture(format: 'pretty' | 'json') {
  const chunks: string[] = [];
  const logger = createLogger({
    level: 'info',
    destination: 'stdout',
    format,
    sink: (line: string) => {
      chunks.push(line);
    },
  });
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l !== ''),
  };
}

const BATCH = {
  target: 'oxicloud::tenants',
  event: 'job.run',
  job: 'storage_migration',
  extra: { migrations: ['0001_init', '0002_users', '0003_files'], cursor_hex: '0000001e' },
};

describe('the process logger', () => {
  it('pretty mode: one line per event, the message only, no JSON object and no stack', () => {
    const { logger, lines } = capture('pretty');
    logger.info(BATCH, 'storage_migration: ok, 30 item(s)');
    logger.error(
      { event: 'run.failed', err: new Error('disk on fire') },
      'storage_migration failed: disk on fire',
    );
    logger.warn({ event: 'run.boot_sweep', count: 2 });
    const out = lines();
    expect(out).toHaveLength(3);
    expect(out[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: storage_migration: ok, 30 item\(s\)$/);
    expect(out[1]).toMatch(/ERROR: storage_migration failed: disk on fire$/);
    // A line without a message shows its event.
    expect(out[2]).toMatch(/WARN: run\.boot_sweep$/);
    const text = out.join('\n');
    expect(text).not.toMatch(/[{}]/);
    expect(text).not.toContain('0001_init');
    expect(text).not.toMatch(/at .*\.(ts|js):\d+/);
    expect(text.match(/disk on fire/g)).toHaveLength(1);
  });

  it('JSON mode: every field, one JSON object per line', () => {
    const { logger, lines } = capture('json');
    logger.info(BATCH, 'storage_migration: ok, 30 item(s)');
    const out = lines();
    expect(out).toHaveLength(1);
    const line = JSON.parse(out[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({
      ...BATCH,
      level: 'info',
      msg: 'storage_migration: ok, 30 item(s)',
      service: 'oxicloud-jobs',
    });
    expect(typeof line['time']).toBe('string');
  });
});
