import { CapturingLogger } from '@oxicloud/test-support';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { JobHandler, JobOutcome, JobOutcomeEvent, JobRunArgs } from '../src/index.js';
import { err, JobRegistry, ok, SchedulerError } from '../src/index.js';

const T0 = new Date('2026-01-01T00:00:00.000Z');

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function job(name: string, run: (args: JobRunArgs, signal: AbortSignal) => Promise<JobOutcome>): JobHandler {
  return { name, run };
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof SchedulerError ? error.code : 'not a SchedulerError';
  }
  return undefined;
}

let logger: CapturingLogger;
let registry: JobRegistry;

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
  logger = new CapturingLogger();
  registry = new JobRegistry({ logger, stopGraceMs: 1_000 });
});

afterEach(async () => {
  const stopping = registry.stop();
  await vi.runAllTimersAsync();
  await stopping;
  vi.useRealTimers();
});

describe('register', () => {
  it('rejects duplicate names, bad intervals, bad timeouts and non-snake_case names with codes', () => {
    const noop = job('noop', async () => ok(0));
    registry.register(noop, 1_000, null);
    expect(
      codeOf(() =>
        registry.register(
          job('noop', async () => ok(0)),
          1_000,
          null,
        ),
      ),
    ).toBe('DUPLICATE_JOB');
    for (const bad of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(
        codeOf(() =>
          registry.register(
            job('other', async () => ok(0)),
            bad,
            null,
          ),
        ),
      ).toBe('INVALID_INTERVAL');
      expect(
        codeOf(() =>
          registry.register(
            job('other', async () => ok(0)),
            null,
            bad,
          ),
        ),
      ).toBe('INVALID_TIMEOUT');
    }
    expect(
      codeOf(() =>
        registry.register(
          job('Bad-Name', async () => ok(0)),
          null,
          null,
        ),
      ),
    ).toBe('INVALID_JOB_NAME');
    expect(registry.list().map((summary) => summary.name)).toEqual(['noop']);
    expect(() =>
      registry.register(
        job('noop', async () => ok(0)),
        1,
        null,
      ),
    ).toThrow(/already registered/);
  });

  it('lists jobs in registration order with their settings', () => {
    registry.register(
      job('b_job', async () => ok(0)),
      5_000,
      100,
    );
    registry.register({ ...job('a_job', async () => ok(0)), capabilities: { deep: true } }, null, null);
    expect(registry.list()).toEqual([
      {
        name: 'b_job',
        interval_ms: 5_000,
        timeout_ms: 100,
        next_run_at: null,
        last_outcome: null,
        running: false,
        running_since: null,
        capabilities: { check: null, deep: false, alerts: [] },
      },
      {
        name: 'a_job',
        interval_ms: null,
        timeout_ms: null,
        next_run_at: null,
        last_outcome: null,
        running: false,
        running_since: null,
        capabilities: { check: null, deep: true, alerts: [] },
      },
    ]);
    expect(registry.has('a_job')).toBe(true);
    expect(registry.has('c_job')).toBe(false);
    expect(registry.get('c_job')).toBeUndefined();
    expect(registry.get('b_job')?.interval_ms).toBe(5_000);
  });
});

