-- @oxicloud/recoverable schema version 4: leases and fencing of runs, so
-- several server processes can share one database (issue 17).
--
-- owner_node   the node id of the process that executes the run
--              (`<host>:<pid>:<6 hex>`); kept after the run stops, so the
--              run's detail says who ran it last. NULL on rows written
--              before this version.
-- lease_until  database clock: the owner's heartbeat and every checkpoint
--              set it to now() + the lease; NULL while the run is not
--              executing. A Running or CancelRequested run whose lease
--              passed is paused by any other node's janitor ("node <id>
--              lost mid-run").
-- The fence of every write of a run is (owner_node, attempt): `attempt`
-- (version 3) grows on every start and resume, so a stale owner's write
-- matches no row once another node took the run over.
-- Idempotent: safe to apply again.
ALTER TABLE jobs.recoverable_runs
  ADD COLUMN IF NOT EXISTS owner_node text NULL,
  ADD COLUMN IF NOT EXISTS lease_until timestamptz NULL;

-- The janitor's scan: active runs by lease end.
CREATE INDEX IF NOT EXISTS recoverable_runs_active_lease_idx
    ON jobs.recoverable_runs (lease_until)
    WHERE status IN ('Running', 'CancelRequested');
