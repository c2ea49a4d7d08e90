import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/global-setup.ts', 'src/shared-postgres-main.ts'],
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
});
