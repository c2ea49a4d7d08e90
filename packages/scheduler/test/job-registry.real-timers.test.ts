import { describe, expect, it } from 'vitest';
import { JobRegistry, ok } from '../src/index.js';
import { CapturingLogger } from './capturing-logger.js';

describe('overrun exclusivity on real timers (Verification 7)', () => {
  it('100 ms interval, 300 ms handler: one run in flight, two tick_skipped with increasing running_for_ms', async () => {
    const logger = new CapturingLogger();
    const registry = new JobRegistry({ logger });
    let inFlight = 0;
    let maxInFlight = 0;
    let runs = 0;
    registry.register(
      {
        name: 'overrun',
        run: async () => {
          runs += 1;
          inFlight += 1;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await new Promise((resolve) => setTimeout(resolve, 300));
          inFlight -= 1;
          return ok(1);
        },
      },
      100,
      null,
    );
    registry.start();
    // Ticks at ~100 (run starts), ~200 and ~300 (skipped); stop before the ~400 tick.
    await new Promise((resolve) => setTimeout(resolve, 350));
    await registry.stop();
    const skipped = logger.events('job.tick_skipped').map((line) => line.fields['running_for_ms'] as number);
    expect(runs).toBe(1);
    expect(maxInFlight).toBe(1);
    expect(skipped).toHaveLength(2);
    expect(skipped[1]).toBeGreaterThan(skipped[0] as number);
    expect(logger.events('job.run')).toHaveLength(1);
  });
});
