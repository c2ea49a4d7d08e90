import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, freePort, type TestDatabase } from '@oxicloud/test-support';
import { type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, cleanEnv, runCli, startCli, waitForStatus } from '../cli-process.js';

/** Debian's chromium, installed by scripts/setup-system.sh. */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];
/** Screenshots of the main states (the folder is gitignored). */
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/admin-repair/', import.meta.url));
/** The README's screenshots. */
const SCREENSHOTS = fileURLToPath(new URL('../../../../docs/screenshots/', import.meta.url));
const UI_TIMEOUT = 20_000;
/** The checks that find the seeded faults. */
const CHECKS = ['files_consistency', 'folders_consistency'] as const;

interface PlanJson {
  id: string;
  hash: string;
  state: string;
  lines: Array<{
    findingId: string;
    fingerprint: { kind: string };
    choices?: Array<{ id: string }>;
    status: string;
    verified?: string | null;
  }>;
}

/**
 * The repair panel of /admin/jobs in a real Chromium, against a real
 * `oxijobs serve` on a fresh database of OxiCloud's domain (the server's
 * default; `oxijobs seed` writes an OxiCloud dataset) seeded with repairable faults (two
 * live files under trashed folders: a choice each; two folders with a wrong
 * path): the checks find them, the operator selects them, plans, chooses,
 * meets a plan changed behind the page's back (409, reloaded), applies, and
 * watches each line become applied and re-verified fixed.
 */
