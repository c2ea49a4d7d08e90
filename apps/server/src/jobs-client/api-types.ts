import type {
  AlertsStateJson,
  CancelResultJson,
  ClusterNodeJson,
  FindingJson,
  FindingsPageJson,
  JobOutcomeJson,
  JobSummaryJson,
  OutcomeEnvelopeJson,
  PeriodicRunJson,
  RunListEntryJson,
  RunProgressJson,
  RunStatusJson,
  RunSummaryJson,
  RunTriggeredJson,
  SeverityJson,
  TriggerAcceptedJson,
} from '@oxicloud/admin-api';
import { TERMINAL_STATUSES } from '@oxicloud/recoverable/run-status';

/**
 * The JSON the admin API answers (docs/admin-api.md), named as this client
 * reads it. Every type here is the admin API's own wire type
 * (`@oxicloud/admin-api`, inferred from the zod schemas that validate and
 * document the API): nothing is copied by hand, so a change of the API's
 * shape is a compile error in the CLI. The client still reads defensively
 * (a missing field prints `-`), so an older server does not break it.
 */

/** `JobOutcome`: the result of one Part 1 dispatch. */
export type ApiJobOutcome = JobOutcomeJson;

/** `last_outcome` of a listed job. */
export type ApiLastOutcome = NonNullable<JobSummaryJson['last_outcome']>;

/** Progress of a recoverable run. */
export type ApiRunProgress = RunProgressJson;

/** The status of a recoverable run. */
export type ApiRunStatus = RunStatusJson;

/** `GET …/runs/{id}`: one run, whole (full params, every pause). */
export type ApiRunDetail = RunSummaryJson;

/** One run in a listing (`GET …/runs`, a job's `latest_run`): bounded (`params_summary`, the newest pause). */
export type ApiRunListEntry = RunListEntryJson;

/** One recoverable run, as the detail or as a listing shows it: the fields both have. */
export type ApiRunSummary = ApiRunDetail | ApiRunListEntry;

/** One entry of `GET /api/admin/jobs`. */
export type ApiJob = JobSummaryJson;

/** `POST …/trigger` of a Part 1 job (200), or with `wait=false` (202 `accepted`). */
export type ApiOutcomeEnvelope = OutcomeEnvelopeJson | TriggerAcceptedJson;

/**
 * `POST …/trigger` of a recoverable job (202). `params` and
 * `params_not_applied` are read as optional: a server from before they were
 * sent answers without them, and the CLI then says nothing about params.
 */
export type ApiRunStarted = Omit<RunTriggeredJson, 'params' | 'params_not_applied'> &
  Partial<Pick<RunTriggeredJson, 'params' | 'params_not_applied'>>;

/** `POST …/cancel` (200). */
export type ApiCancelled = CancelResultJson;

/** A finding's severity. */
export type ApiSeverity = SeverityJson;

/** One finding of a run. */
export type ApiFinding = FindingJson;

/** `GET …/runs/{id}/findings` (200). */
export type ApiFindingsPage = FindingsPageJson;

/** The severities a finding can have, worst first (the `--severity` choices): the one list. */
export { SEVERITIES } from '@oxicloud/consistency/severity';

/** Run statuses after which a run does not move any more without a new trigger. */
export function isFinalStatus(status: string): boolean {
  return status === 'Paused' || (TERMINAL_STATUSES as readonly string[]).includes(status);
}

/** One entry of `GET /api/admin/nodes`. */
export type ApiNode = ClusterNodeJson;

/** `GET /api/admin/alerts`: whether the answering server mails alerts. */
export type ApiAlertsState = AlertsStateJson;

/** One entry of `GET /api/admin/jobs/{name}/periodic-runs`. */
export type ApiPeriodicRun = PeriodicRunJson;
