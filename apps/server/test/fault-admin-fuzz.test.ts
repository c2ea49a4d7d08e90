import { ADMIN_API_ERROR_STATUS } from '@oxicloud/admin-api';
import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ComposedServer } from '../src/index.js';
import { adminToken, type capturingLogger, composeInProcess, scratchDir } from './fault-support.js';

/** The error codes docs/admin-api.md documents (INTERNAL and BAD_OPTIONS are never answered). */
const DOCUMENTED_CODES = [
  'VALIDATION_FAILED',
  'INVALID_PARAMS',
  'MALFORMED_JSON',
  'INVALID_RUN_ID',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'JOB_NOT_FOUND',
  'RUN_NOT_FOUND',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'NO_ACTIVE_RUN',
  'NOT_RECOVERABLE',
  'SHUTTING_DOWN',
  'UNAVAILABLE',
] as const;

const JOBS = [
  'trash_cleanup',
  'storage_reconcile',
  'dedup_gc',
  'grant_cleanup',
  'drives_consistency',
  'folders_consistency',
  'files_consistency',
  'storage_consistency',
  'consistency_batch',
  'storage_migration',
  'reextract_audio',
  'reextract_image',
];

const NUM_RUNS = Number(process.env['OXICLOUD_FAULT_FUZZ_RUNS'] ?? 500);

/** A path segment an attacker or a confused client might send. */
const segment = fc.oneof(
  fc.constantFrom(...JOBS),
  fc.constantFrom(
    'trigger',
    'cancel',
    'runs',
    'findings',
    'openapi.json',
    '',
    '.',
    '..',
    '%2e%2e',
    '%00',
    '%ZZ',
  ),
  fc.uuid().map(String),
  fc.string({ maxLength: 20 }).map(encodeURIComponent),
  fc.string({ unit: 'grapheme', maxLength: 12 }).map(encodeURIComponent),
  fc.constant('a'.repeat(5000)),
);

/** Mostly well-formed admin paths with a bad part somewhere, sometimes pure noise. */
const path = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .tuple(fc.constantFrom(...JOBS), fc.constantFrom('trigger', 'cancel', 'runs'))
      .map(([j, a]) => `/api/admin/jobs/${j}/${a}`),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.constantFrom(...JOBS),
        fc.oneof(fc.uuid().map(String), segment),
        fc.constantFrom('', '/findings', '/x'),
      )
      .map(([j, id, s]) => `/api/admin/jobs/${j}/runs/${id}${s}`),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(segment, fc.constantFrom('trigger', 'cancel', 'runs'))
      .map(([j, a]) => `/api/admin/jobs/${j}/${a}`),
  },
  {
    weight: 3,
    arbitrary: fc.array(segment, { minLength: 0, maxLength: 5 }).map((s) => `/api/admin/jobs/${s.join('/')}`),
  },
  { weight: 1, arbitrary: fc.array(segment, { maxLength: 4 }).map((s) => `/${s.join('/')}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '/api/admin/jobs',
      '/api/admin/jobs/',
      '/api/admin/openapi.json',
      '/healthz',
      '/admin/jobs',
      '/api/admin',
    ),
  },
);

const queryValue = fc.oneof(
  fc.constantFrom('true', 'false', 'maybe', '', '1', '-1', '0', '1e9', 'NaN', 'DataLoss', 'Foo', '%', '[]'),
  fc.string({ maxLength: 30 }),
  fc.integer().map(String),
  fc.constant('9'.repeat(400)),
);
const query = fc
  .array(
    fc.tuple(
      fc.constantFrom('force', 'deep', 'wait', 'limit', 'offset', 'severity', 'kind', 'x', 'force[]'),
      queryValue,
    ),
    {
      maxLength: 5,
    },
  )
  .map((pairs) =>
    pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}`,
  );

function nested(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

/** Request bodies: none, run params (good and bad), broken JSON, huge, deeply nested. */
const body = fc.oneof(
  { weight: 3, arbitrary: fc.constant<string | undefined>(undefined) },
  {
    weight: 3,
    arbitrary: fc
      .record(
        {
          batch_size: fc.oneof(
            fc.integer({ min: -5, max: 20_000 }),
            fc.string(),
            fc.constant(null),
            fc.double(),
          ),
          throttle_ms: fc.oneof(fc.integer({ min: -5, max: 70_000 }), fc.string()),
          target: fc.constantFrom('s3', 'local', 'tape', ''),
          force: fc.oneof(fc.boolean(), fc.string()),
          deep: fc.oneof(fc.boolean(), fc.integer()),
          concurrency: fc.integer({ min: -1, max: 100 }),
        },
        { requiredKeys: [] },
      )
      .map((o) => JSON.stringify(o)),
  },
  { weight: 2, arbitrary: fc.json().map((j) => j) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('{', '{"batch_size":', 'null', '[]', '"s"', '1', 'true', '{"a":1}}', '\u0000'),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1_000, max: 200_000 }).map((n) => JSON.stringify({ target: 'x'.repeat(n) })),
  },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 20_000 }).map(nested) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 100, max: 5_000 }).map((d) => `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`),
  },
);

const contentType = fc.constantFrom(
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/vnd.api+json',
  'multipart/form-data; boundary=x',
  '',
);

type AuthKind =
  | 'admin'
  | 'none'
  | 'basic'
  | 'bearerEmpty'
  | 'hugeBearer'
  | 'garbage'
  | 'lowercase'
  | 'twoTokens';
