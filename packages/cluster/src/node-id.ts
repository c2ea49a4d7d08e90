/**
 * A node's id is `@oxicloud/recoverable`'s (`<host>:<pid>:<6 hex>`): the
 * engine writes it as the owner of the runs a process executes and its boot
 * sweep reads host and pid back from it, so the registry in `jobs.nodes` and
 * the runs' owners name a node the same way.
 */
export { createNodeId, parseNodeId } from '@oxicloud/recoverable';
