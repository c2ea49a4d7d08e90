-- The storage domain the tenants work on: drives, folders (with a
-- trigger-maintained materialised path and ltree lpath), content-addressed
-- blobs (ref_count kept by triggers on files), files and role grants.

CREATE TABLE IF NOT EXISTS storage.drives (
    id           UUID PRIMARY KEY DEFAULT public.oxicloud_uuid_v7(),
    owner_id     UUID NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    name         TEXT NOT NULL CHECK (name <> ''),
    used_bytes   BIGINT NOT NULL DEFAULT 0,
    quota_bytes  BIGINT CHECK (quota_bytes IS NULL OR quota_bytes >= 0),
    created_at   TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE INDEX IF NOT EXISTS drives_owner_idx ON storage.drives (owner_id);

CREATE TABLE IF NOT EXISTS storage.folders (
    id          UUID PRIMARY KEY DEFAULT public.oxicloud_uuid_v7(),
    drive_id    UUID NOT NULL REFERENCES storage.drives (id) ON DELETE CASCADE,
    parent_id   UUID REFERENCES storage.folders (id) ON DELETE CASCADE,
    name        TEXT NOT NULL CHECK (name <> '' AND position('/' IN name) = 0),
    -- Materialised by trigger from the parent chain: '/a/b/c'.
    path        TEXT NOT NULL DEFAULT '',
    -- Materialised by trigger: one label per ancestor (the folder id without dashes).
    lpath       LTREE NOT NULL DEFAULT ''::ltree,
    is_trashed  BOOLEAN NOT NULL DEFAULT FALSE,
    trashed_at  TIMESTAMPTZ,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE INDEX IF NOT EXISTS folders_drive_idx ON storage.folders (drive_id);
CREATE INDEX IF NOT EXISTS folders_parent_idx ON storage.folders (parent_id);
CREATE INDEX IF NOT EXISTS folders_lpath_idx ON storage.folders USING GIST (lpath);
CREATE INDEX IF NOT EXISTS folders_trashed_idx ON storage.folders (trashed_at) WHERE is_trashed;

CREATE OR REPLACE FUNCTION storage.folder_label(folder_id UUID) RETURNS LTREE
LANGUAGE sql IMMUTABLE AS $$ SELECT text2ltree(replace(folder_id::text, '-', '')) $$;

-- BEFORE INSERT / UPDATE OF parent_id, name: recompute path and lpath from the parent.
CREATE OR REPLACE FUNCTION storage.folders_materialise_path() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    parent_path  TEXT;
    parent_lpath LTREE;
BEGIN
    IF NEW.parent_id IS NULL THEN
        NEW.path := '/' || NEW.name;
        NEW.lpath := storage.folder_label(NEW.id);
    ELSE
        SELECT f.path, f.lpath INTO parent_path, parent_lpath
          FROM storage.folders f WHERE f.id = NEW.parent_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'parent folder % of folder % does not exist', NEW.parent_id, NEW.id;
        END IF;
        NEW.path := parent_path || '/' || NEW.name;
        NEW.lpath := parent_lpath || storage.folder_label(NEW.id);
    END IF;
    RETURN NEW;
END $$;

DROP TRIGGER IF EXISTS folders_materialise_path ON storage.folders;
CREATE TRIGGER folders_materialise_path
    BEFORE INSERT OR UPDATE OF parent_id, name ON storage.folders
    FOR EACH ROW EXECUTE FUNCTION storage.folders_materialise_path();

-- AFTER a folder's path changed: touch the children so their own trigger
-- recomputes them (recursively down the tree).
CREATE OR REPLACE FUNCTION storage.folders_cascade_path() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE storage.folders SET name = name WHERE parent_id = NEW.id;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS folders_cascade_path ON storage.folders;
CREATE TRIGGER folders_cascade_path
    AFTER UPDATE OF parent_id, name ON storage.folders
    FOR EACH ROW WHEN (OLD.path IS DISTINCT FROM NEW.path)
    EXECUTE FUNCTION storage.folders_cascade_path();

CREATE TABLE IF NOT EXISTS storage.blobs (
    hash          TEXT PRIMARY KEY CHECK (hash ~ '^[0-9a-f]{64}$'),
    size          BIGINT NOT NULL CHECK (size >= 0),
    ref_count     INTEGER NOT NULL DEFAULT 0 CHECK (ref_count >= 0),
    -- Set when ref_count is 0 (on insert or when the last reference goes);
    -- cleared when a reference arrives. dedup_gc collects after a grace.
    orphaned_at   TIMESTAMPTZ,
    content_type  TEXT,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE INDEX IF NOT EXISTS blobs_orphaned_idx ON storage.blobs (orphaned_at) WHERE ref_count = 0;

CREATE OR REPLACE FUNCTION storage.blobs_mark_orphan_on_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.ref_count = 0 AND NEW.orphaned_at IS NULL THEN
        NEW.orphaned_at := NOW();
    ELSIF NEW.ref_count > 0 THEN
        NEW.orphaned_at := NULL;
    END IF;
    RETURN NEW;
END $$;

DROP TRIGGER IF EXISTS blobs_mark_orphan_on_insert ON storage.blobs;
CREATE TRIGGER blobs_mark_orphan_on_insert
    BEFORE INSERT ON storage.blobs
    FOR EACH ROW EXECUTE FUNCTION storage.blobs_mark_orphan_on_insert();

CREATE TABLE IF NOT EXISTS storage.files (
    id          UUID PRIMARY KEY DEFAULT public.oxicloud_uuid_v7(),
    drive_id    UUID NOT NULL REFERENCES storage.drives (id) ON DELETE CASCADE,
    folder_id   UUID REFERENCES storage.folders (id) ON DELETE CASCADE,
    name        TEXT NOT NULL CHECK (name <> ''),
    -- No foreign key to storage.blobs on purpose: a file whose blob row is
    -- gone is exactly what files_consistency reports as missing_blob.
    blob_hash   TEXT NOT NULL CHECK (blob_hash ~ '^[0-9a-f]{64}$'),
    size        BIGINT NOT NULL CHECK (size >= 0),
    mime_type   TEXT NOT NULL DEFAULT 'application/octet-stream',
    is_trashed  BOOLEAN NOT NULL DEFAULT FALSE,
    trashed_at  TIMESTAMPTZ,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE INDEX IF NOT EXISTS files_drive_idx ON storage.files (drive_id);
CREATE INDEX IF NOT EXISTS files_folder_idx ON storage.files (folder_id);
-- Covering index for walks in blob order (files_consistency, ref counts).
CREATE INDEX IF NOT EXISTS files_blob_idx ON storage.files (blob_hash, id) INCLUDE (size, folder_id, is_trashed);
CREATE INDEX IF NOT EXISTS files_trashed_idx ON storage.files (trashed_at) WHERE is_trashed;
CREATE INDEX IF NOT EXISTS files_mime_idx ON storage.files (mime_type, id);

-- ref_count is kept by statement-level triggers with transition tables,
-- so a bulk insert of a million files is one UPDATE, not a million.
CREATE OR REPLACE FUNCTION storage.files_ref_count_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE storage.blobs b
       SET ref_count = b.ref_count + d.n, orphaned_at = NULL
      FROM (SELECT blob_hash, count(*)::int AS n FROM new_rows GROUP BY blob_hash) d
     WHERE b.hash = d.blob_hash;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION storage.files_ref_count_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE storage.blobs b
       SET ref_count = GREATEST(b.ref_count - d.n, 0),
           orphaned_at = CASE WHEN b.ref_count - d.n <= 0 THEN NOW() ELSE NULL END
      FROM (SELECT blob_hash, count(*)::int AS n FROM old_rows GROUP BY blob_hash) d
     WHERE b.hash = d.blob_hash;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION storage.files_ref_count_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE storage.blobs b
       SET ref_count = GREATEST(b.ref_count + d.n, 0),
           orphaned_at = CASE WHEN b.ref_count + d.n <= 0 THEN COALESCE(b.orphaned_at, NOW()) ELSE NULL END
      FROM (
            SELECT blob_hash, sum(n)::int AS n FROM (
                SELECT o.blob_hash, -1 AS n FROM old_rows o
                  JOIN new_rows nr ON nr.id = o.id AND nr.blob_hash <> o.blob_hash
                UNION ALL
                SELECT nr.blob_hash, 1 AS n FROM new_rows nr
                  JOIN old_rows o ON o.id = nr.id AND nr.blob_hash <> o.blob_hash
            ) x GROUP BY blob_hash
           ) d
     WHERE b.hash = d.blob_hash AND d.n <> 0;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS files_ref_count_insert ON storage.files;
CREATE TRIGGER files_ref_count_insert
    AFTER INSERT ON storage.files REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storage.files_ref_count_insert();

DROP TRIGGER IF EXISTS files_ref_count_delete ON storage.files;
CREATE TRIGGER files_ref_count_delete
    AFTER DELETE ON storage.files REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storage.files_ref_count_delete();

DROP TRIGGER IF EXISTS files_ref_count_update ON storage.files;
CREATE TRIGGER files_ref_count_update
    AFTER UPDATE ON storage.files REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storage.files_ref_count_update();

CREATE TABLE IF NOT EXISTS storage.role_grants (
    id             UUID PRIMARY KEY DEFAULT public.oxicloud_uuid_v7(),
    subject_id     UUID NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    resource_type  TEXT NOT NULL CHECK (resource_type IN ('drive', 'folder', 'file')),
    resource_id    UUID NOT NULL,
    role           TEXT NOT NULL CHECK (role IN ('viewer', 'editor', 'owner')),
    granted_by     UUID REFERENCES auth.users (id) ON DELETE SET NULL,
    created_at     TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    expires_at     TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS role_grants_expires_idx ON storage.role_grants (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS role_grants_subject_idx ON storage.role_grants (subject_id);
