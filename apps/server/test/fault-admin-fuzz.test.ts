import { ADMIN_API_ERROR_STATUS, createAdminApp } from '@oxicloud/admin-api';
import { JobRegistry, type Logger } from '@oxicloud/scheduler';
import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ComposedServer, pgHealthProbe } from '../src/index.js';
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
  'PAYLOAD_TOO_LARGE',
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

const MiB = 1024 * 1024;
/** An IPv4 or bracketed IPv6 address with a port, as a driver error names the database. */
const INTERNAL_ADDRESS = /\b\d{1,3}(\.\d{1,3}){3}:\d{2,5}\b|\[[0-9a-f:]+\]:\d{2,5}|ECONNREFUSED/i;
/** A line of a JavaScript stack trace. */
const STACK_FRAME = /\n\s+at \S|\bat .*\.(js|ts):\d+:\d+/;

/** The job whose 500 stored runs carry huge params, stats and errors. */
const STORED_JOB = 'reextract_audio';

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
  fc.constantFrom(
    '0x10',
    '0b11',
    '0o7',
    ' 5',
    '5 ',
    '+5',
    '1.0',
    '1_0',
    '\u0000',
    'a\u0000b',
    '\u0001',
    '\ud800',
    'x\udc00',
  ),
  fc.string({ maxLength: 30 }),
  fc.integer().map(String),
  fc.constant('9'.repeat(400)),
);
/**
 * `encodeURIComponent`, except that a lone surrogate (which it refuses) is
 * sent as its WTF-8 bytes (`%ED%A0%80`), as a hostile client would.
 */
function encodeLoosely(value: string): string {
  let out = '';
  for (const char of value) {
    const unit = char.charCodeAt(0);
    if (char.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join('');
    } else out += encodeURIComponent(char);
  }
  return out;
}

