/**
 * The JSON the admin API answers (docs/admin-api.md), as this client reads
 * it. Every field a newer or older server may leave out is optional: the
 * client shows what it gets and never fails on a missing field.
 */

/** `JobOutcome`: the result of one Part 1 dispatch. */
export type ApiJobOutcome =
  | { readonly kind: 'ok'; readonly count: number; readonly extra?: Readonly<Record<string, unknown>> }
  | { readonly kind: 'err'; readonly message: string };

/** `last_outcome` of a listed job. */
export interface ApiLastOutcome {
  readonly at: string;
  readonly outcome: ApiJobOutcome;
  readonly cause?: string;
  readonly elapsed_ms?: number;
  readonly source?: string;
}

/** Progress of a recoverable run. */
export interface ApiRunProgress {
  readonly processed: number;
  readonly total: number | null;
  readonly fraction: number | null;
  readonly rate_per_second: number | null;
  readonly eta_seconds: number | null;
}

/** The status column of a recoverable run. */
export type ApiRunStatus = 'Running' | 'Paused' | 'CancelRequested' | 'Completed' | 'Failed';

/** `RunSummary` (the run detail) or `RunListEntry` (a listing's bounded run): one recoverable run. */
export interface ApiRunSummary {
  readonly run_id: string;
  readonly job_name: string;
  readonly status: ApiRunStatus | string;
  readonly started_at: string;
  readonly last_progress_at?: string;
  readonly completed_at?: string | null;
  readonly cursor_hex?: string | null;
  readonly stats?: Readonly<Record<string, unknown>>;
  /** The full params: in the run detail (`GET …/runs/{id}`) only. */
  readonly params?: Readonly<Record<string, unknown>>;
  /** Listings (`GET …/runs`, `latest_run`): the params bounded to 256 bytes of JSON. */
  readonly params_summary?: Readonly<Record<string, unknown>>;
  /** Listings: at most 200 characters. */
  readonly error_message?: string | null;
  /** Why the run is paused, while it is Paused. */
  readonly pause_reason?: string | null;
  readonly pauses?: ReadonlyArray<{ readonly at: string; readonly reason: string }>;
  /** Time the run actually ran, and time from start to end (or now). */
  readonly active_ms?: number;
  readonly wall_ms?: number;
  readonly progress?: ApiRunProgress;
  /** Listings: whether `params_summary`, `stats`, `error_message` or `cursor_hex` were cut (the detail has them whole). */
  readonly truncated?: boolean;
}

/** One entry of `GET /api/admin/jobs`. */
export interface ApiJob {
  readonly name: string;
  /** `periodic` (Part 1 only) or `recoverable` (Part 2); absent on servers before Part 2. */
  readonly kind?: 'periodic' | 'recoverable' | string;
  readonly interval_ms: number | null;
  readonly timeout_ms?: number | null;
  readonly next_run_at: string | null;
  readonly running: boolean;
  readonly running_since?: string | null;
  readonly last_outcome: ApiLastOutcome | null;
  readonly supports_deep?: boolean;
  /** The job's consistency-check declaration; `null` when it is not a check; absent on older servers. */
  readonly check?: { readonly order: number; readonly count_meaning: string } | null;
  readonly latest_run?: ApiRunSummary | null;
  /** Set when the job has no success within 1.5 × its expected cadence; absent on older servers. */
  readonly overdue?: {
    readonly deep: boolean;
    readonly max_age_ms: number;
    readonly last_success_at: string | null;
    readonly overdue_since: string;
  } | null;
}

/** `POST …/trigger` of a Part 1 job (200), or with `wait=false` (202 `accepted`). */
export interface ApiOutcomeEnvelope {
  readonly ok: boolean;
  readonly outcome?: ApiJobOutcome;
  readonly accepted?: boolean;
}

/** `POST …/trigger` of a recoverable job (202). */
export interface ApiRunStarted {
  readonly ok: boolean;
  readonly run_id: string;
  readonly status: ApiRunStatus | string;
  readonly resumed?: boolean;
  readonly already_running?: boolean;
}

/** `POST …/cancel` (200). */
export interface ApiCancelled {
  readonly run_id: string;
  readonly status: ApiRunStatus | string;
}

/** One finding of a run. */
export interface ApiFinding {
  readonly id: string;
  readonly kind: string;
  readonly severity: string;
  readonly resource_id: string;
  readonly detail?: unknown;
  readonly found_at?: string;
}

/** `GET …/runs/{id}/findings` (200). */
export interface ApiFindingsPage {
  readonly run_id: string;
  readonly total: number;
  readonly counts: ReadonlyArray<{
    readonly kind: string;
    readonly severity: string;
    readonly count: number;
  }>;
  readonly findings: readonly ApiFinding[];
}

/** The severities a finding can have, worst first (the `--severity` choices). */
export const SEVERITIES = ['DataLoss', 'Reclaimable', 'Regenerable', 'Drift'] as const;

/** Run statuses after which a run does not move any more without a new trigger. */
export function isFinalStatus(status: string): boolean {
  return status === 'Completed' || status === 'Failed' || status === 'Paused';
}
