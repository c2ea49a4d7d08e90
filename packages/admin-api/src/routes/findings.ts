import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { TrackedFindingView } from '@oxicloud/consistency';
import type { Logger } from '@oxicloud/scheduler';
import type { Context } from 'hono';
import { auditAllowed } from '../audit/audit-log.js';
import { AdminApiError } from '../errors.js';
import type { AdminEnv } from '../http/admin-env.js';
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from '../http/json-input.js';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import { summariseIssues } from '../http/validation-hook.js';
import type { AdminUserLookup } from '../ports/admin-user-lookup.js';
import type { FindingKindsView } from '../ports/finding-kinds.js';
import type { FindingsLedger } from '../ports/findings-ledger.js';
import type { PeriodicJobs } from '../ports/job-catalog.js';
import type { RunService } from '../ports/run-service.js';
import { hasControlCharacter } from '../text/unicode-text.js';
import {
  FindingDecisionBodySchema,
  FindingDetailSchema,
  FindingStateSchema,
  FindingsHealthSchema,
  RunFindingChangesSchema,
  TrackedFindingSchema,
  TrackedFindingsPageSchema,
} from './findings-schemas.js';
import { findingKindJson } from './job-directory.js';
import { errorResponses, paginationQuery, SeveritySchema, textQuery } from './schemas.js';
import { userNames } from './user-names.js';

/** The most findings one page of `GET /api/admin/findings` holds. */
export const MAX_TRACKED_FINDINGS_LIMIT = 1000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATE_VALUES = FindingStateSchema.options;
const SEVERITY_VALUES = SeveritySchema.options;

const findingIdParam = z
  .string()
  .min(1)
  .openapi({ param: { name: 'id', in: 'path' }, format: 'uuid', description: 'a finding id (UUID)' });
const runIdParam = z
  .string()
  .min(1)
  .openapi({ param: { name: 'run_id', in: 'path' }, format: 'uuid', description: 'a run id (UUID)' });

const listTrackedFindings = createRoute({
  method: 'get',
  path: '/api/admin/findings',
  operationId: 'listTrackedFindings',
  tags: ['findings'],
  summary: 'Findings across runs and checks, worst first, keyset-paged',
  description:
    `Ordered by severity (${SEVERITY_VALUES.join(', ')}), then most recently seen, then id (newest first). ` +
    'Page with `cursor` = the previous page’s `next_cursor` (keyset: page 1000 answers as fast as page 1).',
  security: [{ bearerAuth: [] }],
  request: {
    query: z.object({
      state: z
        .enum(STATE_VALUES, {
          error: (issue) => `must be one of ${STATE_VALUES.join(', ')}, got ${JSON.stringify(issue.input)}`,
        })
        .optional()
        .openapi({ param: { name: 'state', in: 'query' }, description: 'only this state' }),
      severity: z
        .enum(SEVERITY_VALUES, {
          error: (issue) =>
            `must be one of ${SEVERITY_VALUES.join(', ')}, got ${JSON.stringify(issue.input)}`,
        })
        .optional()
        .openapi({ param: { name: 'severity', in: 'query' }, description: 'only this severity' }),
      kind: textQuery('kind', 100, 'only this kind', 'missing_blob'),
      check: textQuery('check', 100, 'only this check (job name)', 'files_consistency'),
      cursor: textQuery('cursor', 200, 'the `next_cursor` of the previous page', 'MHwyMDI2LTEy'),
      limit: paginationQuery('limit', 1, MAX_TRACKED_FINDINGS_LIMIT, 'findings per page; default 100'),
    }),
  },
  responses: {
    200: {
      description: 'one page of findings',
      content: { 'application/json': { schema: TrackedFindingsPageSchema } },
    },
    ...errorResponses([400, 401, 403, 503]),
  },
});

const findingsHealth = createRoute({
  method: 'get',
  path: '/api/admin/findings/health',
  operationId: 'findingsHealth',
  tags: ['findings'],
  summary: 'Per check: last completed run, open findings by severity, new and fixed, trend',
  description: 'Every consistency check of the catalog; the trend covers its last 14 completed runs.',
  security: [{ bearerAuth: [] }],
  responses: {
    200: {
      description: 'the health view',
      content: { 'application/json': { schema: FindingsHealthSchema } },
    },
    ...errorResponses([401, 403, 503]),
  },
});

