import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobRegistry, ok, silentLogger } from '@oxicloud/scheduler';
import { LocalFsBlobStorage } from '@oxicloud/storage';
import { afterAll, describe, expect, it } from 'vitest';
import { storeReady } from './compose.js';

describe('storeReady: a node that cannot reach the store does not take storage jobs', () => {
  const root = mkdtempSync(join(tmpdir(), 'oxijobs-store-ready-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('is ready on a reachable store and says why not on a missing root; the registry then runs nothing', async () => {
    expect(await storeReady(new LocalFsBlobStorage({ root }))()).toBeNull();
    const gone = new LocalFsBlobStorage({ root: join(root, 'unmounted') });
    const reason = await storeReady(gone)();
    expect(reason).toMatch(/^this node cannot reach the local store: .*unmounted/);
    let runs = 0;
    const registry = new JobRegistry({ logger: silentLogger });
    registry.register({ name: 'dedup_gc', run: async () => ok(++runs) }, null, null, {
      ready: storeReady(gone),
    });
    expect(await registry.trigger('dedup_gc')).toEqual({
      kind: 'err',
      message: `dedup_gc was not run: ${reason}`,
    });
    expect(runs).toBe(0);
  });
});
