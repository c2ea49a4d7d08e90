import { JobRegistry, ok, silentLogger } from '@oxicloud/scheduler';
import { describe, expect, it } from 'vitest';
import { JobCatalog, type RecoverableJobList } from '../src/index.js';

const noop = async () => ok(0);

describe('JobCatalog', () => {
  const registry = new JobRegistry({ logger: silentLogger });
  registry.register({ name: 'dedup_gc', run: noop }, 3_600_000, null);
  registry.register({ name: 'consistency_batch', run: noop, capabilities: { deep: true } }, null, null);
  registry.register({ name: 'files_consistency', run: noop }, 86_400_000, null);
  const declarations = new Map([
    [
      'storage_consistency',
      { check: { order: 40, countMeaning: 'blobs' }, deep: true, alerts: ['consistency_findings'] },
    ],
    [
      'files_consistency',
      { check: { order: 30, countMeaning: 'files' }, deep: false, alerts: ['consistency_findings'] },
    ],
    ['a_consistency', { check: { order: 30, countMeaning: 'a' }, deep: false, alerts: [] }],
    ['storage_migration', { check: null, deep: false, alerts: [] }],
  ]);
  const engine: RecoverableJobList = {
    names: () => [...declarations.keys()],
    capabilities: (name) => {
      const c = declarations.get(name);
      if (!c) throw new Error(`unknown ${name}`);
      return c;
    },
  };
  const catalog = new JobCatalog(registry, engine);

  it('lists both kinds once, with kind, cadence and declared capabilities; a ticked recoverable job is recoverable', () => {
    expect(catalog.entries().map((e) => [e.name, e.kind, e.intervalMs, e.capabilities.deep])).toEqual([
      ['dedup_gc', 'periodic', 3_600_000, false],
      ['consistency_batch', 'periodic', null, true],
      ['files_consistency', 'recoverable', 86_400_000, false],
      ['storage_consistency', 'recoverable', null, true],
      ['a_consistency', 'recoverable', null, false],
      ['storage_migration', 'recoverable', null, false],
    ]);
    expect(catalog.get('dedup_gc')?.capabilities).toEqual({ check: null, deep: false, alerts: [] });
    expect(catalog.get('nope')).toBeUndefined();
  });

  it('checks(): the jobs that declare a check, by declared order then name; nothing read from names', () => {
    expect(catalog.checks().map((e) => e.name)).toEqual([
      'a_consistency',
      'files_consistency',
      'storage_consistency',
    ]);
  });
});
