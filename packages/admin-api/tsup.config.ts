import { defineConfig } from 'tsup';
import { pageBundleEsbuildPlugin } from './build/page-bundle.ts';

export default defineConfig({
  entry: ['src/index.ts', 'src/health-service.ts'],
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  // The page's script (src/page/script) is bundled for the browser into a string the app serves.
  esbuildPlugins: [pageBundleEsbuildPlugin()],
});
