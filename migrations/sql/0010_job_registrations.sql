-- Freshness of every job, shared by every server process on this database:
-- when the job was first registered here (a job that never succeeded is
-- measured from then, not from a process start), when a run of it last ended
-- and last succeeded (deep storage_consistency runs separately), and whether
-- its current overdue episode has been mailed (`job_overdue`, once per
-- episode for the whole cluster; a success clears it).
CREATE TABLE IF NOT EXISTS jobs.job_registrations (
    job_name                 TEXT PRIMARY KEY,
    first_registered_at      TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    last_run_at              TIMESTAMPTZ,
    last_success_at          TIMESTAMPTZ,
    last_deep_success_at     TIMESTAMPTZ,
    overdue_alerted_at       TIMESTAMPTZ,
    deep_overdue_alerted_at  TIMESTAMPTZ
);
