import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ComposedServer } from '../src/index.js';
import { composeInProcess, scratchDir } from './fault-support.js';

const run = promisify(execFile);
const APP_ROOT = fileURLToPath(new URL('..', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/** Inside the package (gitignored), so the check file resolves the workspace packages. */
const OUT = join(APP_ROOT, 'test-artifacts', 'openapi-client');

interface RedoclyReport {
  totals: { errors: number; warnings: number };
  problems: Array<{ ruleId: string; severity: string; message: string; location?: unknown }>;
}

/**
 * The OpenAPI document the composed server serves at /api/admin/openapi.json:
 * outside tools accept it (redocly lint, recommended rules: no error, no
 * warning), and a client generated from it (openapi-typescript) type-checks
 * against the shapes the oxijobs CLI reads.
 */
describe('the served OpenAPI document', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof scratchDir>;
  let server: ComposedServer;
  let documentFile: string;
  let document: Record<string, unknown>;

  beforeAll(async () => {
    db = await createTestDatabase({ domain: 'oxicloud' });
    dir = scratchDir('openapi');
    ({ server } = await composeInProcess({ pool: db.pool, dataDir: dir.path }));
    const response = await server.app.fetch(new Request('http://127.0.0.1/api/admin/openapi.json'));
    expect(response.status).toBe(200);
    document = (await response.json()) as Record<string, unknown>;
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    documentFile = join(OUT, 'openapi.json');
    writeFileSync(documentFile, JSON.stringify(document, null, 2));
  });

  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    dir?.remove();
  });

  it('passes redocly lint with the recommended rules: no error, no warning', async () => {
    const reportFile = join(OUT, 'redocly-report.json');
    const redocly = join(APP_ROOT, 'node_modules', '.bin', 'redocly');
    const result = await run(redocly, ['lint', documentFile, '--extends=recommended', '--format=json'], {
      cwd: OUT,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    }).catch((error: { stdout?: string; stderr?: string; code?: number }) => error);
    const stdout = result.stdout ?? '';
    writeFileSync(reportFile, stdout);
    const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as RedoclyReport;
    expect(report.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect('code' in result ? result.code : 0).toBe(0);
  });

  it('names every operation with a stable operationId', () => {
    const paths = document['paths'] as Record<string, Record<string, { operationId?: string }>>;
    const ids = Object.values(paths).flatMap((methods) => Object.values(methods).map((op) => op.operationId));
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(
      expect.arrayContaining(['listJobs', 'triggerJob', 'getRun', 'listFindings', 'getAlerts']),
    );
  });

  it('generates a client (openapi-typescript) whose shapes type-check against the CLI types', async () => {
    const ast = await openapiTS(JSON.parse(JSON.stringify(document)));
    writeFileSync(join(OUT, 'admin-api.d.ts'), astToString(ast));
    const cliTypes = join(APP_ROOT, 'src', 'jobs-client', 'api-types.ts');
    writeFileSync(
      join(OUT, 'check.ts'),
      `import type { components, operations } from './admin-api.d.ts';
import type { ApiAlertsState, ApiCancelled, ApiFindingsPage, ApiJob, ApiOutcomeEnvelope, ApiRunDetail, ApiRunListEntry, ApiRunStarted } from ${JSON.stringify(cliTypes)};

type S = components['schemas'];
type Json<O extends keyof operations, C extends keyof operations[O]['responses']> = operations[O]['responses'][C] extends {
  content: { 'application/json': infer T };
}
  ? T
  : never;
/** Compiles only when A is assignable to B (what the server answers is readable by the CLI). */
type Reads<A extends B, B> = [A, B];

export type Checks = [
  Reads<Json<'listJobs', 200>[number], ApiJob>,
  Reads<S['JobSummary'], ApiJob>,
  Reads<S['RunSummary'], ApiRunDetail>,
  Reads<S['RunListEntry'], ApiRunListEntry>,
  Reads<Json<'listRuns', 200>[number], ApiRunListEntry>,
  Reads<Json<'getRun', 200>, ApiRunDetail>,
  Reads<Json<'cancelRun', 200>, ApiCancelled>,
  Reads<S['RunTriggered'], ApiRunStarted>,
  Reads<S['OutcomeEnvelope'], ApiOutcomeEnvelope>,
  Reads<S['TriggerAccepted'], ApiOutcomeEnvelope>,
  Reads<Json<'listFindings', 200>, ApiFindingsPage>,
  Reads<Json<'getAlerts', 200>, ApiAlertsState>,
];
`,
    );
    writeFileSync(
      join(OUT, 'tsconfig.json'),
      JSON.stringify({
        extends: join(REPO_ROOT, 'tsconfig.base.json'),
        compilerOptions: { noEmit: true, noUnusedLocals: false },
        files: ['check.ts'],
      }),
    );
    const tsc = join(REPO_ROOT, 'node_modules', '.bin', 'tsc');
    const result = await run(tsc, ['-p', join(OUT, 'tsconfig.json')], { cwd: OUT }).catch(
      (error: { stdout?: string; code?: number }) => error,
    );
    expect('stdout' in result ? result.stdout : '').toBe('');
    expect('code' in result ? result.code : 0).toBe(0);
  }, 120_000);
});
