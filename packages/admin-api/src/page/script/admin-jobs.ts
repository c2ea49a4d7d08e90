/**
 * The script of the `/admin/jobs` page: one ES module, no framework, bundled
 * by the build (build/page-bundle.ts) and served at
 * `/admin/jobs/assets/admin-jobs.js`. This entry wires the views and starts
 * the page: signed in (a token in `sessionStorage`), it shows the jobs and
 * polls; otherwise the sign-in form.
 *
 * Rules it keeps: every datum comes from `/api/admin/jobs*` (and
 * `/api/admin/nodes`, `/api/admin/findings*`, `/api/admin/repairs*`) with the token
 * from `sessionStorage` (`api.ts`); data is written with `textContent` (the `h()`
 * helper), never as HTML; a 401/403 signs the operator out with a message.
 * The shapes it reads are the admin API's own (`wire-types.ts`).
 *
 * The views: `sign-in.ts`, `jobs-table.ts` (with `job-status.ts` and the
 * actions of `job-actions.ts`), `polling.ts`, `address.ts`, the drawer
 * (`drawer.ts`, `runs-view.ts`, `run-findings.ts`), the health cards
 * (`health-view.ts`), the findings list (`findings-view.ts`), the repair
 * panel (`repair-view.ts`) and the nodes (`cluster.ts`).
 */
import { parseRoute } from './address.ts';
import { api, startApi, token } from './api.ts';
import { startDrawer } from './drawer.ts';
import { startFindingsView } from './findings-view.ts';
import { startHealthView } from './health-view.ts';
import { startJobActions } from './job-actions.ts';
import { setPendingRoute } from './jobs-table.ts';
import { refresh, startPolling } from './polling.ts';
import { startRepairView } from './repair-view.ts';
import { startRunFindings } from './run-findings.ts';
import { authFailed, showJobs, showSignIn, startSignIn } from './sign-in.ts';

/** The findings views' requests: below `/api/admin/findings`. */
function findingsApi<T>(path: string, init?: { method: 'POST'; body: unknown }): Promise<T> {
  return api<T>(path, {
    method: init?.method ?? 'GET',
    base: '/api/admin/findings',
    ...(init ? { body: init.body } : {}),
  });
}

startApi(authFailed);
startJobActions(refresh);
startHealthView(findingsApi);
startFindingsView(findingsApi);
startRepairView((path, init) =>
  api(path, { method: init?.method ?? 'GET', ...(init ? { body: init.body } : {}) }),
);
startSignIn();
startPolling();
startDrawer();
startRunFindings();

/* ---------- start ---------- */

setPendingRoute(parseRoute());
if (token()) void showJobs(false);
else showSignIn('');
