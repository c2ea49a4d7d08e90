-- The OxiCloud-compatible storage domain, step 2: users, subject groups and
-- the per-user tables that point at items (fact sheet §2, §10). Safe to run
-- twice. The grant cleanup trigger on auth.users is in 0005, beside the
-- grants it deletes.

-- Users. `role` has no default; `storage_quota_bytes` <= 0 means unlimited;
-- `storage_used_bytes` is the cached "envelope" (the sum over the personal
-- drives the user owns). External users are grant-only recipients: never an
-- admin, never any storage. `email` is compared byte for byte (not citext).
CREATE TABLE IF NOT EXISTS auth.users (
    id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    username             text,
    email                text NOT NULL,
    password_hash        text,
    role                 auth.userrole NOT NULL,
    storage_quota_bytes  bigint NOT NULL DEFAULT 10737418240,
    storage_used_bytes   bigint NOT NULL DEFAULT 0,
    created_at           timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at           timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
    last_login_at        timestamptz,
    active               boolean NOT NULL DEFAULT true,
    oidc_provider        varchar(255),
    oidc_subject         varchar(255),
    image                text,
    is_external          boolean NOT NULL DEFAULT false,
    given_name           text,
    family_name          text,
    email_verified_at    timestamptz,
    preferred_locale     text,
    notify_on_share      boolean NOT NULL DEFAULT true,
    ui_preferences       jsonb NOT NULL DEFAULT '{}',
    CONSTRAINT users_email_key UNIQUE (email),
    -- Several users may have no username (NULLs are distinct).
    CONSTRAINT users_username_key UNIQUE (username),
    CONSTRAINT users_username_shape_v2
        CHECK (username IS NULL OR (username !~ '@' AND char_length(username) BETWEEN 2 AND 64)),
    CONSTRAINT users_external_not_admin CHECK (NOT (is_external AND role = 'admin')),
    CONSTRAINT users_external_no_storage CHECK (NOT is_external OR storage_used_bytes = 0),
    -- A language tag of BCP-47 shape: a 2-3 letter language, then subtags.
    CONSTRAINT users_preferred_locale_check
        CHECK (preferred_locale IS NULL OR preferred_locale ~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$'),
    CONSTRAINT users_ui_preferences_is_object CHECK (jsonb_typeof(ui_preferences) = 'object'),
    CONSTRAINT users_ui_preferences_size_cap CHECK (octet_length(ui_preferences::text) <= 16384)
);
-- One account per OIDC identity, when the user has one.
CREATE UNIQUE INDEX IF NOT EXISTS idx_users_oidc ON auth.users (oidc_provider, oidc_subject)
    WHERE oidc_provider IS NOT NULL AND oidc_subject IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_users_email_trgm ON auth.users USING gin (email public.gin_trgm_ops);
CREATE INDEX IF NOT EXISTS idx_users_username_trgm ON auth.users USING gin (username public.gin_trgm_ops);
-- The admin list, newest first. (OxiCloud builds it CONCURRENTLY on a live
-- database; here it is created with the empty table.)
CREATE INDEX IF NOT EXISTS idx_users_created_at_desc ON auth.users (created_at DESC);

-- Subject groups: grants may name a group (role_grants.subject_type = 'group').
CREATE TABLE IF NOT EXISTS auth.subject_groups (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name         public.citext NOT NULL,
    description  text,
    is_virtual   boolean NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT subject_groups_name_uq UNIQUE (name),
    CONSTRAINT subject_groups_name_rfc5321 CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$')
);

-- The virtual group every internal user belongs to, with no member rows
-- (membership is implicit; OxiCloud's app refuses to change or delete it).
INSERT INTO auth.subject_groups (id, name, description, is_virtual)
VALUES ('00000000-0000-0000-0000-000000000001', 'Internal', 'Every internal (non-external) user', true)
ON CONFLICT DO NOTHING;

-- Group membership: a member is a user or another group, never both, never
-- the group itself. No primary key. Deleting a user who added members is
-- refused (added_by has no ON DELETE).
CREATE TABLE IF NOT EXISTS auth.subject_group_members (
    group_id         uuid NOT NULL REFERENCES auth.subject_groups (id) ON DELETE CASCADE,
    member_user_id   uuid REFERENCES auth.users (id) ON DELETE CASCADE,
    member_group_id  uuid REFERENCES auth.subject_groups (id) ON DELETE CASCADE,
    added_at         timestamptz NOT NULL DEFAULT now(),
    added_by         uuid NOT NULL REFERENCES auth.users (id),
    CONSTRAINT subject_group_members_xor CHECK ((member_user_id IS NULL) <> (member_group_id IS NULL)),
    CONSTRAINT subject_group_members_no_self CHECK (member_group_id IS NULL OR member_group_id <> group_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_subject_group_members_user
    ON auth.subject_group_members (group_id, member_user_id) WHERE member_user_id IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS idx_subject_group_members_group
    ON auth.subject_group_members (group_id, member_group_id) WHERE member_group_id IS NOT NULL;

-- Favourites and recent items: item_id is a uuid as text, with no foreign
-- key to the item and no cleanup when it goes (listings skip missing items).
CREATE TABLE IF NOT EXISTS auth.user_favorites (
    id          serial PRIMARY KEY,
    user_id     uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    item_id     text NOT NULL,
    item_type   text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
    UNIQUE (user_id, item_id, item_type)
);
CREATE TABLE IF NOT EXISTS auth.user_recent_files (
    id           serial PRIMARY KEY,
    user_id      uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    item_id      text NOT NULL,
    item_type    text NOT NULL,
    accessed_at  timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
    UNIQUE (user_id, item_id, item_type)
);

-- Magic sign-in links; a link may name a file or folder (no foreign key).
CREATE TABLE IF NOT EXISTS auth.magic_link_tokens (
    id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    token              text NOT NULL UNIQUE,
    user_id            uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    status             auth.magic_link_status NOT NULL DEFAULT 'pending',
    issued_at          timestamptz NOT NULL DEFAULT now(),
    expires_at         timestamptz NOT NULL,
    used_at            timestamptz,
    resource_type      text,
    resource_id        uuid,
    request_challenge  text,
    CONSTRAINT magic_link_tokens_resource_pair CHECK ((resource_type IS NULL) = (resource_id IS NULL)),
    CONSTRAINT magic_link_tokens_resource_type_check
        CHECK (resource_type IS NULL OR resource_type IN ('file', 'folder'))
);