/** Query values sent as typed, not encoded: %-escapes of NUL, a space, a surrogate, overlong UTF-8, bad bytes. */
const rawQueryValue = fc.constantFrom(
  '%00',
  'a%00b',
  '%205',
  '5%20',
  '%2B5',
  '0x10',
  '0b11',
  '',
  '%ED%A0%80',
  '%C0%80',
  '%FF',
  '%E0%80',
  '%',
  '%%30',
  'true%00',
  '%74rue',
);
const queryName = fc.constantFrom(
  'force',
  'deep',
  'wait',
  'limit',
  'offset',
  'severity',
  'kind',
  'x',
  'force[]',
);
const query = fc
  .array(
    fc.oneof(
      fc.tuple(queryName, queryValue).map(([k, v]) => `${k}=${encodeLoosely(v)}`),
      fc.tuple(queryName, rawQueryValue).map(([k, v]) => `${k}=${v}`),
      fc.constantFrom('limit', 'offset=', 'kind', '=1', '&&'),
    ),
    { maxLength: 5 },
  )
  .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.join('&')}`));

function nested(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

/** One 10 MB body, built once (the size probe). */
const TEN_MB_BODY = JSON.stringify({ target: 's3', pad: 'x'.repeat(10 * 1024 * 1024) });

/** Strings Postgres refuses in jsonb, or that are not well-formed Unicode, as JSON text (escaped). */
const hostileString = fc.oneof(
  fc.constantFrom('a\\u0000b', '\\u0000', '\\ud800', '\\udfff', 'x\\ud83d', '\\ude00x', '\\ud800\\ud800'),
  fc
    .array(fc.integer({ min: 0xd800, max: 0xdfff }), { minLength: 1, maxLength: 3 })
    .map((units) => units.map((u) => `\\u${u.toString(16)}`).join('')),
);

/** Request bodies: none, run params (good and bad), broken JSON, huge, deeply nested, hostile strings. */
const body = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        hostileString,
        fc.constantFrom('value', 'key', 'nested', 'array'),
        fc.constantFrom('target', 'x', 'batch_size', 'kind'),
      )
      .map(([bad, where, key]) => {
        switch (where) {
          case 'value':
            return `{"${key}":"${bad}"}`;
          case 'key':
            return `{"${bad}":1,"batch_size":10}`;
          case 'nested':
            return `{"${key}":{"inner":["ok","${bad}"]}}`;
          default:
            return `{"${key}":["${bad}"]}`;
        }
      }),
  },
  {
    weight: 2,
    arbitrary: fc
      .record(
        {
          force: fc.constantFrom<unknown>('maybe', 'true', 'false', 1, 0, null, 'yes', [], {}),
          deep: fc.constantFrom<unknown>('maybe', 'TRUE', 1, null, true, false),
          batch_size: fc.constantFrom<unknown>('500', '0x10', 500, 1.5, -0, '1e3'),
          unknown_key: fc.string({ maxLength: 10 }),
        },
        { requiredKeys: [] },
      )
      .map((o) => JSON.stringify(o)),
  },
  { weight: 1, arbitrary: fc.constant(TEN_MB_BODY) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
      `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`,
      `{"target":${'['.repeat(9)}${']'.repeat(9)}}`,
      `{"x":"${'['.repeat(50)}"}`,
    ),
  },
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
    db = await createTestDatabase({ domain: 'oxicloud' });
    dir = scratchDir('fault-fuzz');
    ({ server, logger } = await composeInProcess({ pool: db.pool, dataDir: dir.path }));
    token = await adminToken(db.pool);
    // Runs stored before the limits existed: 500 finished runs of one job, each far over every listing budget.
    await db.pool.query(
      `INSERT INTO jobs.recoverable_runs
         (id, job_name, status, started_at, last_progress_at, completed_at, cursor, stats, params, error_message)
       SELECT gen_random_uuid(), $1, 'Failed', now() - make_interval(days => 1, secs => i), now(), now(),
              decode(repeat('ab', 2000), 'hex'),
              jsonb_build_object('count', 1, 'note', repeat(chr(1) || chr(128512), 2000)),
              jsonb_build_object('target', repeat('x', 20000), 'force', false, 'deep', false,
                                 'nested', '{"a":{"b":{"c":{"d":[1,2,3]}}}}'::jsonb),
              repeat(chr(1) || '"', 5000)
         FROM generate_series(1, 500) i`,
      [STORED_JOB],
    );
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
    const statuses = new Map<number, number>();
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
        const what = `${r.method} ${r.path}${r.query.slice(0, 200)} auth=${r.auth} body=${(r.body ?? '').slice(0, 80)}`;
        expect(res.status, what).toBeLessThan(500);
        const text = await res.text();
        expect(Buffer.byteLength(text), `${what}: response over 1 MiB`).toBeLessThanOrEqual(MiB);
        expect(text, `${what}: an internal address in the response`).not.toMatch(INTERNAL_ADDRESS);
        expect(text, `${what}: a stack in the response`).not.toMatch(STACK_FRAME);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
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
    console.info(
      'admin fuzz: error codes seen',
      Object.fromEntries(codes),
      'statuses',
      Object.fromEntries(statuses),
    );
    // The generator did reach the interesting answers, not only 401s.
    for (const code of [
      'UNAUTHENTICATED',
      'VALIDATION_FAILED',
      'JOB_NOT_FOUND',
      'NOT_FOUND',
      'MALFORMED_JSON',
      'INVALID_PARAMS',
      'PAYLOAD_TOO_LARGE',
    ]) {
      expect(codes.get(code) ?? 0, `${code} seen`).toBeGreaterThan(0);
    }
    expect(logger.lines.filter((l) => l['level'] === 'error' && l['event'] === 'request.failed')).toEqual([]);
  });
  it(`authenticated, on real routes: hostile bodies and queries are 4xx, listings stay under 1 MiB (${NUM_RUNS} runs)`, async () => {
    const { run_id: runId } = (await (
      await send('/api/admin/jobs/reextract_image/trigger', { method: 'POST' })
    ).json()) as {
      run_id: string;
    };
    await server.engine.whenIdle();
    const focused = fc.record({
      target: fc.oneof(
        fc.constantFrom(...JOBS).map((job) => ({ method: 'POST', path: `/api/admin/jobs/${job}/trigger` })),
        fc
          .constantFrom(...JOBS, STORED_JOB)
          .map((job) => ({ method: 'GET', path: `/api/admin/jobs/${job}/runs` })),
        fc.constant({ method: 'GET', path: '/api/admin/jobs' }),
        fc.constant({ method: 'GET', path: `/api/admin/jobs/reextract_image/runs/${runId}/findings` }),
      ),
      query,
      body,
      contentType: fc.constantFrom('application/json', 'application/json; charset=utf-8', undefined),
    });
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(focused, async (r) => {
        const headers = new Headers({ authorization: `Bearer ${token}` });
        if (r.contentType) headers.set('content-type', r.contentType);
        const sendsBody = r.target.method === 'POST' && r.body !== undefined;
        const res = await server.app.fetch(
          new Request(`http://127.0.0.1${r.target.path}${r.query}`, {
            method: r.target.method,
            headers,
            ...(sendsBody ? { body: r.body } : {}),
          }),
        );
        const text = await res.text();
        const what = `${r.target.method} ${r.target.path}${r.query.slice(0, 200)} body=${(r.body ?? '').slice(0, 80)}`;
        expect(res.status, `${what} → ${text.slice(0, 300)}`).toBeLessThan(500);
        expect(Buffer.byteLength(text), `${what}: response over 1 MiB`).toBeLessThanOrEqual(MiB);
        if (res.status >= 400) {
          const code = (JSON.parse(text) as { error: { code: string } }).error.code;
          expect(DOCUMENTED_CODES as readonly string[], what).toContain(code);
        }
        seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
      }),
      {
        numRuns: NUM_RUNS,
        seed: Number(process.env['OXICLOUD_FAULT_FUZZ_SEED'] ?? 20_251_201),
        endOnFailure: true,
      },
    );
    await server.engine.whenIdle();
    console.info('admin fuzz (authenticated): statuses', Object.fromEntries(seen));
    for (const status of [200, 202, 400, 413])
      expect(seen.get(status) ?? 0, `status ${status} seen`).toBeGreaterThan(0);
  });

  const send = (path: string, init: RequestInit = {}) =>
    server.app.fetch(
      new Request(`http://127.0.0.1${path}`, {
        ...init,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
      }),
    );

  it('answers every input the issue names with a 4xx JSON error saying what is allowed', async () => {
    const { run_id } = (await (
      await send('/api/admin/jobs/reextract_image/trigger', { method: 'POST' })
    ).json()) as {
      run_id: string;
    };
    await server.engine.whenIdle();
    const cases: Array<[string, RequestInit, number, string, RegExp]> = [
      [
        `/api/admin/jobs/reextract_image/runs/${run_id}/findings?kind=%00`,
        {},
        400,
        'VALIDATION_FAILED',
        /printable text/,
      ],
      [
        '/api/admin/jobs/files_consistency/trigger',
        { method: 'POST', body: '{"x":"a\\u0000b"}' },
        400,
        'INVALID_PARAMS',
        /NUL/,
      ],
      [
        '/api/admin/jobs/files_consistency/trigger',
        { method: 'POST', body: '{"x":"\\ud800"}' },
        400,
        'INVALID_PARAMS',
        /lone surrogate/,
      ],
      [
        '/api/admin/jobs/trash_cleanup/trigger',
        { method: 'POST', body: '{"x":"\\ud800"}' },
        400,
        'INVALID_PARAMS',
        /lone surrogate/,
      ],
      [
        '/api/admin/jobs/files_consistency/trigger',
        { method: 'POST', body: `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}` },
        413,
        'PAYLOAD_TOO_LARGE',
        /larger than 64 KiB/,
      ],
      [
        '/api/admin/jobs/files_consistency/trigger',
        { method: 'POST', body: `${'['.repeat(10_000)}${']'.repeat(10_000)}` },
        400,
        'INVALID_PARAMS',
        /more than 8 levels deep/,
      ],
      [
        '/api/admin/jobs/storage_migration/trigger',
        { method: 'POST', body: TEN_MB_BODY },
        413,
        'PAYLOAD_TOO_LARGE',
        /64 KiB/,
      ],
      [
        '/api/admin/jobs/files_consistency/trigger',
        { method: 'POST', body: '{"x":1}' },
        400,
        'INVALID_PARAMS',
        /unknown key "x"; allowed: force, deep, batch_size, throttle_ms/,
      ],
      [
        '/api/admin/jobs/files_consistency/trigger',
        { method: 'POST', body: '{"batch_size":"500"}' },
        400,
        'INVALID_PARAMS',
        /batch_size: expected an integer/,
      ],
      [
        '/api/admin/jobs/files_consistency/trigger',
        { method: 'POST', body: '{"force":"maybe"}' },
        400,
        'INVALID_PARAMS',
        /force must be true or false/,
      ],
      [
        '/api/admin/jobs/dedup_gc/trigger',
        { method: 'POST', body: '{"force":"maybe"}' },
        400,
        'INVALID_PARAMS',
        /force must be true or false/,
      ],
      [
        '/api/admin/jobs/storage_migration/trigger',
        { method: 'POST', body: '{"target":"s3","x":1}' },
        400,
        'INVALID_PARAMS',
        /x/,
      ],
      [
        '/api/admin/jobs/dedup_gc/trigger?force=maybe',
        { method: 'POST' },
        400,
        'VALIDATION_FAILED',
        /"true" or "false"/,
      ],
      [
        '/api/admin/jobs/dedup_gc/trigger?force=',
        { method: 'POST' },
        400,
        'VALIDATION_FAILED',
        /"true" or "false"/,
      ],
      ...['0x10', '0b11', '%205', '', '1e1', '-1'].flatMap(
        (v): Array<[string, RequestInit, number, string, RegExp]> => [
          [
            `/api/admin/jobs/${STORED_JOB}/runs?limit=${v}`,
            {},
            400,
            'VALIDATION_FAILED',
            /plain decimal integer/,
          ],
          [
            `/api/admin/jobs/${STORED_JOB}/runs?offset=${v}`,
            {},
            400,
            'VALIDATION_FAILED',
            /plain decimal integer/,
          ],
        ],
      ),
    ];
    const runsBefore = Number(
      (await db.pool.query('SELECT count(*) AS n FROM jobs.recoverable_runs')).rows[0].n,
    );
    for (const [path, init, status, code, message] of cases) {
      const res = await send(path, init);
      const what = `${init.method ?? 'GET'} ${path.slice(0, 120)} ${String(init.body ?? '').slice(0, 60)}`;
      expect(res.status, what).toBe(status);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code, what).toBe(code);
      expect(body.error.message, what).toMatch(message);
    }
    const runsAfter = Number(
      (await db.pool.query('SELECT count(*) AS n FROM jobs.recoverable_runs')).rows[0].n,
    );
    expect(runsAfter, 'no refused trigger stored a run').toBe(runsBefore);
  });

  it('lists 500 stored runs with huge params under 1 MiB; the detail still has them whole', async () => {
    const res = await send(`/api/admin/jobs/${STORED_JOB}/runs?limit=500`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MiB);
    const runs = JSON.parse(text) as Array<{ run_id: string; truncated: boolean; params?: unknown }>;
    expect(runs).toHaveLength(500);
    expect(runs.every((run) => run.truncated && run.params === undefined)).toBe(true);
    const jobs = await send('/api/admin/jobs');
    expect(Buffer.byteLength(await jobs.text())).toBeLessThanOrEqual(MiB);
    const detail = (await (await send(`/api/admin/jobs/${STORED_JOB}/runs/${runs[0]?.run_id}`)).json()) as {
      params: { target: string };
    };
    expect(detail.params.target).toHaveLength(20_000);
  });
});

