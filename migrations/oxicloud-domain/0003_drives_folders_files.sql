-- The OxiCloud-compatible storage domain, step 3: drives, the folder tree
-- and files (fact sheet §3, §4), with the triggers that keep the tree:
-- path/lpath, the cascade on rename and move, "every root folder belongs to
-- a drive" at commit, and drives.updated_at. Safe to run twice.

-- A drive: personal (its quota is the owner's envelope, so quota_bytes is
-- NULL) or shared (NULL = unlimited). No name and no owner column: the
-- display name is the root folder's name, the owner is an 'owner' grant
-- (storage.role_grants). root_folder_id is nullable only for the moment of
-- creation (drive, root folder, then the link, in one transaction).
CREATE TABLE IF NOT EXISTS storage.drives (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    kind              text NOT NULL,
    default_for_user  uuid REFERENCES auth.users (id) ON DELETE CASCADE,
    root_folder_id    uuid,
    quota_bytes       bigint,
    used_bytes        bigint NOT NULL DEFAULT 0,
    policies          jsonb NOT NULL DEFAULT '{}',
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT drives_kind_check CHECK (kind IN ('personal', 'shared')),
    CONSTRAINT drives_personal_quota_null CHECK (kind <> 'personal' OR quota_bytes IS NULL)
);
-- At most one default drive per user.
CREATE UNIQUE INDEX IF NOT EXISTS idx_drives_default_for_user_unique
    ON storage.drives (default_for_user) WHERE default_for_user IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_drives_kind ON storage.drives (kind);

-- Folders. path and lpath are written by trg_folders_path (a value given on
-- INSERT is overwritten); tree_modified_at is the collection-ETag clock,
-- written only by OxiCloud's flusher. original_parent_id has no foreign key.
CREATE TABLE IF NOT EXISTS storage.folders (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                text NOT NULL,
    parent_id           uuid REFERENCES storage.folders (id) ON DELETE CASCADE,
    path                text NOT NULL DEFAULT '',
    lpath               public.ltree NOT NULL DEFAULT '',
    is_trashed          boolean NOT NULL DEFAULT false,
    trashed_at          timestamptz,
    original_parent_id  uuid,
    created_at          timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at          timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
    tree_modified_at    timestamptz NOT NULL DEFAULT now(),
    drive_id            uuid NOT NULL REFERENCES storage.drives (id) ON DELETE CASCADE,
    created_by          uuid REFERENCES auth.users (id) ON DELETE SET NULL,
    updated_by          uuid REFERENCES auth.users (id) ON DELETE SET NULL
);

-- Deleting a drive's root folder deletes the drive (and, through drive_id,
-- everything in it). Added here because drives and folders point at each other.
DO $$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM pg_catalog.pg_constraint
         WHERE conrelid = 'storage.drives'::regclass AND conname = 'drives_root_folder_id_fkey'
    ) THEN
        ALTER TABLE storage.drives ADD CONSTRAINT drives_root_folder_id_fkey
            FOREIGN KEY (root_folder_id) REFERENCES storage.folders (id) ON DELETE CASCADE;
    END IF;
END $$;

-- Names are unique among the live children of a folder, byte for byte (the
-- roots of one drive too); trashed rows do not count.
CREATE UNIQUE INDEX IF NOT EXISTS idx_folders_unique_name ON storage.folders (parent_id, name, drive_id)
    WHERE NOT is_trashed AND parent_id IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS idx_folders_unique_name_root ON storage.folders (name, drive_id)
    WHERE NOT is_trashed AND parent_id IS NULL;
CREATE INDEX IF NOT EXISTS idx_folders_lpath ON storage.folders USING gist (lpath);
CREATE INDEX IF NOT EXISTS idx_folders_path ON storage.folders (path text_pattern_ops);
CREATE INDEX IF NOT EXISTS idx_folders_trash_expiry ON storage.folders (trashed_at) WHERE is_trashed;
CREATE INDEX IF NOT EXISTS idx_folders_drive_trashed ON storage.folders (drive_id, trashed_at) WHERE is_trashed;
CREATE INDEX IF NOT EXISTS idx_folders_parent_lname ON storage.folders (parent_id, lower(name));
CREATE INDEX IF NOT EXISTS idx_folders_name_trgm ON storage.folders USING gin (name public.gin_trgm_ops);
-- Not one OxiCloud's jobs rely on: it serves drive cascades and per-drive checks.
CREATE INDEX IF NOT EXISTS idx_folders_drive_id ON storage.folders (drive_id);

