import { z } from '@hono/zod-openapi';
import { MAGNITUDE_UNITS } from '@oxicloud/consistency';
import { SEVERITIES } from '@oxicloud/consistency/severity';
import { RUN_STATUSES } from '@oxicloud/recoverable';
import { ADMIN_API_ERROR_STATUS } from '../errors.js';
import { hasControlCharacter, hasLoneSurrogate } from '../text/unicode-text.js';

const codes = Object.keys(ADMIN_API_ERROR_STATUS) as [keyof typeof ADMIN_API_ERROR_STATUS];

/** `{ error: { code, message } }`: every error response. */
export const ErrorBodySchema = z
  .object({
    error: z.object({
      code: z.enum(codes).openapi({ example: 'JOB_NOT_FOUND' }),
      message: z
        .string()
        .openapi({ example: "no job named 'nope'; known jobs: trash_cleanup, files_consistency" }),
    }),
  })
  .openapi('Error');

/** The JSON of a `JobOutcome`. */
export const JobOutcomeSchema = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('ok'),
      count: z.number().openapi({ description: "the job's primary scalar" }),
      extra: z.record(z.string(), z.unknown()).openapi({ description: 'job-specific fields' }),
    }),
    z.object({ kind: z.literal('err'), message: z.string() }),
  ])
  .openapi('JobOutcome');

/** The uniform envelope of a dispatch: `ok` mirrors `outcome.kind === 'ok'`. */
export const OutcomeEnvelopeSchema = z
  .object({ ok: z.boolean(), outcome: JobOutcomeSchema })
  .openapi('OutcomeEnvelope');

/** The statuses of a recoverable run. */
export const RunStatusSchema = z.enum(RUN_STATUSES).openapi('RunStatus');

/** The JSON of one `RunSummary` (a recoverable run). */
export const RunSummarySchema = z
  .object({
    run_id: z.string().openapi({ format: 'uuid' }),
    job_name: z.string().openapi({ example: 'files_consistency' }),
    status: RunStatusSchema,
    started_at: z.string().openapi({ description: 'ISO 8601' }),
    last_progress_at: z.string().openapi({ description: 'ISO 8601' }),
    completed_at: z.string().nullable(),
    cursor_hex: z
      .string()
      .nullable()
      .openapi({ description: 'the stored cursor as hex; null on a fresh run' }),
    stats: z.record(z.string(), z.unknown()).openapi({
      description: 'job-specific counters; `count` is the primary scalar, `scanned_count` the items examined',
    }),
    params: z
      .record(z.string(), z.unknown())
      .openapi({ description: 'the run params, with `force` and `deep`' }),
    error_message: z
      .string()
      .nullable()
      .openapi({ description: 'the message of a Failed run; null otherwise' }),
    pause_reason: z.string().nullable().openapi({ description: 'why the run is paused, while Paused' }),
    pauses: z
      .array(z.object({ at: z.string(), reason: z.string() }))
      .readonly()
      .openapi({ description: 'every pause (the last 32), oldest first: time (ISO 8601) and reason' }),
    active_ms: z
      .number()
      .openapi({ description: 'time the run actually ran (pauses and downtime left out)' }),
    wall_ms: z.number().openapi({ description: 'time from start to completion, or to now' }),
    owner_node: z.string().nullable().openapi({
      description:
        'the node executing the run, or the last one that did (`<host>:<pid>:<6 hex>`); null on runs older than the leases',
      example: 'web-1:4127:9f03ac',
    }),
    attempt: z.number().int().openapi({
      description: "1 on the run's start, +1 on every resume (on any node): the fence of the run's writes",
    }),
    lease_until: z.string().nullable().openapi({
      description:
        "when the owner's lease ends (database clock, ISO 8601), renewed by its heartbeat; null while the run is not executing",
    }),
    progress: z
      .object({
        processed: z.number(),
        total: z.number().nullable().openapi({
          description: 'never below processed; null when unknown or when the run passed its estimate',
        }),
        fraction: z.number().nullable().openapi({ description: '0..1; null when the total is unknown' }),
        rate_per_second: z.number().nullable(),
        eta_seconds: z.number().nullable(),
      })
      .openapi('RunProgress'),
  })
  .openapi('RunSummary');

/**
 * One run in a listing (`GET /api/admin/jobs` `latest_run`, `GET …/runs`):
 * bounded, so a page of 500 stays under 1 MiB. The run detail has the rest
 * (the full params and the pause history).
 */