describe('GET /healthz with Postgres away', () => {
  it('reports the database as away (503) without its address or the driver text', async () => {
    const closedPort = await freePort();
    const pool = new pg.Pool({
      connectionString: `postgres://oxicloud:secret@127.0.0.1:${closedPort}/oxicloud`,
      connectionTimeoutMillis: 1_000,
    });
    pool.on('error', () => {});
    const silent: Logger = { info() {}, warn() {}, error() {}, debug() {} };
    const app = createAdminApp({
      jobs: new JobRegistry({ logger: silent }),
      users: { findById: async () => null },
      jwtSecret: 'x'.repeat(32),
      logger: silent,
      health: pgHealthProbe(pool),
    });
    try {
      // The driver's own text names the address; the public route must not.
      expect((await pgHealthProbe(pool).database()) as { error?: string }).toMatchObject({
        ok: false,
        error: expect.stringContaining(`127.0.0.1:${closedPort}`),
      });
      const res = await app.request('/healthz');
      expect(res.status).toBe(503);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({
        service: 'oxijobs',
        status: 'degraded',
        database: { ok: false, error: 'connection refused' },
      });
      expect(text).not.toMatch(INTERNAL_ADDRESS);
      expect(text).not.toContain(String(closedPort));
    } finally {
      await pool.end();
    }
  });
});