const auth = fc.oneof(
  { weight: 6, arbitrary: fc.constant<AuthKind>('admin') },
  {
    weight: 4,
    arbitrary: fc.constantFrom<AuthKind>(
      'none',
      'basic',
      'bearerEmpty',
      'hugeBearer',
      'garbage',
      'lowercase',
      'twoTokens',
    ),
  },
);

const request = fc.record({
  method: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('GET', 'POST') },
    { weight: 1, arbitrary: fc.constantFrom('PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS') },
  ),
  path,
  query,
  body,
  contentType,
  auth,
  extraHeader: fc.option(
    fc.tuple(
      fc.constantFrom('x-forwarded-for', 'user-agent', 'accept', 'cookie'),
      fc.string({ maxLength: 2_000 }),
    ),
  ),
});

/**
 * Issue 8: the admin API under generated bad input (fast-check). Whatever the
 * path, method, query, body or auth header: never a 5xx, every error is JSON
 * `{ error: { code, message } }` with a documented code and the status that
 * code maps to, and every POST under /api/admin/jobs leaves an audit line.
 * In-process through `composeServer` on a real (empty) database.
 */
describe('the admin API under generated bad input', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof scratchDir>;
  let server: ComposedServer;
  let logger: ReturnType<typeof capturingLogger>;
  let token: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = scratchDir('fault-fuzz');
    ({ server, logger } = await composeInProcess({ pool: db.pool, dataDir: dir.path }));
    token = await adminToken(db.pool);
  });

  afterAll(async () => {
    await server?.engine.whenIdle();
    await server?.stop();
    await db?.drop();
    dir?.remove();
  });

  function authorization(kind: AuthKind): string | undefined {
    switch (kind) {
      case 'admin':
        return `Bearer ${token}`;
      case 'none':
        return undefined;
      case 'basic':
        return 'Basic YWRtaW46YWRtaW4=';
      case 'bearerEmpty':
        return 'Bearer ';
      case 'hugeBearer':
        return `Bearer ${'A'.repeat(64 * 1024)}.${'B'.repeat(1024)}.${'C'.repeat(1024)}`;
      case 'garbage':
        return `Bearer ${token.slice(0, -3)}%%%`;
      case 'lowercase':
        return `bearer ${token}`;
      case 'twoTokens':
        return `Bearer ${token} ${token}`;
    }
  }

  it(`never answers 5xx, every error is a documented JSON code, every POST is audited (${NUM_RUNS} runs)`, async () => {
    const codes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const headers = new Headers();
        const authz = authorization(r.auth);
        if (authz !== undefined) headers.set('authorization', authz);
        if (r.contentType !== undefined) headers.set('content-type', r.contentType);
        if (r.extraHeader) headers.set(r.extraHeader[0], r.extraHeader[1].replace(/[^\x20-\x7e]/g, ''));
        const sendsBody = r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD';
        const url = `http://127.0.0.1${r.path}${r.query}`;
        const auditBefore = logger.lines.filter((l) => l['target'] === 'audit').length;
        const res = await server.app.fetch(
          new Request(url, { method: r.method, headers, ...(sendsBody ? { body: r.body } : {}) }),
        );
        const what = `${r.method} ${r.path}${r.query.slice(0, 200)} auth=${r.auth}`;
        expect(res.status, what).toBeLessThan(500);
        const text = await res.text();
        if (res.status >= 400 && r.method !== 'HEAD') {
          expect(res.headers.get('content-type') ?? '', what).toMatch(/^application\/json/);
          const parsed = JSON.parse(text) as { error?: { code?: string; message?: string } };
          const code = parsed.error?.code ?? '(none)';
          expect(DOCUMENTED_CODES as readonly string[], `${what} → ${text.slice(0, 300)}`).toContain(code);
          expect(res.status, `${what}: ${code}`).toBe(
            ADMIN_API_ERROR_STATUS[code as keyof typeof ADMIN_API_ERROR_STATUS],
          );
          expect(parsed.error?.message?.length ?? 0, what).toBeGreaterThan(0);
          codes.set(code, (codes.get(code) ?? 0) + 1);
        }
        const pathname = new URL(url).pathname;
        if (
          r.method === 'POST' &&
          (pathname === '/api/admin/jobs' || pathname.startsWith('/api/admin/jobs/'))
        ) {
          const audit = logger.lines.filter((l) => l['target'] === 'audit').slice(auditBefore);
          expect(
            audit.some((l) => l['method'] === 'POST'),
            `${what}: no audit line for this POST (status ${res.status})`,
          ).toBe(true);
        }
      }),
      {
        numRuns: NUM_RUNS,
        seed: Number(process.env['OXICLOUD_FAULT_FUZZ_SEED'] ?? 20_251_130),
        endOnFailure: true,
      },
    );
    console.info('admin fuzz: error codes seen', Object.fromEntries(codes));
    // The generator did reach the interesting answers, not only 401s.
    for (const code of [
      'UNAUTHENTICATED',
      'VALIDATION_FAILED',
      'JOB_NOT_FOUND',
      'NOT_FOUND',
      'MALFORMED_JSON',
    ]) {
      expect(codes.get(code) ?? 0, `${code} seen`).toBeGreaterThan(0);
    }
    expect(logger.lines.filter((l) => l['level'] === 'error' && l['event'] === 'request.failed')).toEqual([]);
  });
});
