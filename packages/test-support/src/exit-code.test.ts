import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

describe('the global setup', () => {
  it('keeps a failing run failing: embedded Postgres must not turn the exit code into 0', () => {
    const root = fileURLToPath(new URL('../test/fixtures/failing-suite/', import.meta.url));
    const vitest = fileURLToPath(new URL('../../../node_modules/.bin/vitest', import.meta.url));
    const run = spawnSync(vitest, ['run', '--root', root], {
      encoding: 'utf8',
      env: {
        ...process.env,
        TEST_DATABASE_URL: '',
        // Its own embedded server, not the one `pnpm test` shares with the pass.
        OXICLOUD_TEST_POSTGRES_SHARED: '',
        OXICLOUD_TEST_POSTGRES: 'embedded',
        VITE_CONFIG_NATIVE_IGNORE_WARNING: 'true',
      },
      timeout: 120_000,
    });
    expect(run.stdout + run.stderr).toMatch(/1 failed/);
    expect(run.status).toBe(1);
  }, 150_000);
});
