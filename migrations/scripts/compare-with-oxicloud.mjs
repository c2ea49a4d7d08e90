#!/usr/bin/env node
/**
 * The one-off comparison of OXICLOUD_SCHEMA (src/oxicloud-schema/) with the
 * real thing: applies an OxiCloud checkout's migrations, in version order, to
 * a fresh scratch database, reads its catalog with readSchema and prints
 * diffSchema's lines (none: the description matches). Nothing of OxiCloud's
 * is copied: its files are read from the checkout you name and sent to the
 * scratch database only.
 *
 * How to run it:
 *
 *   # 1. OxiCloud's migrations (the drive-era fork):
 *   git clone https://github.com/EdouardVanbelle/OxiCloud /tmp/oxicloud
 *   # 2. A Postgres with pg_trgm, ltree and citext (contrib), e.g. Debian's PostgreSQL 15,
 *   #    a throwaway cluster (as a non-root user):
 *   /usr/lib/postgresql/15/bin/initdb -D /tmp/pg15 -U postgres --auth=trust
 *   /usr/lib/postgresql/15/bin/pg_ctl -D /tmp/pg15 -o '-p 55432 -k /tmp' -l /tmp/pg15.log start
 *   # 3. This package's build, then the comparison:
 *   pnpm exec turbo run build --filter=@oxicloud/migrations
 *   node migrations/scripts/compare-with-oxicloud.mjs /tmp/oxicloud/migrations \
 *     --admin-url postgres://postgres@127.0.0.1:55432/postgres
 *
 * Options: `--admin-url URL` (or OXICLOUD_COMPARE_ADMIN_URL): a superuser
 * connection to any database of the server; the script creates
 * `oxicloud_compare_<time>` there and drops it after (`--keep` keeps it).
 * `--commit SHA` names the OxiCloud commit in the report when the folder is
 * not a git checkout.
 *
 * How the files are applied (as OxiCloud's sqlx does): in filename order,
 * each in its own transaction, except a file whose first line is
 * `-- no-transaction` (sent alone, outside any transaction: its
 * `CREATE INDEX CONCURRENTLY` needs that). A file with its own
 * `BEGIN; … COMMIT;` ends the outer transaction early; Postgres's warnings
 * about it are counted, not fatal. `_sqlx_migrations` is not made (sqlx's
 * bookkeeping, in `public`, outside the described schemas).
 *
 * Exit code: 0 when there is no difference, 1 when there are, 2 when the
 * comparison could not run (the message says why).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const dist = new URL('../dist/index.js', import.meta.url);

function fail(message) {
  console.error(`compare-with-oxicloud: ${message}`);
  process.exit(2);
}

const { values, positionals } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        'admin-url': { type: 'string' },
        commit: { type: 'string' },
        keep: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    return fail(
      `${error.message}; usage: compare-with-oxicloud.mjs <oxicloud>/migrations --admin-url URL [--keep] [--commit SHA]`,
    );
  }
})();

const folder = positionals[0];
if (positionals.length !== 1 || !folder) {
  fail("give one argument, the path of an OxiCloud checkout's migrations/ folder");
}
if (!existsSync(folder))
  fail(`${folder} does not exist; give the path of an OxiCloud checkout's migrations/ folder`);
const adminUrl = values['admin-url'] ?? process.env.OXICLOUD_COMPARE_ADMIN_URL;
if (!adminUrl) {
  fail('no server: pass --admin-url postgres://user@host:port/postgres (or set OXICLOUD_COMPARE_ADMIN_URL)');
}
if (!existsSync(dist))
  fail(
    'no build of @oxicloud/migrations: run `pnpm exec turbo run build --filter=@oxicloud/migrations` first',
  );

const { OXICLOUD_SCHEMA, diffSchema, readSchema } = await import(dist.href);
const { default: pg } = await import('pg');

const files = readdirSync(folder)
  .filter((name) => /^\d+_.+\.sql$/.test(name))
  .sort((a, b) => {
    const va = BigInt(a.split('_')[0]);
    const vb = BigInt(b.split('_')[0]);
    return va < vb ? -1 : va > vb ? 1 : 0;
  });
if (files.length === 0)
  fail(`${folder} holds no <version>_<name>.sql file; is it OxiCloud's migrations/ folder?`);

const commit = (() => {
  if (values.commit) return values.commit;
  try {
    return execFileSync('git', ['-C', resolve(folder), 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown (not a git checkout; pass --commit)';
  }
})();

const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect().catch((error) => fail(`cannot connect to ${adminUrl}: ${error.message}`));
const { rows: available } = await admin.query(
  "SELECT name FROM pg_available_extensions WHERE name IN ('pg_trgm', 'ltree', 'citext')",
);
const missing = ['pg_trgm', 'ltree', 'citext'].filter((e) => !available.some((r) => r.name === e));
if (missing.length > 0) {
  await admin.end();
  fail(
    `the server lacks the extension(s) ${missing.join(', ')} that OxiCloud's migrations create; use a Postgres with contrib`,
  );
}
const { rows: version } = await admin.query("SELECT current_setting('server_version') AS v");
const database = `oxicloud_compare_${Date.now()}`;
await admin.query(`CREATE DATABASE ${database}`);

const url = new URL(adminUrl);
url.pathname = `/${database}`;
const client = new pg.Client({ connectionString: url.href });
let warnings = 0;
let code = 0;
try {
  await client.connect();
  client.on('notice', (notice) => {
    if (notice.severity === 'WARNING') warnings++;
  });
  for (const name of files) {
    const sql = readFileSync(join(folder, name), 'utf8');
    const ownTransaction = sql.split('\n', 1)[0]?.trim() === '-- no-transaction';
    try {
      if (ownTransaction) await client.query(sql);
      else {
        await client.query('BEGIN');
        await client.query(sql);
        await client.query('COMMIT');
      }
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw new Error(`${name} failed: ${error.message}`);
    }
  }
  const live = await readSchema(client, OXICLOUD_SCHEMA.schemas);
  const lines = diffSchema(OXICLOUD_SCHEMA, live);
  console.log(
    `OxiCloud ${commit}: ${files.length} migrations (${files[0]} … ${files.at(-1)}) applied to PostgreSQL ${version[0].v}` +
      ` (${warnings} warning(s) from Postgres).`,
  );
  if (lines.length === 0) console.log('No difference between OXICLOUD_SCHEMA and the migrated database.');
  else {
    console.log(`${lines.length} difference(s), described → found:`);
    for (const line of lines) console.log(`  ${line}`);
    code = 1;
  }
} catch (error) {
  console.error(`compare-with-oxicloud: ${error.message}`);
  code = 2;
} finally {
  await client.end().catch(() => undefined);
  if (values.keep) console.log(`Kept the scratch database ${database}.`);
  else await admin.query(`DROP DATABASE IF EXISTS ${database}`).catch(() => undefined);
  await admin.end();
}
process.exit(code);