export const RunListEntrySchema = RunSummarySchema.omit({ params: true, pauses: true })
  .extend({
    params_summary: z.record(z.string(), z.unknown()).openapi({
      description:
        'the run params, bounded to 256 bytes of JSON: strings cut to 120 characters (ending in …), nesting ' +
        'below 3 levels shown as {…}, keys past the budget left out; the full params are in GET …/runs/{id}',
    }),
    stats: z.record(z.string(), z.unknown()).openapi({
      description: 'job-specific counters, bounded like params_summary (512 bytes)',
    }),
    error_message: z
      .string()
      .nullable()
      .openapi({ description: 'at most 200 characters (300 bytes of JSON)' }),
    cursor_hex: z
      .string()
      .nullable()
      .openapi({ description: 'the stored cursor as hex, at most 160 characters' }),
    pause_reason: z
      .string()
      .nullable()
      .openapi({ description: 'why the run is paused, while Paused; at most 80 characters' }),
    pauses: z
      .array(z.object({ at: z.string(), reason: z.string() }))
      .readonly()
      .openapi({ description: 'the newest pause only; its reason at most 80 characters' }),
    truncated: z.boolean().openapi({
      description:
        'whether params_summary, stats, error_message, cursor_hex, pause_reason or pauses were cut; ' +
        'GET …/runs/{id} has them whole',
    }),
  })
  .openapi('RunListEntry');

/** `periodic`: a Part 1 job only; `recoverable`: a Part 2 job with runs (it may also tick on the registry). */
export const JobKindSchema = z.enum(['periodic', 'recoverable']);

/**
 * A consistency check's place in the catalog: its order among the checks
 * (`consistency_batch` runs them in this order) and what its `count` means.
 */
export const JobCheckSchema = z
  .object({
    order: z.number().int().openapi({ description: 'position among the checks, from 0' }),
    count_meaning: z.string().openapi({ description: "what the run's `count` counts" }),
  })
  .openapi('JobCheck');

/** The severities of a finding, worst first. */
export const SeveritySchema = z.enum(SEVERITIES).openapi('Severity');

/** One finding kind as the job that records it declares it (the check's `kinds`). */
export const FindingKindSchema = z
  .object({
    kind: z.string().openapi({ example: 'path_mismatch' }),
    severity: SeveritySchema,
    meaning: z.string().openapi({
      description: 'what a finding of this kind means, in words',
      example: "the folder's materialised path differs from its parent's path plus its name",
    }),
    magnitude: z.enum(MAGNITUDE_UNITS).nullable().openapi({
      description: "what a finding's magnitude measures (bytes, count); null when the kind has none",
    }),
    repair: z.string().nullable().openapi({
      description:
        'the repair a plan proposes, naming its action; null when a plan line always needs a person',
      example: 'recompute_folder_path: path and lpath from the parent chain, and the subtree below',
    }),
  })
  .openapi('FindingKind');

