import { packageTestConfig } from '../../vitest.shared.ts';

const base = packageTestConfig({ withDatabase: true, testTimeout: 120_000 });

// The process tests spawn `node dist/cli.js`: build it first when it is stale.
export default {
  ...base,
  test: { ...base.test, globalSetup: ['./test/build-server.ts', ...(base.test?.globalSetup as string[])] },
};
