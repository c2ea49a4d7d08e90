import { z } from '@hono/zod-openapi';
import { FINDING_STATES } from '@oxicloud/consistency';
import { FindingKindSchema, SeveritySchema } from './schemas.js';

/** The states of a finding across runs. */
export const FindingStateSchema = z.enum(FINDING_STATES).openapi('FindingState');

/** A finding across runs (`jobs.findings`). */
export const TrackedFindingSchema = z
  .object({
    id: z.string().openapi({ format: 'uuid' }),
    check: z
      .string()
      .openapi({ example: 'files_consistency', description: 'the check (job) that reports it' }),
    kind: z.string().openapi({ example: 'missing_blob' }),
    resource_id: z.string(),
    severity: SeveritySchema,
    highest_severity: SeveritySchema,
    magnitude: z.number().nullable().openapi({
      description:
        "the kind's magnitude as last reported (bytes of a drift, files of a missing blob); null when none",
    }),
    detail: z.record(z.string(), z.unknown()),
    state: FindingStateSchema,
    first_seen_run_id: z.string().nullable().openapi({ description: 'null once retention pruned that run' }),
    first_seen_at: z.string().openapi({ description: 'ISO 8601' }),
    last_seen_run_id: z.string().nullable(),
    last_seen_at: z.string().openapi({ description: 'ISO 8601' }),
    fixed_run_id: z.string().nullable(),
    fixed_at: z.string().nullable(),
    state_changed_by: z.string().openapi({ description: "'system' or the admin's user id" }),
    state_changed_at: z.string(),
    comment: z.string().nullable(),
    accept_until: z
      .string()
      .nullable()
      .openapi({ description: 'an accepted finding is open again after it' }),
  })
  .openapi('TrackedFinding');

/** One page of findings across runs. */
export const TrackedFindingsPageSchema = z
  .object({
    findings: z.array(TrackedFindingSchema),
    next_cursor: z
      .string()
      .nullable()
      .openapi({ description: 'pass as `cursor` for the next page; null on the last page' }),
  })
  .openapi('TrackedFindingsPage');

/** A finding with its history. */
export const FindingDetailSchema = TrackedFindingSchema.extend({
  state_changed_by_name: z.string().nullable().openapi({
    description:
      "the username (or e-mail) of the admin in `state_changed_by`; null for 'system' or a user not found",
  }),
  kind_declaration: FindingKindSchema.omit({ kind: true }).nullable().openapi({
    description:
      'the kind as its check declares it (severity, meaning, magnitude unit, repair); null when the check no longer declares it',
  }),
  events: z
    .array(
      z.object({
        at: z.string(),
        run_id: z.string().nullable(),
        actor: z.string().openapi({ description: "'system' or the admin's user id" }),
        actor_name: z.string().nullable().openapi({
          description: "the actor's username (or e-mail); null for 'system' or a user not found",
        }),
        event: z.string().openapi({
          description: 'new, reopened, worse, expired, fixed (runs); accept, false_positive, reopen (admins)',
        }),
        state: FindingStateSchema,
        severity: z.string().nullable(),
        magnitude: z.number().nullable(),
        comment: z.string().nullable(),
      }),
    )
    .openapi({ description: 'state changes, oldest first' }),
  sightings: z
    .array(
      z.object({
        run_id: z.string(),
        found_at: z.string(),
        severity: z.string(),
        change: z.string().nullable(),
        detail: z.record(z.string(), z.unknown()),
      }),
    )
    .openapi({ description: 'runs that reported it, newest first (at most 100; retention prunes old runs)' }),
}).openapi('FindingDetail');

/** The body of accept / false-positive / reopen. */
export const FindingDecisionBodySchema = z
  .object({
    comment: z
      .string()
      .min(1)
      .max(2000)
      .openapi({ description: 'why (1..2000 characters)', example: 'known' }),
    until: z.string().optional().openapi({
      description: 'accept only: ISO 8601 date-time in the future, after which it is open again',
    }),
  })
  .openapi('FindingDecision');

/** What a run changed. */
export const RunFindingChangesSchema = z
  .object({
    run_id: z.string().openapi({ format: 'uuid' }),
    check: z.string().nullable(),
    changed: z
      .array(TrackedFindingSchema.extend({ change: z.enum(['new', 'reopened', 'worse', 'expired']) }))
      .openapi({ description: 'new, reopened, worse and expired findings not accepted nor false positives' }),
    fixed: z.array(TrackedFindingSchema).openapi({ description: 'findings this run fixed' }),
    counts: z.object({
      new: z.number(),
      reopened: z.number(),
      worse: z.number(),
      expired: z.number(),
      still_open: z.number(),
      fixed: z.number(),
    }),
  })
  .openapi('RunFindingChanges');

/** The health view of the checks. */
export const FindingsHealthSchema = z
  .object({
    checks: z.array(
      z.object({
        check: z.string(),
        last_completed_run: z.object({ run_id: z.string(), completed_at: z.string().nullable() }).nullable(),
        open_by_severity: z
          .record(z.string(), z.number())
          .openapi({ description: 'open + reopened, per severity' }),
        accepted: z.number(),
        new_since_previous: z.number(),
        fixed_since_previous: z.number(),
        trend: z.array(
          z.object({
            run_id: z.string(),
            at: z.string().nullable(),
            reported: z.number(),
            new: z.number(),
            fixed: z.number(),
          }),
        ),
      }),
    ),
  })
  .openapi('FindingsHealth');