const getTrackedFinding = createRoute({
  method: 'get',
  path: '/api/admin/findings/{id}',
  operationId: 'getTrackedFinding',
  tags: ['findings'],
  summary: 'One finding with its history: its state changes and the runs that saw it',
  security: [{ bearerAuth: [] }],
  request: { params: z.object({ id: findingIdParam }) },
  responses: {
    200: { description: 'the finding', content: { 'application/json': { schema: FindingDetailSchema } } },
    ...errorResponses([400, 401, 403, 404, 503]),
  },
});

const runChanges = createRoute({
  method: 'get',
  path: '/api/admin/findings/runs/{run_id}/changes',
  operationId: 'runFindingChanges',
  tags: ['findings'],
  summary: 'What one run found new (or reopened, or worse) and what it fixed',
  security: [{ bearerAuth: [] }],
  request: {
    params: z.object({ run_id: runIdParam }),
    query: z.object({ limit: paginationQuery('limit', 1, 1000, 'findings per list; default 100') }),
  },
  responses: {
    200: {
      description: 'the run’s changes',
      content: { 'application/json': { schema: RunFindingChangesSchema } },
    },
    ...errorResponses([400, 401, 403, 404, 503]),
  },
});

const DECISIONS = [
  {
    segment: 'accept',
    decision: 'accept',
    operationId: 'acceptFinding',
    summary: 'Accept a finding: known, lived with (optionally until a date); open again when it gets worse',
  },
  {
    segment: 'false-positive',
    decision: 'false_positive',
    operationId: 'markFindingFalsePositive',
    summary: 'Mark a finding a false positive: never mailed, never closed or reopened by a run',
  },
  {
    segment: 'reopen',
    decision: 'reopen',
    operationId: 'reopenFinding',
    summary: 'Reopen an accepted, false-positive or fixed finding',
  },
] as const;

function decisionRoute(d: (typeof DECISIONS)[number]) {
  return createRoute({
    method: 'post',
    path: `/api/admin/findings/{id}/${d.segment}`,
    operationId: d.operationId,
    tags: ['findings'],
    summary: d.summary,
    description:
      'Body `{ "comment": "…", "until": "2027-01-01T00:00:00Z" }` (`until`: accept only). Audited with the admin and the comment.',
    security: [{ bearerAuth: [] }],
    request: {
      params: z.object({ id: findingIdParam }),
      // A plain (non-zod) schema: documented here, parsed by the handler, so every bad body gets one clear 400.
      body: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['comment'],
              additionalProperties: false,
              properties: {
                comment: { type: 'string', minLength: 1, maxLength: 2000, description: 'why' },
                until: {
                  type: 'string',
                  format: 'date-time',
                  description: 'accept only: after this instant the finding is open again',
                },
              },
              example: { comment: 'known: the re-upload is scheduled', until: '2027-01-01T00:00:00Z' },
            },
          },
        },
      },
    },
    responses: {
      200: {
        description: 'the finding after the decision',
        content: { 'application/json': { schema: TrackedFindingSchema } },
      },
      ...errorResponses([400, 401, 403, 404, 409, 413, 503]),
    },
  });
}