describe('trigger', () => {
  it('returns undefined for an unknown job', async () => {
    expect(await registry.trigger('missing', { force: false })).toBeUndefined();
    expect(logger.events('job.run')).toHaveLength(0);
  });

  it('runs the handler with the args, records the outcome and logs one job.run line with extra flattened', async () => {
    const seen: JobRunArgs[] = [];
    registry.register(
      job('trash_cleanup', async (args) => {
        seen.push(args);
        await delay(25);
        return ok(7, { bytes_freed: 1024, count: 'shadowed' });
      }),
      null,
      null,
    );
    const pending = registry.trigger('trash_cleanup', { force: true });
    expect(registry.get('trash_cleanup')).toMatchObject({ running: true, running_since: T0.toISOString() });
    await vi.advanceTimersByTimeAsync(25);
    expect(await pending).toEqual(ok(7, { bytes_freed: 1024, count: 'shadowed' }));
    expect(seen).toEqual([{ force: true }]);

    const [line, ...more] = logger.events('job.run');
    expect(more).toHaveLength(0);
    expect(line?.level).toBe('info');
    expect(line?.message).toMatch(/^job trash_cleanup: ok, count 7 \(\d+ ms\)$/);
    expect(line?.fields).toEqual({
      target: 'oxicloud::scheduler',
      event: 'job.run',
      job: 'trash_cleanup',
      outcome: 'ok',
      count: 7,
      elapsed_ms: 25,
      source: 'trigger',
      bytes_freed: 1024,
      extra_count: 'shadowed',
    });
    expect(line?.fields).not.toHaveProperty('cause');
    expect(registry.get('trash_cleanup')).toMatchObject({
      running: false,
      running_since: null,
      last_outcome: {
        at: new Date(T0.getTime() + 25).toISOString(),
        outcome: ok(7, { bytes_freed: 1024, count: 'shadowed' }),
        elapsed_ms: 25,
        source: 'trigger',
      },
    });
  });

  it('returns the already_running skip at once while the same job runs, without a second run', async () => {
    let calls = 0;
    registry.register(
      job('slow', async () => {
        calls += 1;
        await delay(1_000);
        return ok(1);
      }),
      null,
      null,
    );
    const first = registry.trigger('slow');
    const second = await registry.trigger('slow');
    expect(second).toEqual(ok(0, { skipped: 'already_running' }));
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await first).toEqual(ok(1));
    expect(logger.events('job.run')).toHaveLength(1);
    // The permit is free again.
    const third = registry.trigger('slow');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await third).toEqual(ok(1));
    expect(calls).toBe(2);
  });

  it('records cause handler for a handler err', async () => {
    registry.register(
      job('grant_cleanup', async () => err('database unreachable')),
      null,
      null,
    );
    expect(await registry.trigger('grant_cleanup')).toEqual(err('database unreachable'));
    expect(logger.events('job.run')[0]?.fields).toMatchObject({
      outcome: 'err',
      cause: 'handler',
      error: 'database unreachable',
    });
    expect(registry.get('grant_cleanup')?.last_outcome).toMatchObject({
      cause: 'handler',
      outcome: err('database unreachable'),
    });
  });
});

describe('containment (Verification 5)', () => {
  it('turns throws, rejections and non-outcomes into err with cause panicked; the loop and permit survive', async () => {
    let ticks = 0;
    registry.register(
      {
        name: 'panics',
        run: () => {
          ticks += 1;
          throw new Error(`boom ${ticks}`);
        },
      },
      100,
      null,
    );
    registry.register(
      job('rejects', async () => {
        throw new TypeError('bad state');
      }),
      null,
      null,
    );
    registry.register(
      job('returns_junk', async () => undefined as unknown as JobOutcome),
      null,
      null,
    );
    registry.register(
      job('healthy', async () => ok(1)),
      null,
      null,
    );
    registry.start();

    await vi.advanceTimersByTimeAsync(100);
    expect(ticks).toBe(1);
    expect(registry.get('panics')?.last_outcome).toMatchObject({
      outcome: err('boom 1'),
      cause: 'panicked',
      source: 'tick',
    });
    expect(registry.get('panics')?.running).toBe(false);

    // The scheduler is alive: another job can be triggered …
    expect(await registry.trigger('healthy')).toEqual(ok(1));
    expect(await registry.trigger('rejects')).toEqual(err('bad state'));
    const junk = await registry.trigger('returns_junk');
    expect(junk?.kind).toBe('err');
    expect(registry.get('returns_junk')?.last_outcome?.cause).toBe('panicked');
    // … and the next tick of the panicking job fires (its permit was released).
    await vi.advanceTimersByTimeAsync(100);
    expect(ticks).toBe(2);
    expect(logger.events('job.tick_skipped')).toHaveLength(0);

    const panicLines = logger.events('job.run').filter((line) => line.fields['job'] === 'panics');
    expect(
      panicLines.map((line) => [line.fields['outcome'], line.fields['cause'], line.fields['error']]),
    ).toEqual([
      ['err', 'panicked', 'boom 1'],
      ['err', 'panicked', 'boom 2'],
    ]);
    expect(logger.events('job.run').find((line) => line.fields['job'] === 'rejects')?.fields['cause']).toBe(
      'panicked',
    );
  });
});

