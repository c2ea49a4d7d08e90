import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Logger } from '@oxicloud/scheduler';
import { auditAllowed } from '../audit/audit-log.js';
import { AdminApiError } from '../errors.js';
import type { AdminEnv } from '../http/admin-env.js';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import type { AdminUserLookup } from '../ports/admin-user-lookup.js';
import type { RepairPlanDocument, RepairService } from '../ports/repair-service.js';
import { errorResponses, SeveritySchema } from './schemas.js';
import { userNames } from './user-names.js';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const uuid = z.string().regex(UUID_PATTERN, 'must be a UUID');
const name = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[a-z0-9_]+$/, 'lowercase letters, digits and _ only');

/** Choices: finding id → choice id (`restore_parent`, `trash_child`, …). */
const ChoicesSchema = z
  .record(uuid, name)
  .refine((r) => Object.keys(r).length <= 1000, 'at most 1000 choices')
  .openapi('RepairChoices', { example: { '0193a000-0000-7000-8000-000000000001': 'restore_parent' } });

const PlanBodySchema = z
  .object({
    finding_ids: z.array(uuid).min(1).max(1000).optional(),
    filter: z
      .object({ check: name.optional(), kind: name.optional(), severity: SeveritySchema.optional() })
      .strict()
      .optional(),
    choices: ChoicesSchema.optional(),
  })
  .strict()
  .refine((b) => (b.finding_ids === undefined) !== (b.filter === undefined), {
    message: 'give exactly one of finding_ids or filter',
  })
  .openapi('RepairPlanRequest');

const RepairLineSchema = z.record(z.string(), z.unknown()).openapi('RepairLine', {
  description:
    'One line: `type` = `action` (action, resource, summary, before, after, derived rows, choices, choice) ' +
    'or `needs_person` (reason, affected files and owners); `status` pending | applied | already_consistent (the resource was already right when the run reached it: ' +
    'nothing written) | skipped | needs_person, `skip_reason` when skipped, `verified` after the run (`passed`: the finding is fixed; else why it still fails).',
});

/** A repair plan as `/api/admin/repairs` answers it (`wire-types.ts` names its lines' fields). */
export const RepairPlanSchema = z
  .object({
    id: z.string(),
    hash: z.string().openapi({ description: 'sha256 hex over the whole plan; apply needs it' }),
    state: z.enum(['planned', 'approved', 'applied']),
    selection: z.unknown(),
    created_by: z.string().openapi({ description: "the planning admin's user id" }),
    created_by_name: z
      .string()
      .nullable()
      .openapi({ description: 'their username (or e-mail); null when the user is not found' }),
    created_at: z.string(),
    approved_by: z.string().nullable(),
    approved_by_name: z
      .string()
      .nullable()
      .openapi({ description: 'the approving admin, named the same way' }),
    run_id: z.string().nullable(),
    unchosen: z.number().int().openapi({ description: 'lines that offer a choice none was made for' }),
    lines: z.array(RepairLineSchema),
  })
  .openapi('RepairPlan');

/** `POST /api/admin/repairs/{id}/apply` (202): the run that applies the plan. */
export const RepairAppliedSchema = z.object({ plan_id: z.string(), run_id: z.string() });

const idParam = z
  .string()
  .min(1)
  .openapi({ param: { name: 'id', in: 'path' }, format: 'uuid', description: 'a repair plan id (UUID)' });

const planRoute = createRoute({
  method: 'post',
  path: '/api/admin/repairs/plan',
  operationId: 'planRepair',
  tags: ['repairs'],
  summary: 'Plan the repair of open findings (by ids or a filter) without writing anything but the plan',
  description:
    'One line per finding: the action with the state before and after and the rows it changes beyond the ' +
    'resource, or "needs a person" with why. Choices (finding id → choice) may be made here or later. ' +
    'The plan has an id and a hash over its whole content. Audited.',
  security: [{ bearerAuth: [] }],
  request: { body: { required: true, content: { 'application/json': { schema: PlanBodySchema } } } },
  responses: {
    201: { description: 'the plan', content: { 'application/json': { schema: RepairPlanSchema } } },
    ...errorResponses([400, 401, 403, 413, 503]),
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/api/admin/repairs/{id}',
  operationId: 'getRepairPlan',
  tags: ['repairs'],
  summary: 'A repair plan with its lines, their status and skip reasons',
  security: [{ bearerAuth: [] }],
  request: { params: z.object({ id: idParam }) },
  responses: {
    200: { description: 'the plan', content: { 'application/json': { schema: RepairPlanSchema } } },
    ...errorResponses([400, 401, 403, 404, 503]),
  },
});

const chooseRoute = createRoute({
  method: 'post',
  path: '/api/admin/repairs/{id}/choices',
  operationId: 'chooseRepair',
  tags: ['repairs'],
  summary: 'Make choices on a plan not yet approved: its lines and hash change',
  security: [{ bearerAuth: [] }],
  request: {
    params: z.object({ id: idParam }),
    body: {
      required: true,
      content: { 'application/json': { schema: z.object({ choices: ChoicesSchema }).strict() } },
    },
  },
  responses: {
    200: { description: 'the plan', content: { 'application/json': { schema: RepairPlanSchema } } },
    ...errorResponses([400, 401, 403, 404, 409, 413, 503]),
  },
});

const applyRoute = createRoute({
  method: 'post',
  path: '/api/admin/repairs/{id}/apply',
  operationId: 'applyRepair',
  tags: ['repairs'],
  summary:
    'Approve the plan with its hash and run it (job `repair`: resumable, cancellable, audited per item)',
  description:
    'Refused with 409 `PLAN_CONFLICT` when the hash is not the plan’s (it changed since it was read), it ' +
    'already has its run, or another plan’s repair run is active (the message names it; the approval is ' +
    'taken back). An approved plan whose run never started is triggered again. ' +
    'Follow the run at `/api/admin/jobs/repair/runs/{run_id}`.',
  security: [{ bearerAuth: [] }],
  request: {
    params: z.object({ id: idParam }),
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z
            .object({ hash: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters') })
            .strict(),
        },
      },
    },
  },
  responses: {
    202: {
      description: 'the run started',
      content: { 'application/json': { schema: RepairAppliedSchema } },
    },
    ...errorResponses([400, 401, 403, 404, 409, 413, 503]),
  },
});

