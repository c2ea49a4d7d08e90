import { createNodeId as recoverableNodeId } from '@oxicloud/recoverable';

/**
 * This server process's node id: `${os.hostname()}:${process.pid}:${6 random
 * hex}`. Made once at boot; the recoverable engine writes it as the owner of
 * the runs this process executes (`jobs.recoverable_runs.owner_node`), and its
 * boot sweep reads host and pid back from it (a run of a dead process of this
 * host is paused at once). The format is `@oxicloud/recoverable`'s
 * (`createNodeId`, `parseNodeId`), so both sides agree on it.
 *
 * @example
 * ```ts
 * createNodeId(); // 'web-1:4127:9f03ac'
 * ```
 */
export function createNodeId(): string {
  return recoverableNodeId();
}
