import { defineConfig } from 'tsup';

// The package's entry, and `job-names` for clients that only name a job (the command line's help):
// adding a job or a check touches no path here.
export default defineConfig({
  entry: ['src/index.ts', 'src/job-names.ts'],
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
});
