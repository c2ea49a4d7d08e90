-- The recoverable-run engine (job-registry.md Part 2) and the findings of
-- consistency runs. Column for column as the plan gives them.
CREATE TABLE IF NOT EXISTS jobs.recoverable_runs (
    id                 UUID PRIMARY KEY,
    job_name           TEXT NOT NULL,
    status             TEXT NOT NULL,               -- Running / Paused / CancelRequested / Completed / Failed
    started_at         TIMESTAMPTZ NOT NULL,        -- fixed at run start
    last_progress_at   TIMESTAMPTZ NOT NULL,        -- heartbeat + last-checkpoint marker
    completed_at       TIMESTAMPTZ,
    cursor             BYTEA,                       -- opaque, per-job resume key (NULL = fresh)
    stats              JSONB NOT NULL DEFAULT '{}'::jsonb,
    params             JSONB NOT NULL DEFAULT '{}'::jsonb,
    error_message      TEXT
);

-- Load-bearing: at most one non-terminal run per job, even under races.
CREATE UNIQUE INDEX IF NOT EXISTS one_active_run_per_job
    ON jobs.recoverable_runs (job_name)
    WHERE status IN ('Running', 'Paused', 'CancelRequested');

CREATE INDEX IF NOT EXISTS recoverable_runs_running_progress_idx
    ON jobs.recoverable_runs (last_progress_at)
    WHERE status = 'Running';

-- Run history per job, newest first.
CREATE INDEX IF NOT EXISTS recoverable_runs_job_started_idx
    ON jobs.recoverable_runs (job_name, started_at DESC);

CREATE TABLE IF NOT EXISTS jobs.run_findings (
    id           UUID PRIMARY KEY,
    run_id       UUID NOT NULL REFERENCES jobs.recoverable_runs (id) ON DELETE CASCADE,
    kind         TEXT NOT NULL,
    severity     TEXT NOT NULL,
    resource_id  TEXT NOT NULL,
    detail       JSONB NOT NULL DEFAULT '{}'::jsonb,
    found_at     TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    UNIQUE (run_id, kind, resource_id)
);
CREATE INDEX IF NOT EXISTS run_findings_run_severity_idx ON jobs.run_findings (run_id, severity);
