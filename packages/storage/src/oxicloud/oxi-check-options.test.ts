import type { CheckOptions, ConsistencyCheck } from '@oxicloud/consistency';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import type { OxiCloudDatabase } from './database.js';
import { OxiBlobRowScan } from './oxi-blob-row-scan.js';
import { OxiDriveUsageScan } from './oxi-drive-usage-scan.js';
import { OxiFileContentScan } from './oxi-file-content-scan.js';
import { OxiFolderTreeScan } from './oxi-folder-tree-scan.js';
import { OxiGrantScan } from './oxi-grant-scan.js';
import { oxiCloudScans } from './oxi-scans.js';

// Nothing here sends a query: the dialect's pool is made on the first query, which fails the test.
const db = new Kysely<OxiCloudDatabase>({
  dialect: new PostgresDialect({ pool: () => Promise.reject(new Error('no query is expected here')) }),
});
afterAll(async () => {
  await db.destroy();
});

const NORMAL: CheckOptions = { force: false, deep: false };
const HOUR = 3_600_000;
const only = (checks: readonly ConsistencyCheck[], name: string): ConsistencyCheck => {
  expect(checks.map((c) => c.name)).toContain(name);
  return checks.find((c) => c.name === name) as ConsistencyCheck;
};

describe("a check's options are its own, set where its adapter lists it", () => {
  it('each adapter hands a check the options given under its name, and the defaults otherwise', () => {
    const cases = [
      [
        'folders_consistency',
        (ms?: number) =>
          new OxiFolderTreeScan(
            db,
            ms === undefined ? {} : { checks: { folders_consistency: { graceWindowMs: ms } } },
          ),
      ],
      [
        'files_consistency',
        (ms?: number) =>
          new OxiFileContentScan(
            db,
            ms === undefined ? {} : { checks: { files_consistency: { graceWindowMs: ms } } },
          ),
      ],
      [
        'blobs_consistency',
        (ms?: number) =>
          new OxiBlobRowScan(
            db,
            ms === undefined ? {} : { checks: { blobs_consistency: { graceWindowMs: ms } } },
          ),
      ],
      [
        'grants_consistency',
        (ms?: number) =>
          new OxiGrantScan(
            db,
            ms === undefined ? {} : { checks: { grants_consistency: { graceWindowMs: ms } } },
          ),
      ],
    ] as const;
    for (const [name, adapter] of cases) {
      expect(only(adapter(5_000).consistencyChecks(), name).graceWindowMs(NORMAL), name).toBe(5_000);
      expect(only(adapter().consistencyChecks(), name).graceWindowMs(NORMAL), name).toBe(HOUR);
    }
    expect(
      only(new OxiDriveUsageScan(db).consistencyChecks(), 'drives_consistency').graceWindowMs(NORMAL),
    ).toBe(0);
  });

  it("a threshold reaches its check, which validates it (grants_consistency's linger margin)", () => {
    expect(() => new OxiGrantScan(db, { checks: { grants_consistency: { lingerMarginMs: -1 } } })).toThrow(
      /grants_consistency lingerMarginMs=-1: expected a whole number of ms >= 0/,
    );
  });

  it('oxiCloudScans hands each check its own options, and nothing to the others', () => {
    const adapters = oxiCloudScans(db, {
      checks: { folders_consistency: { graceWindowMs: 7_000 }, grants_consistency: { graceWindowMs: 9_000 } },
    });
    const subsystems = adapters.map((a) => a.subsystem());
    expect(new Set(subsystems).size).toBe(subsystems.length);
    const grace = Object.fromEntries(
      adapters.flatMap((a) => a.consistencyChecks()).map((c) => [c.name, c.graceWindowMs(NORMAL)]),
    );
    expect(grace).toMatchObject({ folders_consistency: 7_000, grants_consistency: 9_000 });
    for (const [name, ms] of Object.entries(grace)) {
      if (name !== 'folders_consistency' && name !== 'grants_consistency')
        expect([0, HOUR], name).toContain(ms);
    }
    for (const adapter of adapters)
      expect(adapter.consistencyChecks().length, adapter.subsystem()).toBeGreaterThan(0);
  });

  it('an adapter takes no check option at its top level, nor options for a check it does not list', () => {
    // @ts-expect-error graceWindowMs belongs to one check: `checks: { folders_consistency: { graceWindowMs } }`
    new OxiFolderTreeScan(db, { graceWindowMs: 5_000 });
    // @ts-expect-error grants_consistency is OxiGrantScan's check, not OxiFolderTreeScan's
    new OxiFolderTreeScan(db, { checks: { grants_consistency: { graceWindowMs: 5_000 } } });
    // @ts-expect-error cleanupGraceMs is grants_consistency's: `checks: { grants_consistency: { cleanupGraceMs } }`
    new OxiGrantScan(db, { cleanupGraceMs: 5_000 });
    expect(true).toBe(true);
  });
});
