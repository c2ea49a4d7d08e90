import { CLUSTER_SCHEMA } from '@oxicloud/cluster';
import { CONSISTENCY_SCHEMA } from '@oxicloud/consistency';
import { type PackageSchema, RECOVERABLE_SCHEMA } from '@oxicloud/recoverable';

/**
 * The `jobs` tables owned by the packages that use them, applied by the
 * server after its own SQL files through each package's own versioned runner
 * (the SQL files ship in the packages' tarballs: one source of truth), in
 * dependency order: findings reference runs; the cluster tables
 * (`@oxicloud/cluster`: nodes, periodic state and history) stand alone.
 *
 * `jobs.job_registrations` stays a server migration (`0010`): only the
 * server's freshness code uses it.
 */
export const PACKAGE_SCHEMAS: readonly PackageSchema[] = [
  RECOVERABLE_SCHEMA,
  CONSISTENCY_SCHEMA,
  CLUSTER_SCHEMA,
];

/**
 * Server migrations whose SQL moved into a package's schema. A database that
 * recorded them is adopted as is (the packages' files are idempotent and
 * start with the same statements); they are never applied again, and a file
 * of that name still in `sql/` is skipped.
 *
 * - `0005_jobs.sql`: `jobs.recoverable_runs` → `@oxicloud/recoverable` version 1,
 *   `jobs.run_findings` → `@oxicloud/consistency` version 1
 * - `0008_run_history.sql` → `@oxicloud/recoverable` version 2
 * - `0009_run_kit.sql` (the run kit's `attempt`, `attempt_started_at`) → `@oxicloud/recoverable` version 3
 */
export const RETIRED_MIGRATIONS: ReadonlySet<string> = new Set([
  '0005_jobs.sql',
  '0008_run_history.sql',
  '0009_run_kit.sql',
]);
