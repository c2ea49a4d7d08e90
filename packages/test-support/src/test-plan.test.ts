import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  FIRST_PASS_ONLY,
  filesWhere,
  inSecondPass,
  isQuickFile,
  SERIAL_FILES,
  testFilesOf,
  usesTestPostgres,
} from './test-plan.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** The workspaces whose vitest config starts the test Postgres (the packages pass 2 runs). */
function databaseWorkspaces(): string[] {
  return ['packages', 'apps', 'tests']
    .flatMap((dir) => readdirSync(join(root, dir)).map((name) => join(root, dir, name)))
    .concat(join(root, 'migrations'))
    .filter((dir) => {
      const config = join(dir, 'vitest.config.ts');
      return existsSync(config) && /withDatabase:\s*true/.test(readFileSync(config, 'utf8'));
    });
}

describe('the test plan', () => {
  it('names only files that exist in SERIAL_FILES, each with its reason', () => {
    for (const [file, reason] of Object.entries(SERIAL_FILES)) {
      expect(existsSync(join(root, file)), file).toBe(true);
      expect(reason.length, file).toBeGreaterThan(20);
    }
  });

  it('names only files that exist in FIRST_PASS_ONLY, each sending SQL to the test Postgres, with its reason', () => {
    for (const [file, reason] of Object.entries(FIRST_PASS_ONLY)) {
      expect(existsSync(join(root, file)), file).toBe(true);
      expect(usesTestPostgres(file, root), `${file} sends no SQL: it needs no place in FIRST_PASS_ONLY`).toBe(
        true,
      );
      expect(inSecondPass(file, root), file).toBe(false);
      expect(reason.length, file).toBeGreaterThan(20);
    }
  });

  it('sees a test database created by the file itself or by a helper it imports, and not a Postgres of its own', () => {
    expect(usesTestPostgres('tests/integration/test/migrations.test.ts', root)).toBe(true);
    // Its database comes from storage-consistency-fixtures.ts.
    expect(usesTestPostgres('tests/integration/test/storage-consistency.test.ts', root)).toBe(true);
    // Its Postgres is its own (own-postgres.ts), although it imports fault-support.ts, which reads the URL.
    expect(usesTestPostgres('apps/server/test/fault-postgres-outage.test.ts', root)).toBe(false);
    expect(inSecondPass('apps/server/test/browser/admin-page.test.ts', root)).toBe(false);
    expect(isQuickFile('packages/scheduler/test/job-registry.test.ts', root)).toBe(true);
    expect(isQuickFile('apps/server/test/cli-help.test.ts', root)).toBe(false);
  });

  it('docs/testing.md lists by name exactly the files pass 2 leaves out', () => {
    const leftOut = databaseWorkspaces()
      .flatMap((dir) => filesWhere(testFilesOf(dir, root), root, (file, r) => !inSecondPass(file, r)))
      .sort();
    const doc = readFileSync(join(root, 'docs', 'testing.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Pass 2 leaves out'));
    const listed = [...section.matchAll(/^\| `([^`]+\.test\.ts)` \|/gm)].map((m) => m[1]).sort();
    expect(
      listed,
      `the rows docs/testing.md should have:\n${leftOut.map((f) => `| \`${f}\` |`).join('\n')}`,
    ).toEqual(leftOut);
  });
});
