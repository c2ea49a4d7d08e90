-- The OxiCloud-compatible storage domain, step 5: grants and share links
-- (fact sheet §2, §8), and the triggers that delete a grant when its subject
-- or its resource goes. Safe to run twice.

-- One role per (subject, resource). No foreign keys at all: a grant may name
-- a subject or a resource that does not exist. A grant is active while
-- expires_at is NULL or in the future; expired rows stay until a purge.
-- granted_by is provenance only (no foreign key, never cleaned).
CREATE TABLE IF NOT EXISTS storage.role_grants (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    subject_type   text NOT NULL,
    subject_id     uuid NOT NULL,
    resource_type  text NOT NULL,
    resource_id    uuid NOT NULL,
    role           storage.grant_role NOT NULL,
    granted_by     uuid NOT NULL,
    granted_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz,
    UNIQUE (subject_type, subject_id, resource_type, resource_id),
    CONSTRAINT role_grants_subject_type_check CHECK (subject_type IN ('user', 'group', 'token')),
    CONSTRAINT role_grants_resource_type_check
        CHECK (resource_type IN ('folder', 'file', 'drive', 'calendar', 'address_book', 'playlist'))
);
CREATE INDEX IF NOT EXISTS idx_role_grants_subject ON storage.role_grants (subject_type, subject_id);
CREATE INDEX IF NOT EXISTS idx_role_grants_resource ON storage.role_grants (resource_type, resource_id);
CREATE INDEX IF NOT EXISTS idx_role_grants_expires_at ON storage.role_grants (expires_at)
    WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_role_grants_granted_by ON storage.role_grants (granted_by);

-- A share link: a token subject with exactly one grant
-- ('token', shares.id, item_type, item_id::uuid, 'viewer'); the link's expiry
-- is the grant's expires_at. item_id is text with no foreign key;
-- created_at is unix seconds.
CREATE TABLE IF NOT EXISTS storage.shares (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    item_id        text NOT NULL,
    item_name      text,
    item_type      text NOT NULL,
    token          varchar(36) NOT NULL UNIQUE,
    password_hash  text,
    created_at     bigint NOT NULL,
    created_by     uuid NOT NULL,
    access_count   bigint NOT NULL DEFAULT 0,
    CONSTRAINT shares_item_type_check CHECK (item_type IN ('file', 'folder'))
);

-- AFTER DELETE of a subject: deletes its grants. The subject type is the
-- trigger's argument: 'user' on auth.users, 'token' on storage.shares.
CREATE OR REPLACE FUNCTION storage.cleanup_role_grants_on_subject_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM storage.role_grants g WHERE g.subject_type = TG_ARGV[0] AND g.subject_id = OLD.id;
    RETURN NULL;
END $$;

-- AFTER DELETE of a resource: deletes the grants on it. The resource type is
-- the trigger's argument: 'folder' on storage.folders (folders deleted by a
-- cascade fire it too), 'file' on storage.files. Drives, groups, calendars,
-- address books and playlists have no such trigger: OxiCloud's app revokes
-- those grants itself.
CREATE OR REPLACE FUNCTION storage.cleanup_role_grants_on_resource_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM storage.role_grants g WHERE g.resource_type = TG_ARGV[0] AND g.resource_id = OLD.id;
    RETURN NULL;
END $$;

-- The reverse cascade, AFTER DELETE on storage.role_grants: when a token
-- grant goes and its token has no grant left, the share row goes too.
CREATE OR REPLACE FUNCTION storage.cleanup_share_on_last_role_grant_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.subject_type = 'token' AND NOT EXISTS (
        SELECT 1 FROM storage.role_grants g WHERE g.subject_type = 'token' AND g.subject_id = OLD.subject_id
    ) THEN
        DELETE FROM storage.shares s WHERE s.id = OLD.subject_id;
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER trg_cleanup_role_grants_user
    AFTER DELETE ON auth.users
    FOR EACH ROW EXECUTE FUNCTION storage.cleanup_role_grants_on_subject_delete('user');
CREATE OR REPLACE TRIGGER trg_cleanup_role_grants_token
    AFTER DELETE ON storage.shares
    FOR EACH ROW EXECUTE FUNCTION storage.cleanup_role_grants_on_subject_delete('token');
CREATE OR REPLACE TRIGGER trg_cleanup_role_grants_folder
    AFTER DELETE ON storage.folders
    FOR EACH ROW EXECUTE FUNCTION storage.cleanup_role_grants_on_resource_delete('folder');
CREATE OR REPLACE TRIGGER trg_cleanup_role_grants_file
    AFTER DELETE ON storage.files
    FOR EACH ROW EXECUTE FUNCTION storage.cleanup_role_grants_on_resource_delete('file');
CREATE OR REPLACE TRIGGER trg_cleanup_share_on_role_grant_delete
    AFTER DELETE ON storage.role_grants
    FOR EACH ROW EXECUTE FUNCTION storage.cleanup_share_on_last_role_grant_delete();

-- The groups a user is in, directly or through groups that are members of
-- groups (cycles end: UNION keeps each group once). It does not include the
-- virtual Internal group, whose membership is implicit: SQL that checks
-- group grants with it ignores grants made to Internal.
CREATE OR REPLACE FUNCTION storage.caller_group_ids(caller uuid) RETURNS SETOF uuid
LANGUAGE sql STABLE AS $$
    WITH RECURSIVE member_of (group_id) AS (
        SELECT m.group_id FROM auth.subject_group_members m WHERE m.member_user_id = caller
        UNION
        SELECT m.group_id
          FROM auth.subject_group_members m JOIN member_of g ON m.member_group_id = g.group_id
    )
    SELECT group_id FROM member_of
$$;
