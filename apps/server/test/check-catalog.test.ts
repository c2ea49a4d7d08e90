import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FindingKindJson, JobSummaryJson } from '@oxicloud/admin-api';
import { OXICLOUD_FAULT_EXPECTATIONS } from '@oxicloud/dataset';
import { LocalThumbnailStore } from '@oxicloud/storage';
import { OxiBlobIndexScan, type OxiCloudDatabase, OxiRepairStore } from '@oxicloud/storage/oxicloud';
import { type BlobHasher, createRepairActions, needsPersonKinds } from '@oxicloud/tenants';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ComposedServer } from '../src/index.js';
import { adminToken, composeInProcess, scratchDir } from './fault-support.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * Files that may name every check or every finding kind in one place, and
 * why. Nothing else may: the checks' declarations are the one list, and the
 * API (`GET /api/admin/jobs`), the CLI, the page, the bench and the tests read
 * them from the catalog.
 */
const MAY_LIST_ALL: Readonly<Record<string, string>> = {
  'packages/dataset/src/oxicloud/faults.ts':
    "OXICLOUD_FAULT_EXPECTATIONS: each fault on OxiCloud's domain names the finding it must produce (a test oracle, not a list of checks)",
  'bench/results.md': 'what a past `pnpm bench` measured, check by check (a record)',
  'bench/results/': "`pnpm bench`'s output files (records of a run)",
};

/** Folders never read: dependencies, build output, caches, local data. */
const SKIPPED_DIRS = new Set([
  'node_modules',
  'dist',
  '.git',
  '.turbo',
  '.test-results',
  '.oxicloud',
  'coverage',
]);
const TEXT_FILE = /\.(ts|mts|cts|js|mjs|cjs|json|md|sql|ya?ml|html|css|sh|txt)$/;

function textFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name) && relative(ROOT, join(dir, entry.name)) !== 'bench/data') {
        out.push(...textFiles(join(dir, entry.name)));
      }
    } else if (entry.isFile() && TEXT_FILE.test(entry.name)) {
      out.push(join(dir, entry.name));
    }
  }
  return out;
}

const mentions = (text: string, name: string) => new RegExp(`\\b${name}\\b`).test(text);

/**
 * The catalog as the API serves it, from a composed server (the one the CLI,
 * the page and `consistency_batch` read): the checks, the declared kinds.
 */
