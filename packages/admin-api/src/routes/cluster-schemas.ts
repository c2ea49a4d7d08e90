import { z } from '@hono/zod-openapi';
import { JobOutcomeSchema } from './schemas.js';

/** One node of `GET /api/admin/nodes`. */
export const ClusterNodeSchema = z
  .object({
    id: z.string().openapi({ description: 'host:pid:6 hex', example: 'web-1:4242:a3f09c' }),
    host: z.string(),
    pid: z.number().int(),
    version: z.string(),
    started_at: z.string().openapi({ description: 'ISO 8601, database clock' }),
    last_heartbeat_at: z.string().openapi({ description: 'ISO 8601, database clock' }),
    heartbeat_age_ms: z.number().openapi({ description: 'since the last heartbeat, database clock' }),
    self: z.boolean().openapi({ description: 'whether this node answered the request' }),
    runs: z
      .array(z.object({ run_id: z.string(), job_name: z.string(), status: z.string() }))
      .readonly()
      .openapi({ description: 'the recoverable runs the node owns' }),
    periodic_jobs: z
      .array(z.string())
      .readonly()
      .openapi({ description: 'the periodic jobs the node runs now' }),
  })
  .openapi('ClusterNode');

/** One run of a periodic job, from any node. */
export const PeriodicRunSchema = z
  .object({
    id: z.number().int(),
    job: z.string(),
    slot: z
      .string()
      .nullable()
      .openapi({ description: 'ISO 8601 slot of a tick (database clock); null for a trigger' }),
    source: z.enum(['tick', 'trigger']),
    node: z.string().openapi({ description: 'the node that ran it' }),
    started_at: z.string(),
    finished_at: z.string(),
    elapsed_ms: z.number(),
    outcome: JobOutcomeSchema,
    cause: z.string().nullable().openapi({ description: 'handler | timeout | panicked (err only)' }),
  })
  .openapi('PeriodicRun');