/** The JSON of one entry of the jobs listing. */
export const JobSummarySchema = z
  .object({
    name: z.string().openapi({ example: 'trash_cleanup' }),
    kind: JobKindSchema.openapi({
      description: 'periodic = Part 1 only; recoverable = Part 2 runs (may also tick)',
    }),
    interval_ms: z.number().nullable().openapi({ description: 'null = on demand only' }),
    timeout_ms: z.number().nullable(),
    next_run_at: z.string().nullable().openapi({ description: 'ISO 8601; null for on-demand jobs' }),
    running: z.boolean(),
    running_since: z.string().nullable().openapi({ description: 'ISO 8601 start of the run in flight' }),
    last_outcome: z
      .object({
        at: z.string().openapi({ description: 'ISO 8601 end of the run' }),
        outcome: JobOutcomeSchema,
        cause: z.string().optional().openapi({ description: 'handler | timeout | panicked (err only)' }),
        elapsed_ms: z.number().optional(),
        source: z.string().optional().openapi({ description: 'tick | trigger' }),
        node: z
          .string()
          .optional()
          .openapi({ description: 'the node that ran it (from the shared history)' }),
      })
      .nullable(),
    supports_deep: z.boolean().openapi({ description: 'whether `deep=true` changes what the job does' }),
    check: z
      .object({
        order: z.number().int().openapi({
          description: 'its place in consistency_batch (ascending; ties by name)',
          example: 30,
        }),
        count_meaning: z.string().openapi({
          description: "what a run's count means, in words",
          example:
            'findings this run found: files whose blob row is missing or of another size, or whose folder is trashed',
        }),
      })
      .nullable()
      .openapi({
        description:
          "the job's consistency-check declaration; null for jobs that are not consistency checks. The checks " +
          'consistency_batch runs are exactly the entries with a check, by order',
      }),
    finding_kinds: z.array(FindingKindSchema).openapi({
      description:
        "every finding kind the job records, from its declaration (a check's kinds), in its order; [] for a job " +
        'that records none. What `oxijobs jobs findings --kind` and `oxijobs findings list --kind` accept',
    }),
    latest_run: z.union([RunListEntrySchema, z.null()]).openapi({
      description:
        'recoverable jobs: the active run, else the newest (bounded, as in GET …/runs); null for periodic jobs',
    }),
    overdue: z
      .object({
        deep: z.boolean().openapi({
          description:
            'the deep cadence (deep runs of a check with a deep mode: storage_consistency, manifests_consistency)',
        }),
        max_age_ms: z.number().openapi({ description: 'the expected cadence' }),
        last_success_at: z.string().nullable().openapi({ description: 'ISO 8601; null = never succeeded' }),
        overdue_since: z
          .string()
          .openapi({ description: 'ISO 8601: last success (else first registration) + 1.5 × the cadence' }),
      })
      .nullable()
      .openapi({
        description:
          'set when the job has no success within 1.5 × its expected cadence; null when fresh or without one',
      }),
    missed_slots: z.number().int().optional().openapi({
      description:
        'periodic jobs, when the server shares ticks (always with oxijobs serve): slots no node claimed, summed',
    }),
    last_slot_at: z.string().nullable().optional().openapi({
      description:
        'periodic jobs, when the server shares ticks: ISO 8601 of the last slot claimed (database clock)',
    }),
  })
  .openapi('JobSummary');

/** `wait=false` on a periodic job: the run goes on in the background. */
export const TriggerAcceptedSchema = z
  .object({ ok: z.literal(true), accepted: z.literal(true) })
  .openapi('TriggerAccepted');

/** A recoverable job's trigger: the run started, resumed or already active. */
export const RunTriggeredSchema = z
  .object({
    ok: z.literal(true),
    run_id: z.string().openapi({ format: 'uuid' }),
    status: RunStatusSchema,
    resumed: z.boolean().openapi({ description: 'a Paused run was resumed (its stored params kept)' }),
    already_running: z.boolean().openapi({ description: 'a run was already active; nothing was started' }),
    params: z.record(z.string(), z.unknown()).openapi({
      description:
        'the params the run uses, with its force / deep options: for a resumed or active run its stored ones',
      example: { batch_size: 50, throttle_ms: 1000, force: false, deep: false },
    }),
    params_not_applied: z.record(z.string(), z.unknown()).openapi({
      description:
        'what this trigger asked for that the run does not use (a resumed run keeps its stored params, ' +
        'an active one its own): key → the value asked; {} when none',
      example: { batch_size: 500 },
    }),
  })
  .openapi('RunTriggered');

/** The answer of a cancel. */
export const CancelResultSchema = z
  .object({
    run_id: z.string().openapi({ format: 'uuid' }),
    status: RunStatusSchema.extract(['CancelRequested', 'Paused']),
  })
  .openapi('CancelResult');

/** One finding of a consistency run. */
export const FindingSchema = z
  .object({
    id: z.string().openapi({ format: 'uuid' }),
    kind: z.string().openapi({ example: 'missing_blob' }),
    severity: SeveritySchema,
    resource_id: z.string(),
    detail: z.record(z.string(), z.unknown()),
    found_at: z.string().openapi({ description: 'ISO 8601' }),
  })
  .openapi('Finding');

/** One page of a run's findings. */
export const FindingsPageSchema = z
  .object({
    run_id: z.string().openapi({ format: 'uuid' }),
    total: z.number().openapi({ description: 'findings matching the severity/kind filters (for paging)' }),
    counts: z
      .array(z.object({ kind: z.string(), severity: SeveritySchema, count: z.number() }))
      .openapi({ description: 'per (kind, severity) over the whole run, unfiltered; worst severity first' }),
    findings: z.array(FindingSchema),
  })
  .openapi('FindingsPage');

/** A query flag that must be literally `true` or `false`. */
export function booleanQueryFlag(name: string, description: string) {
  return z
    .enum(['true', 'false'], {
      error: (issue) => `must be "true" or "false", got ${JSON.stringify(issue.input)}`,
    })
    .optional()
    .openapi({ param: { name, in: 'query' }, description });
}