-- Files. blob_hash is the BLAKE3 of the whole plaintext, with no foreign key:
-- a chunk_manifests.file_hash, or (legacy, pre-CDC) a blobs.hash. drive_id
-- repeats the drive of the folder. category_order is the app's sort bucket.
CREATE TABLE IF NOT EXISTS storage.files (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                text NOT NULL,
    folder_id           uuid REFERENCES storage.folders (id) ON DELETE CASCADE,
    blob_hash           varchar(64) NOT NULL,
    size                bigint NOT NULL DEFAULT 0,
    mime_type           text NOT NULL DEFAULT 'application/octet-stream',
    is_trashed          boolean NOT NULL DEFAULT false,
    trashed_at          timestamptz,
    original_folder_id  uuid,
    created_at          timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at          timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
    media_sort_date     timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
    category_order      smallint NOT NULL DEFAULT 9999,
    drive_id            uuid NOT NULL REFERENCES storage.drives (id) ON DELETE CASCADE,
    created_by          uuid REFERENCES auth.users (id) ON DELETE SET NULL,
    updated_by          uuid REFERENCES auth.users (id) ON DELETE SET NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_files_unique_name_in_folder ON storage.files (drive_id, folder_id, name)
    WHERE NOT is_trashed AND folder_id IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS idx_files_unique_name_at_root ON storage.files (drive_id, name)
    WHERE NOT is_trashed AND folder_id IS NULL;
CREATE INDEX IF NOT EXISTS idx_files_blob_hash ON storage.files (blob_hash);
CREATE INDEX IF NOT EXISTS idx_files_trash_expiry ON storage.files (trashed_at) WHERE is_trashed;
CREATE INDEX IF NOT EXISTS idx_files_drive_trashed ON storage.files (drive_id, trashed_at) WHERE is_trashed;
CREATE INDEX IF NOT EXISTS idx_files_folder_name ON storage.files (folder_id, name);
CREATE INDEX IF NOT EXISTS idx_files_folder_lname ON storage.files (folder_id, lower(name));
CREATE INDEX IF NOT EXISTS idx_files_media_timeline_by_drive ON storage.files (drive_id, media_sort_date DESC);
CREATE INDEX IF NOT EXISTS idx_files_name_trgm ON storage.files USING gin (name public.gin_trgm_ops);

-- trg_folders_path, BEFORE INSERT OR UPDATE OF name, parent_id: path and
-- lpath from the parent row. A folder's ltree label is its uuid with every
-- '-' replaced by '_'. A root (no parent) gets path = name, with no leading
-- slash, and lpath = its label; a child gets parent.path || '/' || name and
-- parent.lpath || its label. An UPDATE that sets only path or lpath does not
-- fire it: to recompute a row, SET name = name.
CREATE OR REPLACE FUNCTION storage.compute_folder_path() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
DECLARE
    own_label     ltree := text2ltree(replace(NEW.id::text, '-', '_'));
    parent_path   text;
    parent_lpath  ltree;
BEGIN
    IF NEW.parent_id IS NULL THEN
        NEW.path := NEW.name;
        NEW.lpath := own_label;
        RETURN NEW;
    END IF;
    SELECT p.path, p.lpath INTO parent_path, parent_lpath FROM storage.folders p WHERE p.id = NEW.parent_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'parent folder % of folder % does not exist', NEW.parent_id, NEW.id
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    NEW.path := parent_path || '/' || NEW.name;
    NEW.lpath := parent_lpath || own_label;
    RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER trg_folders_path
    BEFORE INSERT OR UPDATE OF name, parent_id ON storage.folders
    FOR EACH ROW EXECUTE FUNCTION storage.compute_folder_path();

-- trg_folders_cascade_path, AFTER UPDATE OF name, parent_id, path, lpath,
-- drive_id: carries a rename or move down the subtree. Does nothing when
-- nested (pg_trigger_depth() > 1), so its own updates never cascade again.
-- - path or lpath changed: every descendant (lpath <@ OLD.lpath) is rewritten
--   by prefix substitution. It trusts that descendants start with OLD.path:
--   a drifted subtree is not healed by it (repair top-down with name = name).
-- - drive_id changed (a cross-drive move): the subtree's folders and files
--   that still had the old drive get the new one; a descendant already on a
--   third drive is left alone.
CREATE OR REPLACE FUNCTION storage.cascade_folder_path() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
BEGIN
    IF pg_trigger_depth() > 1 THEN
        RETURN NULL;
    END IF;
    IF NEW.path IS DISTINCT FROM OLD.path OR NEW.lpath IS DISTINCT FROM OLD.lpath THEN
        UPDATE storage.folders d
           SET path = NEW.path || substr(d.path, length(OLD.path) + 1),
               lpath = NEW.lpath || subpath(d.lpath, nlevel(OLD.lpath))
         WHERE d.lpath <@ OLD.lpath AND d.id <> NEW.id;
    END IF;
    IF NEW.drive_id IS DISTINCT FROM OLD.drive_id THEN
        UPDATE storage.folders d
           SET drive_id = NEW.drive_id
         WHERE d.lpath <@ NEW.lpath AND d.drive_id = OLD.drive_id;
        UPDATE storage.files f
           SET drive_id = NEW.drive_id
         WHERE f.drive_id = OLD.drive_id
           AND f.folder_id IN (SELECT d.id FROM storage.folders d WHERE d.lpath <@ NEW.lpath);
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER trg_folders_cascade_path
    AFTER UPDATE OF name, parent_id, path, lpath, drive_id ON storage.folders
    FOR EACH ROW EXECUTE FUNCTION storage.cascade_folder_path();

-- trg_no_orphan_root_folder, a constraint trigger checked at COMMIT: a root
-- folder (no parent) that is not trashed and still exists then must be the
-- root_folder_id of the drive it names, else "Orphan root folder rejected".
-- It reads the row as it is at commit, so a root deleted later in the same
-- transaction (a user delete cascading through the drive) passes. It fires
-- on any insert or update of a root, so touching a root whose drive link is
-- broken fails at commit.
CREATE OR REPLACE FUNCTION storage.check_no_orphan_root_folder() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    now_parent   uuid;
    now_trashed  boolean;
    now_drive    uuid;
BEGIN
    -- A later change that makes the row a live root queues an event of its own.
    IF NEW.parent_id IS NOT NULL OR NEW.is_trashed THEN
        RETURN NULL;
    END IF;
    SELECT f.parent_id, f.is_trashed, f.drive_id INTO now_parent, now_trashed, now_drive
      FROM storage.folders f WHERE f.id = NEW.id;
    IF NOT FOUND OR now_parent IS NOT NULL OR now_trashed THEN
        RETURN NULL;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM storage.drives d WHERE d.id = now_drive AND d.root_folder_id = NEW.id) THEN
        RAISE EXCEPTION 'Orphan root folder rejected: folder % has no parent and is not the root folder of drive %',
            NEW.id, now_drive
            USING ERRCODE = 'check_violation',
                  HINT = 'a root folder is created with its drive, which points at it (drives.root_folder_id), in one transaction';
    END IF;
    RETURN NULL;
END $$;

-- CREATE OR REPLACE does not apply to constraint triggers.
DROP TRIGGER IF EXISTS trg_no_orphan_root_folder ON storage.folders;
CREATE CONSTRAINT TRIGGER trg_no_orphan_root_folder
    AFTER INSERT OR UPDATE ON storage.folders
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION storage.check_no_orphan_root_folder();

-- trg_drives_touch_updated_at: every update of a drive sets updated_at.
CREATE OR REPLACE FUNCTION storage.drives_touch_updated_at() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.updated_at := now();
    RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER trg_drives_touch_updated_at
    BEFORE UPDATE ON storage.drives
    FOR EACH ROW EXECUTE FUNCTION storage.drives_touch_updated_at();
