-- @oxicloud/recoverable schema version 3, the run kit: a run's attempt counts
-- its start (1) and every resume; attempt_started_at is when the current
-- attempt began. Same statements as the run kit's migrations/sql/0009_run_kit.sql,
-- which the server's runner now skips (retired). Idempotent: safe to apply again.
ALTER TABLE jobs.recoverable_runs
  ADD COLUMN IF NOT EXISTS attempt integer NOT NULL DEFAULT 1,
  ADD COLUMN IF NOT EXISTS attempt_started_at timestamptz;

UPDATE jobs.recoverable_runs
   SET attempt_started_at = started_at
 WHERE attempt_started_at IS NULL;

ALTER TABLE jobs.recoverable_runs
  ALTER COLUMN attempt_started_at SET DEFAULT now(),
  ALTER COLUMN attempt_started_at SET NOT NULL;
