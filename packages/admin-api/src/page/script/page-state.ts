/**
 * What the views of the `/admin/jobs` page share: the job listing of the
 * last refresh and the open drawer (its job, tab, the run picked, and each
 * part's data as last loaded with the key it was rendered with). Each view
 * keeps the rest of its state to itself.
 */
import type {
  FindingsPageJson,
  JobSummaryJson,
  RunListEntryJson,
  RunSummaryJson,
} from '../../routes/wire-types.ts';

/** The drawer's tabs. */
export type Tab = 'overview' | 'findings';

/** A run as the page holds it: a listing entry, or the whole run once fetched. */
export type AnyRun = RunListEntryJson | RunSummaryJson;

/** The open drawer: one job, the run picked, and the data of its runs and findings. */
export interface Drawer {
  readonly name: string;
  readonly opener: HTMLElement | null;
  tab: Tab;
  runId: string | null;
  explicitRun: boolean;
  runs: RunListEntryJson[] | null;
  run: AnyRun | null;
  runsKey: string;
  runDetailKey: string;
  findings: FindingsPageJson | null;
  findingsKey: string;
  findingsStatus: string | null;
  severity: string;
  limit: number;
  findingsError: string;
  runsError: string;
}

export const state: { jobs: JobSummaryJson[]; drawer: Drawer | null } = {
  jobs: [],
  drawer: null,
};
