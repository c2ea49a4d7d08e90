import { fileURLToPath } from 'node:url';
import { packageTestConfig } from '../../vitest.shared.ts';

// The process tests spawn `node dist/cli.js`: the setup builds it from the current sources first (test/build-server.ts).
// Most files wait on child processes and Postgres rather than compute: more workers than cores.
export default packageTestConfig(import.meta.url, {
  withDatabase: true,
  testTimeout: 120_000,
  workers: 4,
  globalSetup: [fileURLToPath(new URL('./test/build-server.ts', import.meta.url))],
});
