-- @oxicloud/consistency schema version 4: a plan item whose resource
-- re-verified as already right when the run reached it (another job, or a
-- person, fixed it since the plan) is `already_consistent`: nothing was
-- written, and its finding is fixed by the run like an applied one.
-- Idempotent: safe to apply again.
ALTER TABLE jobs.repair_plan_items DROP CONSTRAINT IF EXISTS repair_plan_items_status_check;
ALTER TABLE jobs.repair_plan_items ADD CONSTRAINT repair_plan_items_status_check
    CHECK (status IN ('pending', 'applied', 'already_consistent', 'skipped', 'needs_person'));
