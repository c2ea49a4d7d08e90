// One-off scaffolding helper kept for future packages: node scripts/new-package.mjs <dir> <name> "<description>"
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [dir, name, description] = process.argv.slice(2);
if (!dir || !name) throw new Error('usage: new-package.mjs <dir> <name> <description>');
mkdirSync(join(dir, 'src'), { recursive: true });
const write = (f, s) => {
  if (!existsSync(join(dir, f))) writeFileSync(join(dir, f), s);
};
write(
  'package.json',
  JSON.stringify(
    {
      name,
      version: '0.1.0',
      description,
      license: 'AGPL-3.0-only',
      type: 'module',
      repository: { type: 'git', url: 'git+https://github.com/oxicloud/oxicloud-jobs.git', directory: dir },
      engines: { node: '>=20.19' },
      sideEffects: false,
      files: ['dist', 'src', '!src/**/*.test.ts', 'README.md'],
      main: './dist/index.js',
      types: './dist/index.d.ts',
      exports: {
        '.': { '@oxicloud/source': './src/index.ts', types: './dist/index.d.ts', import: './dist/index.js' },
        './package.json': './package.json',
      },
      scripts: {
        build: 'tsup',
        typecheck: 'tsc -p tsconfig.json',
        lint: 'biome check src && tsc -p tsconfig.json && publint --strict',
        test: 'vitest run',
      },
      dependencies: {},
      devDependencies: {},
    },
    null,
    2,
  ) + '\n',
);
write(
  'tsconfig.json',
  JSON.stringify({ extends: '../../tsconfig.base.json', include: ['src', 'test', '*.ts'] }, null, 2) + '\n',
);
write(
  'tsup.config.ts',
  `import { defineConfig } from 'tsup';\n\nexport default defineConfig({\n  entry: ['src/index.ts'],\n  format: ['esm'],\n  dts: true,\n  sourcemap: true,\n  clean: true,\n  target: 'node20',\n});\n`,
);
write(
  'vitest.config.ts',
  `import { defineConfig } from 'vitest/config';\n\nexport default defineConfig({\n  resolve: { conditions: ['@oxicloud/source'] },\n  ssr: { resolve: { conditions: ['@oxicloud/source'] } },\n  test: { include: ['src/**/*.test.ts', 'test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 120_000 },\n});\n`,
);
write('src/index.ts', `/**\n * ${name}: ${description}\n *\n * @packageDocumentation\n */\nexport {};\n`);
write('README.md', `# ${name}\n\n${description}\n`);
