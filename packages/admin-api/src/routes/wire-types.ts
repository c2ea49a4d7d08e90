import type { z } from '@hono/zod-openapi';
import type { AlertsStateSchema } from './alerts.js';
import type { ClusterNodeSchema, PeriodicRunSchema } from './cluster-schemas.js';
import type {
  FindingDecisionBodySchema,
  FindingDetailSchema,
  FindingStateSchema,
  FindingsHealthSchema,
  RunFindingChangesSchema,
  TrackedFindingSchema,
  TrackedFindingsPageSchema,
} from './findings-schemas.js';
import type { RepairAppliedSchema, RepairPlanSchema } from './repairs.js';
import type {
  CancelResultSchema,
  ErrorBodySchema,
  FindingKindSchema,
  FindingSchema,
  FindingsPageSchema,
  JobCheckSchema,
  JobKindSchema,
  JobOutcomeSchema,
  JobSummarySchema,
  OutcomeEnvelopeSchema,
  RunListEntrySchema,
  RunStatusSchema,
  RunSummarySchema,
  RunTriggeredSchema,
  SeveritySchema,
  TriggerAcceptedSchema,
} from './schemas.js';

/**
 * The JSON the admin API answers, inferred from its zod schemas (the same
 * schemas validate and document it): the one source of the wire types for
 * the routes, the `oxijobs` CLI and the `/admin/jobs` page.
 */
export type ErrorBodyJson = z.infer<typeof ErrorBodySchema>;
/** A `JobOutcome` as JSON: `{ kind: 'ok', count, extra }` or `{ kind: 'err', message }`. */
export type JobOutcomeJson = z.infer<typeof JobOutcomeSchema>;
/** `POST …/trigger` of a periodic job that waited (200). */
export type OutcomeEnvelopeJson = z.infer<typeof OutcomeEnvelopeSchema>;
/** `POST …/trigger?wait=false` of a periodic job (202). */
export type TriggerAcceptedJson = z.infer<typeof TriggerAcceptedSchema>;
/** `POST …/trigger` of a recoverable job (202). */
export type RunTriggeredJson = z.infer<typeof RunTriggeredSchema>;
/** `POST …/cancel` (200). */
export type CancelResultJson = z.infer<typeof CancelResultSchema>;
/** The status of a recoverable run. */
export type RunStatusJson = z.infer<typeof RunStatusSchema>;
/** `GET …/runs/{id}`: one run, whole. */
export type RunSummaryJson = z.infer<typeof RunSummarySchema>;
/** A run's progress. */
export type RunProgressJson = RunSummaryJson['progress'];
/** One run in a listing (`GET …/runs`, `latest_run`), bounded. */
export type RunListEntryJson = z.infer<typeof RunListEntrySchema>;
/** `periodic` or `recoverable`. */
export type JobKindJson = z.infer<typeof JobKindSchema>;
/** A consistency check's order and count meaning. */
export type JobCheckJson = z.infer<typeof JobCheckSchema>;
/** One entry of `GET /api/admin/jobs`. */
export type JobSummaryJson = z.infer<typeof JobSummarySchema>;
/** One declared finding kind of a listed job (`finding_kinds`): kind, severity, meaning, magnitude unit, repair. */
export type FindingKindJson = z.infer<typeof FindingKindSchema>;
/** A finding's severity. */
export type SeverityJson = z.infer<typeof SeveritySchema>;
/** One finding of a run. */
export type FindingJson = z.infer<typeof FindingSchema>;
/** `GET …/runs/{id}/findings` (200). */
export type FindingsPageJson = z.infer<typeof FindingsPageSchema>;
/** One entry of `GET /api/admin/nodes`. */
export type ClusterNodeJson = z.infer<typeof ClusterNodeSchema>;
/** `GET /api/admin/alerts`: the answering server's alerts (on with its SMTP server, or off and why). */
export type AlertsStateJson = z.infer<typeof AlertsStateSchema>;
/** One entry of `GET /api/admin/jobs/{name}/periodic-runs`. */
export type PeriodicRunJson = z.infer<typeof PeriodicRunSchema>;
/** The state of a finding across runs. */
export type FindingStateJson = z.infer<typeof FindingStateSchema>;
/** A finding across runs (`GET /api/admin/findings`, the POSTs' answer). */
export type TrackedFindingJson = z.infer<typeof TrackedFindingSchema>;
/** `GET /api/admin/findings` (200). */
export type TrackedFindingsPageJson = z.infer<typeof TrackedFindingsPageSchema>;
/** `GET /api/admin/findings/{id}` (200): with its state changes and sightings. */
export type FindingDetailJson = z.infer<typeof FindingDetailSchema>;
/** The body of `POST /api/admin/findings/{id}/accept|false-positive|reopen`. */
export type FindingDecisionJson = z.infer<typeof FindingDecisionBodySchema>;
/** `GET /api/admin/findings/runs/{run_id}` (200). */
export type RunFindingChangesJson = z.infer<typeof RunFindingChangesSchema>;
/** `GET /api/admin/findings/health` (200). */
export type FindingsHealthJson = z.infer<typeof FindingsHealthSchema>;
/** `POST /api/admin/repairs/plan`, `GET /api/admin/repairs/{id}`, `POST …/choices`: a plan (lines open, see {@link RepairLineJson}). */
export type RepairPlanJson = z.infer<typeof RepairPlanSchema>;
/** `POST /api/admin/repairs/{id}/apply` (202). */
export type RepairAppliedJson = z.infer<typeof RepairAppliedSchema>;
/** A row a repair line changes beyond its resource. */
export interface RepairDerivedRowJson {
  readonly type: string;
  readonly id: string;
  readonly before: Readonly<Record<string, unknown>>;
  readonly after: Readonly<Record<string, unknown>>;
}
/**
 * One line of a repair plan: the schema keeps lines open (they are the
 * planner's JSON, `@oxicloud/tenants`' `RepairLine`, with the item's status);
 * these are the fields readers may rely on.
 */
export interface RepairLineJson {
  /** `action`: something will be done; `needs_person`: no safe action (`reason`, `affected`). */
  readonly type: 'action' | 'needs_person';
  readonly findingId: string;
  readonly fingerprint: { readonly checkName: string; readonly kind: string; readonly resourceId: string };
  readonly resource: { readonly type: string; readonly id: string };
  /** The action's name (`recompute_drive_used_bytes`, …). */
  readonly action?: string;
  /** One line of text: `used_bytes 10,485,760 → 10,489,856`. */
  readonly summary?: string;
  readonly before?: Readonly<Record<string, unknown>>;
  readonly after?: Readonly<Record<string, unknown>>;
  readonly derived?: readonly RepairDerivedRowJson[];
  /** Present when the operator must choose; `choice` is the one chosen (`null` until then). */
  readonly choices?: readonly { readonly id: string; readonly description: string }[];
  readonly choice?: string | null;
  /** Why no action is safe (`needs_person`). */
  readonly reason?: string;
  /** What a person needs to decide: affected files, their owners, … */
  readonly affected?: readonly Readonly<Record<string, unknown>>[];
  /**
   * `already_consistent`: the run found the resource already right (its
   * re-check passed before anything was written); nothing was changed.
   */
  readonly status: 'pending' | 'applied' | 'already_consistent' | 'skipped' | 'needs_person';
  /** Why apply skipped it. */
  readonly skip_reason: string | null;
  /** After the run: `passed` (the finding is fixed), or why the re-check still fails. */
  readonly verified?: string | null;
}
