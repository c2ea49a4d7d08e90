import { defineConfig } from 'tsup';

// One entry, one export map (`@oxicloud/tenants`): adding a job or a check touches no path here.
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
});
