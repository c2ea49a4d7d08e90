-- @oxicloud/cluster schema version 1: several server processes on one database.
-- Idempotent: safe to apply again. Every time in these tables is the database's
-- clock (now() / clock_timestamp()), never a node's.

-- The processes of the cluster: registered at boot, heartbeat every few
-- seconds, deleted on a graceful stop; rows whose heartbeat is older than the
-- prune age are deleted by any node.
CREATE TABLE IF NOT EXISTS jobs.nodes (
    id                 TEXT PRIMARY KEY,          -- host:pid:6 hex (createNodeId)
    host               TEXT NOT NULL,
    pid                INTEGER NOT NULL,
    version            TEXT NOT NULL,
    started_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_heartbeat_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- One row per Part 1 job: the last slot claimed (the compare-and-set of a
-- tick: UPDATE … WHERE last_slot < $slot), missed slots, and who holds the
-- job's run (owner node and lease, renewed while it runs).
CREATE TABLE IF NOT EXISTS jobs.periodic_state (
    job            TEXT PRIMARY KEY,
    last_slot      TIMESTAMPTZ,                   -- NULL: never claimed
    missed_slots   BIGINT NOT NULL DEFAULT 0,     -- slots nobody claimed, summed
    last_missed    BIGINT NOT NULL DEFAULT 0,     -- slots skipped by the last claim
    owner_node     TEXT,                          -- NULL: nobody runs it
    running_since  TIMESTAMPTZ,
    lease_until    TIMESTAMPTZ
);

-- Every run of a Part 1 job (tick or trigger) from every node.
CREATE TABLE IF NOT EXISTS jobs.periodic_runs (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job          TEXT NOT NULL,
    slot         TIMESTAMPTZ,                     -- NULL for a trigger
    source       TEXT NOT NULL CHECK (source IN ('tick', 'trigger')),
    node         TEXT NOT NULL,
    started_at   TIMESTAMPTZ NOT NULL,
    finished_at  TIMESTAMPTZ NOT NULL,
    outcome      TEXT NOT NULL CHECK (outcome IN ('ok', 'err')),
    count        DOUBLE PRECISION,                -- ok: the job's primary scalar
    cause        TEXT,                            -- err: handler | timeout | panicked
    message      TEXT,                            -- err: the message
    extra        JSON NOT NULL DEFAULT '{}'::json     -- json, not jsonb: the outcome's keys keep their order
);
CREATE INDEX IF NOT EXISTS periodic_runs_job_finished_idx ON jobs.periodic_runs (job, finished_at DESC);
CREATE INDEX IF NOT EXISTS periodic_runs_finished_idx ON jobs.periodic_runs (finished_at);
