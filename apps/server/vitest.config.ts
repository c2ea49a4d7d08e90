import { defineConfig, mergeConfig } from 'vitest/config';
import { packageTestConfig } from '../../vitest.shared.ts';

// The process tests spawn `node dist/cli.js`: build it first when it is stale (test/build-server.ts).
export default defineConfig(
  mergeConfig(
    packageTestConfig({ withDatabase: true, testTimeout: 120_000 }),
    defineConfig({ test: { globalSetup: ['./test/build-server.ts'] } }),
  ),
);
