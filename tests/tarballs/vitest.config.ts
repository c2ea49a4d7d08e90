import { packageTestConfig } from '../../vitest.shared.ts';

// Each test blocks on one or two processes (npm, tsc, publint, attw), each bounded at 300 s by the
// test's own `spawnSync` timeout: a loaded 2-core machine runs tsc on the consumer past a minute.
export default packageTestConfig(import.meta.url, { withDatabase: true, testTimeout: 300_000 });
