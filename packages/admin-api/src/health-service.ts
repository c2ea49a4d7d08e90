/**
 * What `GET /healthz` says it is: a client checks it before it sends a token
 * (`oxijobs jobs …`). A module of its own (`@oxicloud/admin-api/health-service`)
 * so that client does not load the admin API to learn one word.
 */
export const HEALTH_SERVICE = 'oxijobs' as const;
