/**
 * @oxicloud/admin-api: The hono admin API under /api/admin/jobs, its OpenAPI document, admin auth, audit log and the /admin/jobs page.
 *
 * @packageDocumentation
 */
export {};
