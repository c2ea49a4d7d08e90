import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['@oxicloud/source'] },
  ssr: { resolve: { conditions: ['@oxicloud/source'] } },
  test: {
    include: ['src/**/*.test.ts'],
    server: { deps: { inline: [/@oxicloud\//] } },
    globalSetup: ['./src/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