describe('the check declarations are the only list of checks and finding kinds', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof scratchDir>;
  let server: ComposedServer;
  let listing: JobSummaryJson[];
  let lines: Array<Record<string, unknown>>;

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    dir = scratchDir('check-catalog');
    let logger: Awaited<ReturnType<typeof composeInProcess>>['logger'];
    ({ server, logger } = await composeInProcess({ pool: db.pool, dataDir: dir.path }));
    lines = logger.lines;
    const res = await server.app.fetch(
      new Request('http://x/api/admin/jobs', {
        headers: { authorization: `Bearer ${await adminToken(db.pool)}` },
      }),
    );
    expect(res.status).toBe(200);
    listing = (await res.json()) as JobSummaryJson[];
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    dir?.remove();
  });

  const checks = () => listing.filter((j) => j.check !== null);
  const kindsOf = (job: string): FindingKindJson[] =>
    listing.find((j) => j.name === job)?.finding_kinds ?? [];

  it("the scheduler's start line counts the jobs the listing shows, periodic and recoverable apart", () => {
    const started = lines.filter((l) => l['event'] === 'scheduler.started');
    expect(started).toHaveLength(1);
    const periodic = listing.filter((j) => j.kind === 'periodic').length;
    const recoverable = listing.filter((j) => j.kind === 'recoverable').length;
    expect(started[0]).toMatchObject({ jobs: periodic, recoverable, total: listing.length });
    expect(started[0]?.['msg']).toBe(
      `scheduler started, ${periodic} periodic job(s) registered (and ${recoverable} recoverable: ${listing.length} job(s) in all)`,
    );
  });

  it('every check declares its kinds: each with a severity, a meaning and a repair or none', () => {
    expect(checks().length).toBeGreaterThan(1);
    for (const check of checks()) {
      expect(check.finding_kinds.length, check.name).toBeGreaterThan(0);
      // A run's count is the findings it found (each once), not only those new since the run before.
      expect(check.check?.count_meaning, check.name).toMatch(/^findings this run found: \S/);
      for (const k of check.finding_kinds) {
        expect(k.kind, check.name).toMatch(/^[a-z][a-z0-9_]*$/);
        expect(k.meaning.trim(), `${check.name} ${k.kind}`).not.toBe('');
      }
    }
    // Only jobs that record findings declare kinds.
    const recording = listing.filter((j) => j.finding_kinds.length > 0).map((j) => j.name);
    expect(recording).toEqual(expect.arrayContaining(checks().map((c) => c.name)));
    expect(kindsOf('trash_cleanup')).toEqual([]);
  });

  it('every finding a seeded fault must produce is a declared kind of its check, with that severity', () => {
    const recorded = Object.values(OXICLOUD_FAULT_EXPECTATIONS).flatMap((e) => [
      ...(e.check !== null && 'severity' in e ? [{ job: e.check, kind: e.kind, severity: e.severity }] : []),
      // A fault's second finding, on its resources of one type (a shared root's folder).
      ...('also' in e ? [{ job: e.also.check, kind: e.also.kind, severity: e.also.severity }] : []),
    ]);
    expect(recorded.length).toBeGreaterThan(0);
    for (const { job, kind, severity } of recorded) {
      expect(
        kindsOf(job).find((k) => k.kind === kind),
        `${job} ${kind}`,
      ).toMatchObject({ severity });
    }
  });

  it('a kind declares a repair exactly when a repair action plans it (else a plan line needs a person)', () => {
    const kysely = new Kysely<OxiCloudDatabase>({ dialect: new PostgresDialect({ pool: db.pool }) });
    const hasher: BlobHasher = {
      hashStoredBlob: () => Promise.reject(new Error('not called: only the actions are listed')),
    };
    const actions = createRepairActions({
      store: new OxiRepairStore(kysely),
      blobs: { blobs: server.blobs, hasher, other: null },
      restore: { source: server.blobs, sourceHasher: hasher, other: null },
      // Only the actions' kinds are read: no thumbnail is listed or removed.
      thumbnails: { thumbnails: new LocalThumbnailStore(tmpdir()), index: new OxiBlobIndexScan(kysely) },
    });
    const acted = new Set(actions.kinds.filter((k) => !needsPersonKinds.kinds.includes(k)));
    for (const check of checks()) {
      for (const k of check.finding_kinds) {
        expect(k.repair !== null, `${check.name} ${k.kind}: repair ${JSON.stringify(k.repair)}`).toBe(
          acted.has(k.kind),
        );
      }
    }
    const declared = new Set(checks().flatMap((c) => c.finding_kinds.map((k) => k.kind)));
    for (const kind of acted)
      expect(declared.has(kind), `${kind} has an action but no check declares it`).toBe(true);
  });

  it('no file outside the catalog names every check, or every finding kind, in one paragraph', () => {
    const names = checks().map((c) => c.name);
    const kinds = [...new Set(listing.flatMap((j) => j.finding_kinds.map((k) => k.kind)))];
    expect(names.length).toBeGreaterThan(1);
    expect(kinds.length).toBeGreaterThan(1);
    const allowed = (file: string) =>
      Object.keys(MAY_LIST_ALL).some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p));
    const lists: string[] = [];
    for (const path of textFiles(ROOT)) {
      const file = relative(ROOT, path);
      if (allowed(file)) continue;
      // A paragraph (text between blank lines): an array, an object, a table, a list in prose.
      const paragraphs = readFileSync(path, 'utf8').split(/\n\s*\n/);
      paragraphs.forEach((paragraph, i) => {
        if (names.every((n) => mentions(paragraph, n)))
          lists.push(`${file} (paragraph ${i + 1}): every check`);
        if (kinds.every((k) => mentions(paragraph, k)))
          lists.push(`${file} (paragraph ${i + 1}): every kind`);
      });
    }
    expect(lists, 'read them from the catalog (GET /api/admin/jobs: check, finding_kinds)').toEqual([]);
  });
});
