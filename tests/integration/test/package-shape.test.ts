import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every published package can be consumed on its own from npm: a scoped name,
 * a version, `files`, an exports map whose every entry has types and an
 * import, and a README with a usage example. (`publint --strict` runs in each
 * package's lint task on the packed tarball; this checks what publint does not.)
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));
const dirs = ['packages', 'apps']
  .flatMap((d) => readdirSync(join(root, d)).map((n) => join(d, n)))
  .concat('migrations')
  .filter((d) => existsSync(join(root, d, 'package.json')));

interface Manifest {
  name: string;
  version?: string;
  private?: boolean;
  files?: string[];
  types?: string;
  exports?: Record<string, string | Record<string, string>>;
  dependencies?: Record<string, string>;
}

const manifests = dirs.map((dir) => ({
  dir,
  pkg: JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as Manifest,
}));
const published = manifests.filter((m) => !m.pkg.private);

describe('package shape', () => {
  it('covers every package the architecture names', () => {
    expect(published.map((m) => m.pkg.name).sort()).toEqual(
      [
        '@oxicloud/admin-api',
        '@oxicloud/alerts',
        '@oxicloud/cluster',
        '@oxicloud/consistency',
        '@oxicloud/dataset',
        '@oxicloud/embedded-postgres',
        '@oxicloud/migrations',
        '@oxicloud/recoverable',
        '@oxicloud/scheduler',
        '@oxicloud/server',
        '@oxicloud/storage',
        '@oxicloud/tenants',
      ].sort(),
    );
  });

  it.each(published.map((m) => [m.pkg.name, m] as const))('%s is publishable on its own', (_name, {
    dir,
    pkg,
  }) => {
    expect(pkg.name).toMatch(/^@oxicloud\/[a-z-]+$/);
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(pkg.files).toContain('dist');
    expect(pkg.types).toBe('./dist/index.d.ts');
    const entries = Object.entries(pkg.exports ?? {}).filter(([key]) => key !== './package.json');
    expect(entries.length).toBeGreaterThan(0);
    for (const [key, target] of entries) {
      expect(typeof target, key).toBe('object');
      const conditions = target as Record<string, string>;
      expect(conditions['types'], `${key} types`).toMatch(/^\.\/dist\/.+\.d\.ts$/);
      expect(conditions['import'], `${key} import`).toMatch(/^\.\/dist\/.+\.js$/);
    }
    // No dependency on a private workspace package: it would not install from npm.
    for (const dep of Object.keys(pkg.dependencies ?? {})) {
      const target = manifests.find((m) => m.pkg.name === dep);
      expect(target?.pkg.private ?? false, `${pkg.name} depends on private ${dep}`).toBe(false);
    }
    const readme = readFileSync(join(root, dir, 'README.md'), 'utf8');
    expect(readme, `${dir}/README.md`).toMatch(/^# @oxicloud\//);
    expect(readme, `${dir}/README.md has a usage example`).toMatch(/```(ts|sh)\n[\s\S]+?\n```/);
  });
});
