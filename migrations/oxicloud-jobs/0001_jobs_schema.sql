-- The engine's own schema beside OxiCloud's storage domain: on that domain
-- `sql/0001_schemas.sql` (the old model's extensions, schemas and
-- public.oxicloud_uuid_v7()) is not applied, so the `jobs` schema the
-- server's `0010_job_registrations.sql` writes into is created here.
CREATE SCHEMA IF NOT EXISTS jobs;