describe('timeout (Verification 6)', () => {
  it('fires the signal, ends as err with cause timeout and releases the permit even if the handler ignores it', async () => {
    let signalSeen: AbortSignal | undefined;
    let calls = 0;
    registry.register(
      job('hangs', async (_args, signal) => {
        calls += 1;
        signalSeen = signal;
        await delay(10_000); // ignores the signal
        return ok(1);
      }),
      null,
      50,
    );
    const pending = registry.trigger('hangs');
    await vi.advanceTimersByTimeAsync(50);
    expect(await pending).toEqual(err('job hangs timed out after 50 ms'));
    expect(signalSeen?.aborted).toBe(true);
    expect(registry.get('hangs')).toMatchObject({
      running: false,
      last_outcome: { cause: 'timeout', elapsed_ms: 50, outcome: err('job hangs timed out after 50 ms') },
    });
    expect(logger.events('job.run')[0]?.fields).toMatchObject({
      outcome: 'err',
      cause: 'timeout',
      elapsed_ms: 50,
    });

    // Permit released at the timeout: the next trigger runs instead of being skipped.
    const again = registry.trigger('hangs');
    expect(calls).toBe(2);
    await vi.advanceTimersByTimeAsync(50);
    expect((await again)?.kind).toBe('err');
  });

  it('lets a handler that honours the signal stop early, still with cause timeout', async () => {
    registry.register(
      job('cooperative', async (_args, signal) => {
        await delay(10_000, signal);
        return signal.aborted ? err('aborted') : ok(1);
      }),
      100,
      30,
    );
    registry.start();
    await vi.advanceTimersByTimeAsync(130);
    expect(registry.get('cooperative')?.last_outcome).toMatchObject({
      cause: 'timeout',
      source: 'tick',
      elapsed_ms: 30,
    });
    expect(registry.get('cooperative')?.running).toBe(false);
  });
});

