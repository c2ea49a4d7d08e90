import type { ClusterNodeView, ClusterView, PeriodicRunView } from '@oxicloud/admin-api';
import type { NodeMembership, PeriodicRun, PgOwnedRuns, PgPeriodicHistory } from '@oxicloud/cluster';
import { err, ok } from '@oxicloud/scheduler';

/** The admin API's {@link ClusterView} on `@oxicloud/cluster`: nodes, their runs, the shared periodic history. */
export function clusterView(deps: {
  readonly membership: NodeMembership;
  readonly history: PgPeriodicHistory;
  /** The recoverable runs each node owns (empty until the runs record an owner). */
  readonly ownedRuns: PgOwnedRuns;
}): ClusterView {
  const { membership, history, ownedRuns } = deps;
  return {
    async nodes(): Promise<ClusterNodeView[]> {
      const [nodes, runs, states] = await Promise.all([
        membership.list(),
        ownedRuns.list(),
        history.states(),
      ]);
      return nodes.map((node) => ({
        id: node.id,
        host: node.host,
        pid: node.pid,
        version: node.version,
        started_at: node.startedAt.toISOString(),
        last_heartbeat_at: node.lastHeartbeatAt.toISOString(),
        heartbeat_age_ms: node.heartbeatAgeMs,
        self: node.id === membership.nodeId,
        runs: runs
          .filter((run) => run.node === node.id)
          .map((run) => ({ run_id: run.runId, job_name: run.job, status: run.status })),
        periodic_jobs: states.filter((s) => s.runningOn === node.id).map((s) => s.job),
      }));
    },
    async periodicStates() {
      return (await history.states()).map((state) => ({
        job: state.job,
        last_slot_at: state.lastSlotAt?.toISOString() ?? null,
        missed_slots: state.missedSlots,
        running_on: state.runningOn,
        last_run: state.lastRun === null ? null : runView(state.lastRun),
      }));
    },
    async periodicRuns(job, page) {
      return (await history.runs(job, page)).map(runView);
    },
  };
}

function runView(run: PeriodicRun): PeriodicRunView {
  return {
    id: run.id,
    job: run.job,
    slot: run.slot?.toISOString() ?? null,
    source: run.source,
    node: run.node,
    started_at: run.startedAt.toISOString(),
    finished_at: run.finishedAt.toISOString(),
    elapsed_ms: Math.max(0, run.finishedAt.getTime() - run.startedAt.getTime()),
    outcome: run.outcome === 'ok' ? ok(run.count ?? 0, { ...run.extra }) : err(run.message ?? ''),
    cause: run.cause,
  };
}
