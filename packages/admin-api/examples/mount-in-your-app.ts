// Quick start of @oxicloud/admin-api: the admin API inside your own hono app,
// behind your own auth middleware. Needs DATABASE_URL. Run: npx tsx examples/mount-in-your-app.ts
import { type AdminUserLookup, createAdminApp, signAdminToken } from '@oxicloud/admin-api';
import { migrate as migrateFindings, PgFindingStore } from '@oxicloud/consistency';
import { migrate as migrateRuns, RecoverableEngine } from '@oxicloud/recoverable';
import { JobRegistry, ok, silentLogger } from '@oxicloud/scheduler';
import { Hono } from 'hono';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env['DATABASE_URL'] });
await migrateRuns(pool);
await migrateFindings(pool);

const jobs = new JobRegistry({ logger: silentLogger });
jobs.register({ name: 'nightly_report', run: async () => ok(1) }, null, null);

// Your users: the admin API asks for the user a token names (role 'admin' gets in).
const admin = { id: '0190a000-0000-7000-8000-0000000000aa', username: 'ops', role: 'admin' as const };
const users: AdminUserLookup = { findById: async (id) => (id === admin.id ? admin : null) };
const jwtSecret = 'a-secret-of-at-least-thirty-two-bytes!!';

const adminApp = createAdminApp({
  jobs,
  runs: new RecoverableEngine({ pool }),
  findings: new PgFindingStore({ pool }),
  users,
  jwtSecret,
  logger: silentLogger,
});

// Your app, your middleware in front: here an internal network key.
const app = new Hono();
app.use('/api/admin/*', async (c, next) => {
  if (c.req.header('x-internal-key') !== 'let-me-in') return c.json({ error: 'internal only' }, 403);
  await next();
});
app.get('/', (c) => c.text('my service'));
app.route('/', adminApp);

const token = await signAdminToken({ secret: jwtSecret, user: admin, expiresInSeconds: 600 });
const refused = await app.request('/api/admin/jobs', { headers: { authorization: `Bearer ${token}` } });
const listed = await app.request('/api/admin/jobs', {
  headers: { authorization: `Bearer ${token}`, 'x-internal-key': 'let-me-in' },
});
const body = (await listed.json()) as Array<{ name: string }>;
await pool.end();

if (refused.status !== 403 || listed.status !== 200 || !body.some((j) => j.name === 'nightly_report')) {
  throw new Error(`unexpected: ${JSON.stringify({ refused: refused.status, listed: listed.status, body })}`);
}
console.log(`admin-api quick start ok: ${body.length} job(s) listed behind your own middleware`);
