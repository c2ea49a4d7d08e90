import { JobRegistry } from '@oxicloud/scheduler';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asJobHandler, RecoverableEngine } from '../src/index.js';
import { CapturingLogger, decodeCursor, Gate, runRow, waitFor, walker } from './support.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('asJobHandler', () => {
  it('a tick runs or resumes the job; a tick during an active run short-circuits; abort pauses it', async () => {
    const log = new CapturingLogger();
    const engine = new RecoverableEngine({ pool: db.pool, logger: log });
    const gate = new Gate();
    let reached = 0;
    engine.register(
      walker('ticked_job', {
        total: 100,
        batch: 10,
        gate,
        onBatch: (p) => {
          reached = p;
          if (p === 20) gate.close();
        },
      }),
    );
    const handler = asJobHandler(engine, 'ticked_job');
    expect(handler.name).toBe('ticked_job');

    const controller = new AbortController();
    const first = handler.run({ force: false, deep: true }, controller.signal);
    gate.open();
    await waitFor(() => reached === 20);
    const skipped = await handler.run({ force: false }, new AbortController().signal);
    expect(skipped).toMatchObject({ kind: 'ok', count: 0, extra: { skipped: 'already_running' } });

    controller.abort(); // scheduler shutdown / timeout: the run pauses with its cursor
    gate.open();
    const outcome = await first;
    expect(outcome).toMatchObject({ kind: 'ok', count: 20, extra: { paused: true, cursor_hex: '00000014' } });
    const runId = (outcome as { extra: Record<string, unknown> }).extra['run_id'] as string;
    const row = await runRow(db.pool, runId);
    expect(row?.status).toBe('Paused');
    expect(decodeCursor(row?.cursor ?? null)).toBe(20);
    expect(row?.params).toEqual({ force: false, deep: true });

    const resumed = await handler.run({ force: false }, new AbortController().signal);
    expect(resumed).toMatchObject({ kind: 'ok', count: 100, extra: { completed: true, run_id: runId } });
    // The scheduler logs job.run for its dispatches; the adapter keeps the engine quiet.
    expect(log.events('job.run')).toHaveLength(0);
  });

  it('through the real Part 1 JobRegistry: one job.run line, short-circuit while an admin-started run is active', async () => {
    const log = new CapturingLogger();
    const engine = new RecoverableEngine({ pool: db.pool, logger: log });
    const gate = new Gate();
    engine.register(walker('registry_job', { total: 30, batch: 10, gate }));
    const registry = new JobRegistry({ logger: log });
    registry.register(asJobHandler(engine, 'registry_job'), null, null);

    const adminRun = await engine.trigger('registry_job');
    const skipped = await registry.trigger('registry_job');
    expect(skipped).toMatchObject({
      kind: 'ok',
      count: 0,
      extra: { skipped: 'already_running', run_id: adminRun.run_id },
    });
    gate.open();
    await engine.whenIdle();

    const outcome = await registry.trigger('registry_job', { force: true });
    expect(outcome).toMatchObject({ kind: 'ok', count: 30, extra: { completed: true } });
    const lines = log.events('job.run', 'registry_job');
    // skipped dispatch (scheduler line), the admin run ending (engine line), the completed dispatch (scheduler line)
    expect(lines.map((l) => [l.fields['source'], l.fields['completed'] ?? l.fields['skipped']])).toEqual([
      ['trigger', 'already_running'],
      ['trigger', true],
      ['trigger', true],
    ]);
    expect(lines[2]?.fields).toMatchObject({ outcome: 'ok', count: 30, completed: true });
  });

  it('refuses a name the engine does not know', () => {
    const engine = new RecoverableEngine({ pool: db.pool });
    expect(() => asJobHandler(engine, 'ghost_job')).toThrow(expect.objectContaining({ code: 'UNKNOWN_JOB' }));
  });
});
