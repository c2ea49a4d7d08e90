import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from '@oxicloud/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The published packages as a consumer gets them: `pnpm pack` each one,
 * `npm install` the tarballs into a project outside the workspace (no
 * workspace links), typecheck the README quick starts (each a file in the
 * package's `examples/`, shipped in the tarball) under strict NodeNext with
 * exactOptionalPropertyTypes, run them against a fresh database that holds
 * nothing else, and check each tarball with publint --strict and attw.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));
const bin = (name: string) => join(root, 'node_modules', '.bin', name);

/** package folder → the README's quick start in examples/, and what it prints when it worked. */
const PACKAGES = {
  scheduler: { example: 'quick-start.ts', database: false },
  recoverable: { example: 'quick-start.ts', database: true },
  consistency: { example: 'custom-check.ts', database: true },
  'admin-api': { example: 'mount-in-your-app.ts', database: true },
  cluster: { example: 'quick-start.ts', database: true },
} as const;
type Folder = keyof typeof PACKAGES;
const folders = Object.keys(PACKAGES) as Folder[];

/** The versions the peer ranges are tested with: the first minor runs, the second is typechecked (it needs Node 22). */
const CONSUMER_DEPS = {
  kysely: '0.28.19',
  pg: '8.23.1',
  '@types/pg': '8.23.1',
  hono: '4.13.19',
  '@hono/zod-openapi': '1.6.3',
  zod: '4.6.7',
  typescript: '5.9.3',
  '@types/node': '20.19.43',
};
const OTHER_KYSELY = '0.29.9';

/** The environment without what pnpm and vitest put there for themselves. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(npm_|PNPM|VITEST|TURBO_)/i.test(k) && k !== 'NODE_OPTIONS') env[k] = v;
  }
  return { ...env, ...extra };
}

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd, env: cleanEnv(env), encoding: 'utf8', timeout: 300_000 });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  return { code: r.status, output, ms: Date.now() - started };
}

const timings: Record<string, number> = {};
let project: string;
let packs: string;
const tarballs = {} as Record<Folder, string>;

beforeAll(() => {
  packs = mkdtempSync(join(tmpdir(), 'oxicloud-packs-'));
  for (const folder of folders) {
    const r = run('pnpm', ['pack', '--pack-destination', packs], join(root, 'packages', folder));
    expect(r.code, r.output).toBe(0);
    timings['pack'] = (timings['pack'] ?? 0) + r.ms;
    const file = readdirSync(packs).find((f) => f.startsWith(`oxicloud-${folder}-`));
    if (!file) throw new Error(`pnpm pack wrote no tarball for ${folder}: ${r.output}`);
    tarballs[folder] = join(packs, file);
  }
  project = mkdtempSync(join(tmpdir(), 'oxicloud-consumer-'));
  const dependencies: Record<string, string> = { ...CONSUMER_DEPS };
  for (const folder of folders) dependencies[`@oxicloud/${folder}`] = `file:${tarballs[folder]}`;
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies }, null, 2),
  );
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        types: ['node'],
        outDir: 'dist',
        noEmitOnError: true,
        skipLibCheck: false,
      },
      include: ['examples/*.ts', 'consumer/*.ts'],
    }),
  );
  const install = run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'],
    project,
  );
  timings['npm install'] = install.ms;
  expect(install.code, install.output).toBe(0);
  // The examples as the tarballs ship them, and a consumer handing over its own Kysely.
  mkdirSync(join(project, 'examples'));
  for (const folder of folders) {
    const shipped = join(project, 'node_modules', '@oxicloud', folder, 'examples', PACKAGES[folder].example);
    cpSync(shipped, join(project, 'examples', `${folder}-${PACKAGES[folder].example}`));
  }
  cpSync(join(root, 'tests', 'tarballs', 'consumer'), join(project, 'consumer'), { recursive: true });
}, 600_000);

afterAll(() => {
  console.log(`tarball test timings (ms): ${JSON.stringify(timings)}`);
  rmSync(project, { recursive: true, force: true });
  rmSync(packs, { recursive: true, force: true });
});

describe('the packed tarballs in a consumer project', () => {
  it('install with no workspace link and no private dependency in any manifest', () => {
    for (const folder of folders) {
      const dir = join(project, 'node_modules', '@oxicloud', folder);
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      const ranges = { ...manifest.dependencies, ...manifest.devDependencies, ...manifest.peerDependencies };
      for (const [dep, range] of Object.entries(ranges)) {
        expect(String(range), `${folder}: ${dep}`).not.toMatch(/^(workspace|file|link):/);
        expect(dep, `${folder} names the private test harness`).not.toBe('@oxicloud/test-support');
      }
    }
  });

  it('typecheck under strict, NodeNext and exactOptionalPropertyTypes', () => {
    const r = run(join(project, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], project);
    timings['tsc'] = r.ms;
    expect(r.output).toBe('');
    expect(r.code).toBe(0);
  });

  it.each(folders)("%s: the README's quick start is the shipped example, and it runs", async (folder) => {
    const { example, database } = PACKAGES[folder];
    const readme = readFileSync(join(project, 'node_modules', '@oxicloud', folder, 'README.md'), 'utf8');
    const source = readFileSync(join(project, 'examples', `${folder}-${example}`), 'utf8');
    const quickStart = /^## Quick start\n[\s\S]*?```ts\n([\s\S]*?)```/m.exec(readme);
    expect(quickStart?.[1], `${folder}/README.md starts with examples/${example}`).toBe(source);
    expect(/^## .*/m.exec(readme)?.[0], `${folder}/README.md: the first section`).toBe('## Quick start');

    const db = database ? await createTestDatabase({ empty: true }) : null;
    try {
      const js = join(project, 'dist', 'examples', `${folder}-${example.replace(/\.ts$/, '.js')}`);
      const r = run('node', [js], project, db ? { DATABASE_URL: db.url } : {});
      timings[`run ${folder}`] = r.ms;
      expect(r.output).toContain(`${folder} quick start ok`);
      expect(r.code).toBe(0);
    } finally {
      await db?.drop();
    }
  });

  it.each(folders)('%s: publint --strict and attw (ESM-only profile) pass on the tarball', (folder) => {
    const lint = run(bin('publint'), ['--strict', tarballs[folder]], project);
    expect(lint.output).toContain('All good!');
    expect(lint.code).toBe(0);
    const types = run(bin('attw'), [tarballs[folder], '--profile', 'esm-only', '--format', 'ascii'], project);
    expect(types.code, types.output).toBe(0);
    timings['publint + attw'] = (timings['publint + attw'] ?? 0) + lint.ms + types.ms;
  });

  it(`a consumer with kysely ${OTHER_KYSELY} (the other tested minor) typechecks`, () => {
    const install = run(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        `kysely@${OTHER_KYSELY}`,
      ],
      project,
    );
    timings['npm install kysely 0.29'] = install.ms;
    expect(install.code, install.output).toBe(0);
    const r = run(join(project, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json', '--noEmit'], project);
    expect(r.output).toBe('');
    expect(r.code).toBe(0);
  });
});