/** A finding as JSON. */
export function trackedFindingJson(f: TrackedFindingView) {
  return {
    id: f.id,
    check: f.check,
    kind: f.kind,
    resource_id: f.resourceId,
    severity: f.severity,
    highest_severity: f.highestSeverity,
    magnitude: f.magnitude,
    detail: { ...f.detail },
    state: f.state,
    first_seen_run_id: f.firstSeenRunId,
    first_seen_at: f.firstSeenAt.toISOString(),
    last_seen_run_id: f.lastSeenRunId,
    last_seen_at: f.lastSeenAt.toISOString(),
    fixed_run_id: f.fixedRunId,
    fixed_at: f.fixedAt?.toISOString() ?? null,
    state_changed_by: f.stateChangedBy,
    state_changed_at: f.stateChangedAt.toISOString(),
    comment: f.comment,
    accept_until: f.acceptUntil?.toISOString() ?? null,
  };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Reads and checks a decision body: `{ comment, until? }`, nothing else; 400 saying what is allowed. */
async function readDecision(
  c: Context<AdminEnv>,
  decision: string,
): Promise<{ comment: string; until: Date | null }> {
  const allowed =
    'send a JSON object { "comment": "why, 1..2000 characters", "until": "ISO 8601 (accept only)" }';
  const type = c.req.header('content-type');
  if (type !== undefined && !/^application\/([a-z0-9.+-]*\+)?json\b/i.test(type.trim())) {
    throw new AdminApiError(
      'MALFORMED_JSON',
      `the request body must be JSON (Content-Type: application/json); ${allowed}`,
    );
  }
  let parsed: unknown;
  try {
    const text = UTF8.decode(new Uint8Array(await c.req.arrayBuffer()));
    if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) throw new Error('nested too deep');
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new AdminApiError('MALFORMED_JSON', `the request body is not valid JSON; ${allowed}`, { cause });
  }
  const result = FindingDecisionBodySchema.strict().safeParse(parsed);
  if (!result.success) {
    throw new AdminApiError(
      'VALIDATION_FAILED',
      `invalid request: ${summariseIssues('body', result.error)}; ${allowed}`,
    );
  }
  const comment = result.data.comment;
  if (comment.trim().length === 0 || [...comment].some((ch) => ch !== '\n' && hasControlCharacter(ch))) {
    throw new AdminApiError(
      'VALIDATION_FAILED',
      'invalid request: body.comment must be printable text (newlines allowed), not blank',
    );
  }
  let until: Date | null = null;
  if (result.data.until !== undefined) {
    if (decision !== 'accept') {
      throw new AdminApiError(
        'VALIDATION_FAILED',
        `invalid request: body.until goes with accept only, not ${decision}`,
      );
    }
    until = new Date(result.data.until);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(result.data.until) || Number.isNaN(until.getTime())) {
      throw new AdminApiError(
        'VALIDATION_FAILED',
        `invalid request: body.until must be an ISO 8601 date-time such as 2027-01-01T00:00:00Z, got ${JSON.stringify(result.data.until.slice(0, 40))}`,
      );
    }
    if (until.getTime() <= Date.now()) {
      throw new AdminApiError('VALIDATION_FAILED', 'invalid request: body.until must lie in the future');
    }
  }
  return { comment, until };
}

function requireFindingId(id: string): string {
  if (!UUID.test(id)) {
    throw new AdminApiError(
      'INVALID_FINDING_ID',
      `a finding id is a UUID, got ${JSON.stringify(id.slice(0, 60))}`,
    );
  }
  return id.toLowerCase();
}

/**
 * Registers `/api/admin/findings`: findings across runs (list, health,
 * detail, what a run changed) and the operators' decisions (accept,
 * false-positive, reopen; POSTs audited with the comment).
 */