describe('overrun exclusivity (Verification 7)', () => {
  it('keeps one run in flight and logs one job.tick_skipped per missed tick with increasing running_for_ms', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const starts: number[] = [];
    registry.register(
      job('overrun', async (_args, signal) => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        starts.push(Date.now() - T0.getTime());
        await delay(300, signal);
        inFlight -= 1;
        return ok(1);
      }),
      100,
      null,
    );
    registry.start();
    expect(registry.get('overrun')?.next_run_at).toBe(new Date(T0.getTime() + 100).toISOString());

    await vi.advanceTimersByTimeAsync(100);
    expect(starts).toEqual([100]);
    expect(registry.get('overrun')).toMatchObject({
      running: true,
      running_since: new Date(T0.getTime() + 100).toISOString(),
      next_run_at: new Date(T0.getTime() + 200).toISOString(),
    });

    await vi.advanceTimersByTimeAsync(250); // t = 350: ticks at 200 and 300 were missed
    const skipped = logger.events('job.tick_skipped');
    expect(skipped).toHaveLength(2);
    expect(skipped.map((line) => line.level)).toEqual(['warn', 'warn']);
    expect(skipped.map((line) => line.fields)).toEqual([
      {
        target: 'oxicloud::scheduler',
        event: 'job.tick_skipped',
        job: 'overrun',
        interval_ms: 100,
        running_for_ms: 100,
      },
      {
        target: 'oxicloud::scheduler',
        event: 'job.tick_skipped',
        job: 'overrun',
        interval_ms: 100,
        running_for_ms: 200,
      },
    ]);
    expect(skipped[0]?.message).toBe('overrun still running past its interval — tick skipped');
    const runningFor = skipped.map((line) => line.fields['running_for_ms'] as number);
    expect(runningFor[1]).toBeGreaterThan(runningFor[0] as number);
    // next_run_at advanced by one interval per skipped tick, no backlog.
    expect(registry.get('overrun')?.next_run_at).toBe(new Date(T0.getTime() + 400).toISOString());
    expect(starts).toEqual([100]);

    await vi.advanceTimersByTimeAsync(50); // t = 400: first run ends, the 400 tick starts the next
    expect(logger.events('job.run')).toHaveLength(1);
    expect(starts).toEqual([100, 400]);
    expect(maxInFlight).toBe(1);
    expect(logger.events('job.tick_skipped')).toHaveLength(2);
  });

  it('dispatches two jobs due at the same instant one after the other', async () => {
    const events: string[] = [];
    for (const name of ['first', 'second']) {
      registry.register(
        job(name, async () => {
          events.push(`${name}:start@${Date.now() - T0.getTime()}`);
          await delay(30);
          events.push(`${name}:end@${Date.now() - T0.getTime()}`);
          return ok(0);
        }),
        1_000,
        null,
      );
    }
    registry.start();
    await vi.advanceTimersByTimeAsync(1_100);
    expect(events).toEqual(['first:start@1000', 'first:end@1030', 'second:start@1030', 'second:end@1060']);
  });
});

describe('overrun of one job does not block another', () => {
  it('keeps ticking other jobs on time while one job overruns', async () => {
    const quickRuns: number[] = [];
    registry.register(
      job('long_runner', async (_args, signal) => {
        await delay(1_000, signal);
        return ok(0);
      }),
      100,
      null,
    );
    registry.register(
      job('quick', async () => {
        quickRuns.push(Date.now() - T0.getTime());
        return ok(0);
      }),
      150,
      null,
    );
    registry.start();
    await vi.advanceTimersByTimeAsync(460);
    expect(quickRuns).toEqual([150, 300, 450]);
    expect(logger.events('job.tick_skipped').map((line) => line.fields['running_for_ms'])).toEqual([
      100, 200, 300,
    ]);
  });
});

describe('supervisor loop', () => {
  it('logs the start line, ticks on the interval and never ticks on-demand jobs', async () => {
    let periodic = 0;
    let onDemand = 0;
    registry.register(
      job('periodic', async () => {
        periodic += 1;
        return ok(periodic);
      }),
      100,
      null,
    );
    registry.register(
      job('on_demand', async () => {
        onDemand += 1;
        return ok(0);
      }),
      null,
      null,
    );
    registry.start({ alsoListed: { recoverable: 3 } });
    // Periodic and recoverable apart, and the total a listing of every job shows.
    expect(logger.lines[0]?.message).toBe(
      'scheduler started, 2 periodic job(s) registered (and 3 recoverable: 5 job(s) in all)',
    );
    expect(logger.lines[0]?.fields).toMatchObject({
      target: 'oxicloud::scheduler',
      jobs: 2,
      recoverable: 3,
      total: 5,
    });
    expect(() => registry.start()).toThrow(SchedulerError);
    expect(registry.get('on_demand')?.next_run_at).toBeNull();

    await vi.advanceTimersByTimeAsync(350);
    expect(periodic).toBe(3);
    expect(onDemand).toBe(0);
    expect(registry.get('periodic')?.next_run_at).toBe(new Date(T0.getTime() + 400).toISOString());
    expect(logger.events('job.run').map((line) => line.fields['source'])).toEqual(['tick', 'tick', 'tick']);
  });

  it('schedules a job registered after start one interval from its registration', async () => {
    registry.start();
    await vi.advanceTimersByTimeAsync(1_000);
    let runs = 0;
    registry.register(
      job('late', async () => {
        runs += 1;
        return ok(0);
      }),
      200,
      null,
    );
    expect(registry.get('late')?.next_run_at).toBe(new Date(T0.getTime() + 1_200).toISOString());
    await vi.advanceTimersByTimeAsync(199);
    expect(runs).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toBe(1);
  });

  it('stop() aborts running handlers, waits for them, and ends the ticks', async () => {
    let aborted = false;
    let runs = 0;
    registry.register(
      job('long', async (_args, signal) => {
        runs += 1;
        await delay(60_000, signal);
        aborted = signal.aborted;
        return aborted ? err('aborted') : ok(1);
      }),
      100,
      null,
    );
    registry.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(registry.get('long')?.running).toBe(true);
    await registry.stop();
    expect(aborted).toBe(true);
    expect(registry.get('long')).toMatchObject({ running: false, next_run_at: null });
    expect(registry.get('long')?.last_outcome?.cause).toBe('handler');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(1);
    expect(registry.started).toBe(false);
  });

  it('stop() gives up on a handler that ignores the signal after stopGraceMs', async () => {
    registry.register(
      job('stubborn', async () => {
        await delay(60_000);
        return ok(1);
      }),
      null,
      null,
    );
    void registry.trigger('stubborn');
    let stopped = false;
    const stopping = registry.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(stopped).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await stopping;
    expect(stopped).toBe(true);
    expect(logger.events('scheduler.stop_timeout')).toHaveLength(1);
  });
});

