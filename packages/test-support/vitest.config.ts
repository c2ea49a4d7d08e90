import { packageTestConfig } from '../../vitest.shared.ts';

export default packageTestConfig(import.meta.url, { withDatabase: true, testTimeout: 30_000 });
