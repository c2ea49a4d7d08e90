import { defineConfig } from 'tsup';

export default defineConfig({
  entry: [
    'src/index.ts',
    'src/trash-cleanup/index.ts',
    'src/storage-reconcile/index.ts',
    'src/dedup-gc/index.ts',
    'src/grant-cleanup/index.ts',
    'src/drives-consistency/index.ts',
    'src/folders-consistency/index.ts',
    'src/files-consistency/index.ts',
    'src/storage-consistency/index.ts',
    'src/blobs-consistency/index.ts',
    'src/grants-consistency/index.ts',
    'src/consistency-batch/index.ts',
    'src/storage-migration/index.ts',
    'src/reextract-audio/index.ts',
    'src/reextract-image/index.ts',
  ],
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
});