describe('onOutcome', () => {
  it('receives every run with cause and source; a throwing or rejecting callback is contained', async () => {
    const received: JobOutcomeEvent[] = [];
    let mode: 'ok' | 'throw' | 'reject' = 'ok';
    registry = new JobRegistry({
      logger,
      now: () => new Date(),
      onOutcome: (event) => {
        received.push(event);
        if (mode === 'throw') throw new Error('callback exploded');
        if (mode === 'reject') return Promise.reject(new Error('callback rejected'));
        return undefined;
      },
    });
    registry.register(
      job('fails', async () => err('nope')),
      null,
      null,
    );
    registry.register(
      job('works', async () => ok(2, { a: 1 })),
      100,
      null,
    );
    registry.start();

    expect(await registry.trigger('fails')).toEqual(err('nope'));
    await vi.advanceTimersByTimeAsync(100);
    mode = 'throw';
    expect(await registry.trigger('fails')).toEqual(err('nope'));
    mode = 'reject';
    expect(await registry.trigger('works')).toEqual(ok(2, { a: 1 }));
    await vi.advanceTimersByTimeAsync(0);

    expect(received.map((event) => [event.job, event.outcome.kind, event.cause, event.source])).toEqual([
      ['fails', 'err', 'handler', 'trigger'],
      ['works', 'ok', undefined, 'tick'],
      ['fails', 'err', 'handler', 'trigger'],
      ['works', 'ok', undefined, 'trigger'],
    ]);
    expect(received[1]?.at.toISOString()).toBe(new Date(T0.getTime() + 100).toISOString());
    expect(received[1]?.elapsedMs).toBe(0);
    expect(logger.events('job.on_outcome_failed').map((line) => line.fields['error'])).toEqual([
      'callback exploded',
      'callback rejected',
    ]);
    // The loop survived the callback failures.
    await vi.advanceTimersByTimeAsync(100);
    expect(received).toHaveLength(5);
  });

  it('is not called for a skipped trigger', async () => {
    const received: JobOutcomeEvent[] = [];
    registry = new JobRegistry({ logger, onOutcome: (event) => void received.push(event) });
    registry.register(
      job('slow', async () => {
        await delay(100);
        return ok(1);
      }),
      null,
      null,
    );
    const first = registry.trigger('slow');
    await registry.trigger('slow');
    await vi.advanceTimersByTimeAsync(100);
    await first;
    expect(received).toHaveLength(1);
  });
});
