-- Users: the owners of drives, and the admins who receive alerts and call the admin API.
CREATE TABLE IF NOT EXISTS auth.users (
    id                  UUID PRIMARY KEY DEFAULT public.oxicloud_uuid_v7(),
    username            TEXT NOT NULL UNIQUE CHECK (username <> ''),
    email               TEXT,
    role                TEXT NOT NULL DEFAULT 'user' CHECK (role IN ('admin', 'user')),
    quota_bytes         BIGINT CHECK (quota_bytes IS NULL OR quota_bytes >= 0),
    -- The "user envelope": the sum of used_bytes over the user's drives.
    storage_used_bytes  BIGINT NOT NULL DEFAULT 0,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT NOW()
);

CREATE INDEX IF NOT EXISTS users_role_idx ON auth.users (role);