/** Reads a validated {@link booleanQueryFlag}. */
export function flagValue(value: 'true' | 'false' | undefined): boolean | undefined {
  return value === undefined ? undefined : value === 'true';
}

/** The longest digit string a `limit` / `offset` may have (`Number.MAX_SAFE_INTEGER` has 16 digits). */
const MAX_DECIMAL_DIGITS = 16;

/**
 * A `limit` / `offset` query parameter: a plain decimal integer in `[min, max]`
 * (digits only: no sign, space, `0x`/`0b`/`0o` prefix, exponent or fraction;
 * an empty value is refused, not read as 0).
 */
export function paginationQuery(name: 'limit' | 'offset', min: number, max: number, description: string) {
  const allowed = `must be a plain decimal integer from ${min} to ${max}`;
  return z
    .string()
    .superRefine((value, ctx) => {
      const ok =
        value.length <= MAX_DECIMAL_DIGITS &&
        /^[0-9]+$/.test(value) &&
        Number(value) >= min &&
        Number(value) <= max;
      if (!ok)
        ctx.addIssue({ code: 'custom', message: `${allowed}, got ${JSON.stringify(value.slice(0, 40))}` });
    })
    .transform(Number)
    .optional()
    .openapi({
      param: { name, in: 'query' },
      description: `${description}; plain decimal digits only`,
      type: 'integer',
      minimum: min,
      maximum: max,
    });
}

/**
 * A free-text query parameter (`kind`): 1 to `maxLength` characters, none of
 * them a control character (NUL included); a lone surrogate cannot arrive
 * (the URL decoder keeps invalid `%`-escapes as they are).
 */
export function textQuery(name: string, maxLength: number, description: string, example: string) {
  return z
    .string()
    .superRefine((value, ctx) => {
      if (value.length === 0) ctx.addIssue({ code: 'custom', message: 'must not be empty' });
      else if (value.length > maxLength) {
        ctx.addIssue({ code: 'custom', message: `must be at most ${maxLength} characters` });
      } else if (hasControlCharacter(value) || hasLoneSurrogate(value)) {
        ctx.addIssue({
          code: 'custom',
          message: 'must be printable text: no NUL or other control characters, no lone surrogates',
        });
      }
    })
    .optional()
    .openapi({ param: { name, in: 'query' }, description, example, maxLength, minLength: 1 });
}

/** The standard error responses of an authenticated admin route. */
export function errorResponses<
  const S extends readonly (400 | 401 | 403 | 404 | 405 | 409 | 413 | 500 | 503)[],
>(
  statuses: S,
): Record<
  S[number],
  { description: string; content: { 'application/json': { schema: typeof ErrorBodySchema } } }
> {
  const descriptions: Record<number, string> = {
    400: 'a query, path or body value is invalid (VALIDATION_FAILED, INVALID_PARAMS, MALFORMED_JSON, INVALID_RUN_ID)',
    401: 'no, invalid, expired or tampered bearer token (UNAUTHENTICATED)',
    403: 'the token user is not an admin or no longer exists (FORBIDDEN)',
    404: 'no such job or run (JOB_NOT_FOUND, RUN_NOT_FOUND)',
    405: 'method not allowed (METHOD_NOT_ALLOWED)',
    413: 'the request body is larger than the limit, 64 KiB by default (PAYLOAD_TOO_LARGE)',
    409: 'no active run to cancel, or a run-level action on a periodic job (NO_ACTIVE_RUN, NOT_RECOVERABLE)',
    500: 'unexpected error (INTERNAL)',
    503: 'the server is shutting down or the database does not answer (SHUTTING_DOWN, UNAVAILABLE)',
  };
  const out: Record<number, unknown> = {};
  for (const status of statuses) {
    out[status] = {
      description: descriptions[status] ?? 'error',
      content: { 'application/json': { schema: ErrorBodySchema } },
    };
  }
  return out as never;
}

/**
 * The 4xx a public probe can still get: the HTTP layer refuses a malformed
 * request (400) or headers over 16 KiB (431) before any route runs, and
 * answers without a JSON body.
 */
export const HTTP_LAYER_4XX = {
  '4XX': {
    description:
      'the HTTP layer refused the request before the route ran (malformed request 400, headers over 16 KiB 431); no JSON body',
  },
} as const;