describe('the repair panel of /admin/jobs in Chromium against oxijobs serve', () => {
  let db: TestDatabase;
  let dataDir: string;
  let profileDir: string;
  let server: CliProcess;
  let base: string;
  let token: string;
  let context: BrowserContext;
  let page: Page;
  let planId: string;
  const pageErrors: string[] = [];

  const api = async (path: string, body?: unknown): Promise<Response> =>
    fetch(`${base}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const panel = (): Locator => page.locator('#repair-view');
  const lineRows = (): Locator => page.locator('#repair-lines tbody tr');
  const shownHash = (): Promise<string | null> => panel().locator('#repair-hash').getAttribute('data-hash');

  async function runCheck(name: string): Promise<void> {
    const started = await api(`/api/admin/jobs/${name}/trigger`, {});
    expect(started.status, name).toBe(202);
    const { run_id } = (await started.json()) as { run_id: string };
    // A hook cannot use expect.poll: poll by hand.
    const deadline = Date.now() + 60_000;
    let status = '';
    while (Date.now() < deadline) {
      const run = await api(`/api/admin/jobs/${name}/runs/${run_id}`);
      status = ((await run.json()) as { status: string }).status;
      if (status !== 'Running' && status !== 'CancelRequested') break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(status, `${name} run ${run_id}`).toBe('Completed');
  }

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `the repair panel browser test needs Chromium at ${CHROMIUM}; install it with scripts/setup-system.sh (as root: apt-get install chromium) and run the tests again`,
      );
    }
    mkdirSync(ARTIFACTS, { recursive: true });
    db = await createTestDatabase({ domain: 'oxicloud' });
    dataDir = join(tmpdir(), `oxijobs-admin-repair-${process.pid}`);
    mkdirSync(dataDir, { recursive: true });
    const httpPort = await freePort();
    base = `http://127.0.0.1:${httpPort}`;
    const env = cleanEnv({
      DATABASE_URL: db.url,
      OXICLOUD_DATA_DIR: dataDir,
      OXICLOUD_HTTP_PORT: String(httpPort),
      OXICLOUD_LOG_LEVEL: 'warn',
      OXICLOUD_TRASH_CLEANUP_INTERVAL_HOURS: '24',
      OXICLOUD_STORAGE_USAGE_RECONCILE_INTERVAL_SECONDS: '600',
    });
    server = startCli(['serve'], env);
    await waitForStatus(`${base}/healthz`, 200, { process: server, timeoutMs: 60_000 });
    const seed = await runCli(
      [
        'seed',
        ...['--users', '6', '--files-per-user', '30', '--seed', '21'],
        ...['--faults', 'live_file_under_trashed_folder,wrong_folder_path', '--faults-per-kind', '2'],
      ],
      env,
    );
    expect(seed.stderr).not.toContain('oxijobs:');
    expect(seed.code).toBe(0);
    const minted = await runCli(['token', '--user', 'admin', '--expires-in', '1h'], env);
    expect(minted.code).toBe(0);
    token = minted.stdout.trim().split('\n').at(-1)!;
    for (const check of CHECKS) await runCheck(check);

    profileDir = mkdtempSync(join(tmpdir(), 'admin-repair-chromium-'));
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 900 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(UI_TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(String(error)));
  }, 240_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await Promise.race([server.exited, new Promise((r) => setTimeout(r, 15_000))]);
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
    await db?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
  });

  it('signs in and lists the open findings the checks found, each with a checkbox', async () => {
    await page.goto(`${base}/admin/jobs`);
    await page.getByLabel('Admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#f-state').selectOption('open');
    await page.locator('#findings-filters button[type="submit"]').click();
    const rows = page.locator('#tracked-findings-table tbody tr');
    await expect.poll(() => rows.count()).toBe(4);
    const kinds = await rows.evaluateAll((trs) => trs.map((tr) => tr.querySelectorAll('td')[4]?.textContent));
    expect(kinds.sort()).toEqual([
      'parent_folder_trashed',
      'parent_folder_trashed',
      'path_mismatch',
      'path_mismatch',
    ]);
    expect(await page.getByRole('button', { name: 'Plan repair for the selected (0)' }).isDisabled()).toBe(
      true,
    );
  });

  it('refuses to plan by an empty filter with a message that says what to set', async () => {
    await page.getByRole('button', { name: 'Plan repair for the filter' }).click();
    // The page writes the message once the click is handled: wait for it, not for a clock.
    await expect
      .poll(() => page.locator('#findings-error').textContent())
      .toMatch(/Set a check, kind or severity first/);
    expect(await panel().isVisible()).toBe(false);
  });

  it('plans one finding from its detail', async () => {
    const row = page.locator('#tracked-findings-table tbody tr', { hasText: 'path_mismatch' }).first();
    const findingId = await row.getAttribute('data-finding');
    await row.locator('td').nth(4).click();
    await page.getByRole('button', { name: 'Plan repair of this finding' }).click();
    await expect.poll(() => lineRows().count()).toBe(1);
    expect(await lineRows().first().getAttribute('data-finding')).toBe(findingId);
    expect(await lineRows().first().locator('td').nth(3).textContent()).toBe('recompute_folder_path');
    expect(await page.locator('#repair-status').textContent()).toMatch(/Nothing|Planned/);
  });

  it('plans the selected findings: one line each, with action, before → after and the rows it also changes', async () => {
    for (const box of await page.locator('#tracked-findings-table input[type="checkbox"]').all()) {
      await box.check();
    }
    const plan = page.getByRole('button', { name: 'Plan repair for the selected (4)' });
    await plan.click();
    await lineRows().nth(3).waitFor();
    expect(await lineRows().count()).toBe(4);
    expect(await panel().locator('[data-state]').getAttribute('data-state')).toBe('planned');
    const paths = panel().locator('#repair-lines tbody tr', { hasText: 'path_mismatch' });
    expect(await paths.count()).toBe(2);
    for (const row of await paths.all()) {
      expect(await row.locator('td').nth(4).textContent()).toMatch(/→/);
      expect(await row.getAttribute('data-outcome')).toBe('pending');
    }
    // The lines that offer a choice wait for it: the panel says so.
    const choosing = panel().locator('#repair-lines tbody tr[data-outcome="pending"] select');
    expect(await choosing.count()).toBe(2);
    expect(await panel().locator('#repair-unchosen').textContent()).toMatch(/2 line\(s\) offer a choice/);
    // Who planned it, by username (the token's user), not by user id.
    expect(await panel().locator('dt:text-is("Planned by") + dd').textContent()).toMatch(/^admin /);
  });

  it('takes a choice: the plan and its hash change', async () => {
    const before = await shownHash();
    const first = page.getByLabel(/^Choice for parent_folder_trashed/).first();
    await first.selectOption('trash_child');
    await expect.poll(shownHash).not.toBe(before);
    expect(await page.locator('#repair-status').textContent()).toMatch(/Chose trash_child/);
    expect(await first.inputValue()).toBe('trash_child');
  });

  it('refuses to apply a plan changed behind the page (409), says so and shows the plan again', async () => {
    const hashOnPage = await shownHash();
    const id = await panel().locator('dl.fields code').first().textContent();
    expect(new URL(page.url()).searchParams.get('repair')).toBe(id);
    planId = id!;
    const plan = (await (await api(`/api/admin/repairs/${id}`)).json()) as PlanJson;
    expect(plan.hash).toBe(hashOnPage);
    const other = plan.lines.find((l) => l.choices && !(l as { choice?: string }).choice);
    expect(other).toBeDefined();
    // Another operator (or the CLI) makes the last choice: the hash the page shows is stale now.
    const changed = await api(`/api/admin/repairs/${id}/choices`, {
      choices: { [other!.findingId]: 'trash_child' },
    });
    expect(changed.status).toBe(200);
    const fresh = ((await changed.json()) as PlanJson).hash;

    const refused = page.waitForResponse((r) => r.url().endsWith('/apply'));
    await page.getByRole('button', { name: 'Apply this plan' }).click();
    expect((await refused).status()).toBe(409);
    await expect
      .poll(() => page.locator('#repair-error').textContent())
      .toMatch(/Not applied: the plan is not the one shown \(REPAIR_PLAN_CONFLICT \(409\)/);
    await expect.poll(shownHash).toBe(fresh);
    expect(await page.locator('#repair-error').textContent()).toContain(`it is now ${fresh.slice(0, 12)}`);
    expect(await panel().locator('select[data-choice-for] >> nth=1').inputValue()).toBe('trash_child');
    expect((await (await api(`/api/admin/repairs/${id}`)).json()) as PlanJson).toMatchObject({
      state: 'planned',
    });
  });

  it('applies with the hash shown, follows the run, and shows every line applied and re-verified fixed', async () => {
    await page.getByRole('button', { name: 'Apply this plan' }).click();
    await panel().locator('[data-state="applied"]').waitFor({ timeout: 60_000 });
    await expect
      .poll(() => lineRows().evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-outcome'))))
      .toEqual(['fixed', 'fixed', 'fixed', 'fixed']);
    expect(await panel().locator('.badge[data-status="Completed"]').count()).toBe(1);
    expect(await panel().locator('dt:text-is("Approved by") + dd').textContent()).toBe('admin');
    expect(await page.locator('#repair-status').textContent()).toMatch(
      /Done: 4 lines: 4 applied \(4 fixed\)/,
    );
    expect(await panel().getByRole('link', { name: 'Open the run in Jobs' }).getAttribute('href')).toMatch(
      /^\/admin\/jobs\/repair\/runs\/[0-9a-f-]{36}$/,
    );
    // The findings are fixed by the repair: nothing open is left.
    const open = (await (await api('/api/admin/findings?state=open')).json()) as { findings: unknown[] };
    expect(open.findings).toEqual([]);
    await page.locator('#repair-view').screenshot({ path: join(ARTIFACTS, '08-repair.png') });
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.locator('#repair-view').screenshot({ path: join(SCREENSHOTS, '08-repair.png') });
    expect(pageErrors).toEqual([]);
  }, 90_000);

  it('opens a plan from its address (?repair=<plan id>) with its outcome, and says so for an unknown plan', async () => {
    await page.goto(`${base}/admin/jobs?repair=${planId}`);
    await panel().locator('[data-state="applied"]').waitFor();
    expect(await lineRows().evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-outcome')))).toEqual([
      'fixed',
      'fixed',
      'fixed',
      'fixed',
    ]);
    await page.getByRole('button', { name: 'Close the repair plan' }).click();
    expect(await panel().isVisible()).toBe(false);
    expect(new URL(page.url()).searchParams.has('repair')).toBe(false);
    await page.goto(`${base}/admin/jobs?repair=01a00000-0000-7000-8000-000000000000`);
    await expect
      .poll(() => page.locator('#repair-error').textContent())
      .toMatch(/REPAIR_PLAN_NOT_FOUND \(404\)/);
    expect(pageErrors).toEqual([]);
  });
});
