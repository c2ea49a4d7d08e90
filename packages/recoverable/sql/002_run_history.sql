-- @oxicloud/recoverable schema version 2 (the server's former migrations/sql/0008_run_history.sql).
-- A run's history beside its status (issue: honest progress and history).
--
-- pauses         why and when a run was paused, oldest first, the last 32:
--                [{"at": "<ISO time>", "reason": "server restart mid-run"}, …].
--                A pause is history, not an error: error_message is only the
--                message of a Failed run.
-- active_ms      milliseconds the run actually ran, summed over its running
--                segments (time paused or with the server down is not in it).
-- running_since  start of the current running segment (insert or resume);
--                NULL while the run is not running.
ALTER TABLE jobs.recoverable_runs
    ADD COLUMN IF NOT EXISTS pauses JSONB NOT NULL DEFAULT '[]'::jsonb,
    ADD COLUMN IF NOT EXISTS active_ms BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS running_since TIMESTAMPTZ;

-- Runs the old boot sweep marked: the message becomes a pause in the history
-- (time unknown: the last progress before it), and leaves error_message
-- unless the run later failed with it. Re-running finds nothing to move.
UPDATE jobs.recoverable_runs
   SET pauses = pauses || jsonb_build_array(jsonb_build_object(
                  'at', to_jsonb(last_progress_at), 'reason', error_message)),
       error_message = NULL
 WHERE error_message = 'server restart mid-run'
   AND status <> 'Failed';