/** A plan as JSON; `users` names its admins. */
export async function repairPlanJson(p: RepairPlanDocument, users?: AdminUserLookup) {
  const names = await userNames(users, [p.createdBy, p.approvedBy]);
  return {
    id: p.id,
    hash: p.hash,
    state: p.state as 'planned' | 'approved' | 'applied',
    selection: p.selection,
    created_by: p.createdBy,
    created_by_name: names.get(p.createdBy) ?? null,
    created_at: p.createdAt.toISOString(),
    approved_by: p.approvedBy,
    approved_by_name: p.approvedBy === null ? null : (names.get(p.approvedBy) ?? null),
    run_id: p.runId,
    unchosen: p.unchosen,
    lines: p.lines.map((l) => {
      const { skipReason, ...rest } = l as Record<string, unknown>;
      return { ...rest, skip_reason: skipReason ?? null };
    }),
  };
}

/** The domain's error codes as admin API errors. */
function mapped(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'INVALID_OPTIONS' || code === 'INVALID_ARGUMENT') {
    return new AdminApiError('VALIDATION_FAILED', `invalid request: ${message}`, { cause: error });
  }
  if (code === 'PLAN_NOT_FOUND') return new AdminApiError('REPAIR_PLAN_NOT_FOUND', message, { cause: error });
  if (code === 'PLAN_CONFLICT') return new AdminApiError('REPAIR_PLAN_CONFLICT', message, { cause: error });
  return error;
}

function requirePlanId(id: string): string {
  if (!UUID_PATTERN.test(id)) {
    throw new AdminApiError(
      'VALIDATION_FAILED',
      `a repair plan id is a UUID, got ${JSON.stringify(id.slice(0, 60))}`,
    );
  }
  return id.toLowerCase();
}

/**
 * Registers `/api/admin/repairs`: plan (nothing written but the plan), read,
 * choose, and apply with the plan's hash (POSTs audited).
 */
export function registerRepairRoutes(
  app: OpenAPIHono<AdminEnv>,
  deps: {
    readonly repairs: RepairService;
    /** Names a plan's admins. */
    readonly users?: AdminUserLookup | undefined;
    readonly logger: Logger;
  },
): void {
  const { repairs, logger, users } = deps;
  const actorOf = (c: { get(key: 'principal'): { userId: string } | undefined }) =>
    c.get('principal')?.userId ?? 'unknown';

  app.openapi(planRoute, async (c) => {
    const body = c.req.valid('json');
    auditAllowed(logger, c, { repair: 'plan', finding_count: body.finding_ids?.length ?? null });
    const selection = body.finding_ids
      ? { findingIds: body.finding_ids.map((id) => id.toLowerCase()) }
      : { ...(body.filter ?? {}) };
    try {
      const plan = await repairs.plan({ selection, choices: body.choices ?? {}, actor: actorOf(c) });
      return c.json(await repairPlanJson(plan, users), 201);
    } catch (error) {
      throw mapped(error);
    }
  });
  methodNotAllowed(app, '/api/admin/repairs/plan', ['POST']);

  app.openapi(getRoute, async (c) => {
    const id = requirePlanId(c.req.valid('param').id);
    const plan = await repairs.get(id);
    if (plan === null) throw new AdminApiError('REPAIR_PLAN_NOT_FOUND', `no repair plan with id ${id}`);
    return c.json(await repairPlanJson(plan, users), 200);
  });
  methodNotAllowed(app, '/api/admin/repairs/:id', ['GET']);

  app.openapi(chooseRoute, async (c) => {
    const id = requirePlanId(c.req.valid('param').id);
    const { choices } = c.req.valid('json');
    auditAllowed(logger, c, { repair: 'choose', plan_id: id, choices });
    try {
      return c.json(await repairPlanJson(await repairs.choose(id, choices), users), 200);
    } catch (error) {
      throw mapped(error);
    }
  });
  methodNotAllowed(app, '/api/admin/repairs/:id/choices', ['POST']);

  app.openapi(applyRoute, async (c) => {
    const id = requirePlanId(c.req.valid('param').id);
    const { hash } = c.req.valid('json');
    auditAllowed(logger, c, { repair: 'apply', plan_id: id, plan_hash: hash });
    try {
      const { runId } = await repairs.apply(id, hash, actorOf(c));
      return c.json({ plan_id: id, run_id: runId }, 202);
    } catch (error) {
      throw mapped(error);
    }
  });
  methodNotAllowed(app, '/api/admin/repairs/:id/apply', ['POST']);
}
