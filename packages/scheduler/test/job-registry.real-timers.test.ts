import { CapturingLogger } from '@oxicloud/test-support';
import { describe, expect, it } from 'vitest';
import { JobRegistry, ok } from '../src/index.js';

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('overrun exclusivity on real timers (Verification 7)', () => {
  // The exact 100/300 ms timeline runs on fake timers in job-registry.test.ts; here the handler is held
  // open until two ticks were skipped, so the assertion does not depend on event-loop lag under load.
  it('100 ms interval, overrunning handler: one run in flight, tick_skipped with increasing running_for_ms', async () => {
    const logger = new CapturingLogger();
    const registry = new JobRegistry({ logger });
    let inFlight = 0;
    let maxInFlight = 0;
    let runs = 0;
    let release: () => void = () => undefined;
    registry.register(
      {
        name: 'overrun',
        run: async () => {
          runs += 1;
          inFlight += 1;
          maxInFlight = Math.max(maxInFlight, inFlight);
          if (runs === 1) {
            await new Promise<void>((resolve) => {
              release = resolve;
            });
          }
          inFlight -= 1;
          return ok(1);
        },
      },
      100,
      null,
    );
    registry.start();
    await until(() => logger.events('job.tick_skipped').length >= 2, 5_000);
    const skipped = logger.events('job.tick_skipped').map((line) => line.fields['running_for_ms'] as number);
    expect(runs).toBe(1);
    expect(registry.get('overrun')?.running).toBe(true);
    release();
    await until(() => runs >= 2, 5_000);
    await registry.stop();
    expect(maxInFlight).toBe(1);
    expect(skipped[0]).toBeGreaterThanOrEqual(50);
    expect(skipped[1]).toBeGreaterThan(skipped[0] as number);
  });
});