export function registerFindingRoutes(
  app: OpenAPIHono<AdminEnv>,
  deps: {
    readonly ledger: FindingsLedger;
    readonly jobs: PeriodicJobs;
    /** The recoverable jobs (the consistency checks are among them). */
    readonly runs?: RunService | undefined;
    /** The kinds each check declares: a finding's `kind_declaration`. */
    readonly findingKinds?: FindingKindsView | undefined;
    /** Names the admins of a finding's history. */
    readonly users?: AdminUserLookup | undefined;
    readonly logger: Logger;
  },
): void {
  const { ledger, jobs, runs, logger } = deps;
  const declarationOf = (check: string, kind: string) => {
    const declared = deps.findingKinds?.kindsOf(check).find((k) => k.kind === kind);
    if (declared === undefined) return null;
    const { kind: _kind, ...rest } = findingKindJson(declared);
    return rest;
  };

  app.openapi(listTrackedFindings, async (c) => {
    const q = c.req.valid('query');
    const page = await ledger.list({
      ...(q.state ? { state: q.state } : {}),
      ...(q.severity ? { severity: q.severity } : {}),
      ...(q.kind ? { kind: q.kind } : {}),
      ...(q.check ? { check: q.check } : {}),
      ...(q.cursor ? { cursor: q.cursor } : {}),
      limit: q.limit ?? 100,
    });
    return c.json({ findings: page.items.map(trackedFindingJson), next_cursor: page.nextCursor }, 200);
  });
  methodNotAllowed(app, '/api/admin/findings', ['GET']);

  app.openapi(findingsHealth, async (c) => {
    const isCheck = (c: { check?: unknown } | undefined) => c?.check !== null && c?.check !== undefined;
    const checks = [
      ...jobs
        .list()
        .filter((j) => isCheck(j.capabilities))
        .map((j) => j.name),
      ...(runs?.names() ?? []).filter((name) => isCheck(runs?.capabilities(name))),
    ].filter((name, i, all) => all.indexOf(name) === i);
    const health = await ledger.health(checks);
    return c.json(
      {
        checks: health.map((h) => ({
          check: h.check,
          last_completed_run: h.lastCompletedRun
            ? {
                run_id: h.lastCompletedRun.runId,
                completed_at: h.lastCompletedRun.completedAt?.toISOString() ?? null,
              }
            : null,
          open_by_severity: { ...h.openBySeverity },
          accepted: h.accepted,
          new_since_previous: h.newSincePrevious,
          fixed_since_previous: h.fixedSincePrevious,
          trend: h.trend.map((t) => ({
            run_id: t.runId,
            at: t.at?.toISOString() ?? null,
            reported: t.reported,
            new: t.new,
            fixed: t.fixed,
          })),
        })),
      },
      200,
    );
  });
  methodNotAllowed(app, '/api/admin/findings/health', ['GET']);

  app.openapi(runChanges, async (c) => {
    const { run_id: runId } = c.req.valid('param');
    const { limit } = c.req.valid('query');
    if (!UUID.test(runId)) {
      throw new AdminApiError(
        'INVALID_RUN_ID',
        `a run id is a UUID, got ${JSON.stringify(runId.slice(0, 60))}`,
      );
    }
    let changes: Awaited<ReturnType<FindingsLedger['runChanges']>>;
    try {
      changes = await ledger.runChanges(runId.toLowerCase(), limit === undefined ? {} : { limit });
    } catch (error) {
      if ((error as { code?: unknown }).code === 'FINDING_NOT_FOUND') {
        throw new AdminApiError('RUN_NOT_FOUND', `no run with id ${runId}`, { cause: error });
      }
      throw error;
    }
    return c.json(
      {
        run_id: changes.runId,
        check: changes.check,
        changed: changes.changed.map((f) => ({ ...trackedFindingJson(f), change: f.change })),
        fixed: changes.fixed.map(trackedFindingJson),
        counts: {
          new: changes.counts.new,
          reopened: changes.counts.reopened,
          worse: changes.counts.worse,
          expired: changes.counts.expired,
          still_open: changes.counts.stillOpen,
          fixed: changes.counts.fixed,
        },
      },
      200,
    );
  });
  methodNotAllowed(app, '/api/admin/findings/runs/:run_id/changes', ['GET']);

  app.openapi(getTrackedFinding, async (c) => {
    const id = requireFindingId(c.req.valid('param').id);
    const f = await ledger.get(id);
    if (f === null) throw new AdminApiError('FINDING_NOT_FOUND', `no finding with id ${id}`);
    const names = await userNames(deps.users, [f.stateChangedBy, ...f.events.map((e) => e.actor)]);
    return c.json(
      {
        ...trackedFindingJson(f),
        state_changed_by_name: names.get(f.stateChangedBy) ?? null,
        kind_declaration: declarationOf(f.check, f.kind),
        events: f.events.map((e) => ({
          at: e.at.toISOString(),
          run_id: e.runId,
          actor: e.actor,
          actor_name: names.get(e.actor) ?? null,
          event: e.event,
          state: e.state as (typeof STATE_VALUES)[number],
          severity: e.severity,
          magnitude: e.magnitude,
          comment: e.comment,
        })),
        sightings: f.sightings.map((s) => ({
          run_id: s.runId,
          found_at: s.foundAt.toISOString(),
          severity: s.severity,
          change: s.change,
          detail: { ...s.detail },
        })),
      },
      200,
    );
  });
  methodNotAllowed(app, '/api/admin/findings/:id', ['GET']);

  for (const d of DECISIONS) {
    app.openapi(decisionRoute(d), async (c) => {
      const id = requireFindingId(c.req.param('id') ?? '');
      const body = await readDecision(c, d.decision);
      const actor = c.get('principal')?.userId ?? 'unknown';
      auditAllowed(logger, c, { finding_id: id, finding_decision: d.decision, comment: body.comment });
      const after = await ledger.decide(id, d.decision, {
        actor,
        comment: body.comment,
        ...(body.until ? { acceptUntil: body.until } : {}),
      });
      return c.json(trackedFindingJson(after), 200);
    });
    methodNotAllowed(app, `/api/admin/findings/:id/${d.segment}`, ['POST']);
  }
}
