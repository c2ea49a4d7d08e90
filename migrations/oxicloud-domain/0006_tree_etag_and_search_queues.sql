-- The OxiCloud-compatible storage domain, step 6: the two queues that
-- statement-level triggers on folders and files feed (fact sheet §4).
-- OxiCloud drains them (its tree-ETag flusher, its content-index worker); a
-- repair job must never truncate them nor write folders.tree_modified_at.
-- Safe to run twice.

-- Folders whose collection ETag must move: the captured lpath, the folder
-- and its drive. No foreign keys. To force a bump without changing data,
-- insert (lpath, folder_id, drive_id) here.
CREATE TABLE IF NOT EXISTS storage.tree_etag_dirty (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    lpath      public.ltree NOT NULL,
    folder_id  uuid,
    drive_id   uuid
);

-- Files whose content-search entry must be rewritten or dropped. No foreign key.
CREATE TABLE IF NOT EXISTS storage.search_index_dirty (
    id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    file_id  uuid NOT NULL,
    op       text NOT NULL,
    CONSTRAINT search_index_dirty_op_check CHECK (op IN ('upsert', 'delete'))
);

-- files_bump_tree_etag_ins / _del, AFTER INSERT / DELETE on storage.files,
-- per statement: one row (folder.lpath, folder.id, folder.drive_id) per
-- distinct folder the statement's files are in. Nothing when nested
-- (pg_trigger_depth() > 1): a statement run by another trigger's body, such
-- as trg_folders_cascade_path's updates. An ON DELETE CASCADE is not nested
-- in that sense: Postgres queues the cascaded rows' triggers on the outer
-- statement, so they run at depth 1 and the files it deletes are enqueued.
CREATE OR REPLACE FUNCTION storage.bump_tree_from_files_stmt() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
BEGIN
    IF pg_trigger_depth() > 1 THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'INSERT' THEN
        INSERT INTO storage.tree_etag_dirty (lpath, folder_id, drive_id)
        SELECT f.lpath, f.id, f.drive_id FROM storage.folders f
         WHERE f.id IN (SELECT n.folder_id FROM new_rows n);
    ELSE
        INSERT INTO storage.tree_etag_dirty (lpath, folder_id, drive_id)
        SELECT f.lpath, f.id, f.drive_id FROM storage.folders f
         WHERE f.id IN (SELECT o.folder_id FROM old_rows o);
    END IF;
    RETURN NULL;
END $$;

-- files_bump_tree_etag_upd, AFTER UPDATE on storage.files, per statement:
-- for the rows whose name, folder_id, blob_hash, size, mime_type, is_trashed
-- or updated_at changed, the old and the new folder (one row each). Nothing
-- when nested.
CREATE OR REPLACE FUNCTION storage.bump_tree_from_files_stmt_upd() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
BEGIN
    IF pg_trigger_depth() > 1 THEN
        RETURN NULL;
    END IF;
    WITH changed AS (
        SELECT o.folder_id AS old_folder, n.folder_id AS new_folder
          FROM old_rows o JOIN new_rows n ON n.id = o.id
         WHERE (o.name, o.folder_id, o.blob_hash, o.size, o.mime_type, o.is_trashed, o.updated_at)
               IS DISTINCT FROM (n.name, n.folder_id, n.blob_hash, n.size, n.mime_type, n.is_trashed, n.updated_at)
    )
    INSERT INTO storage.tree_etag_dirty (lpath, folder_id, drive_id)
    SELECT f.lpath, f.id, f.drive_id FROM storage.folders f
     WHERE f.id IN (SELECT old_folder FROM changed UNION SELECT new_folder FROM changed);
    RETURN NULL;
END $$;

-- folders_bump_tree_etag_ins / _del, AFTER INSERT / DELETE on
-- storage.folders, per statement: for each non-root row, its parent
-- (subpath(lpath, 0, nlevel(lpath) - 1), parent_id, drive_id). Nothing when
-- nested; the folders an ON DELETE CASCADE deletes are enqueued (depth 1),
-- their parents being deleted too (the flusher bumps what is left).
CREATE OR REPLACE FUNCTION storage.bump_tree_from_folders_stmt() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
BEGIN
    IF pg_trigger_depth() > 1 THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'INSERT' THEN
        INSERT INTO storage.tree_etag_dirty (lpath, folder_id, drive_id)
        SELECT DISTINCT subpath(n.lpath, 0, nlevel(n.lpath) - 1), n.parent_id, n.drive_id
          FROM new_rows n WHERE n.parent_id IS NOT NULL;
    ELSE
        INSERT INTO storage.tree_etag_dirty (lpath, folder_id, drive_id)
        SELECT DISTINCT subpath(o.lpath, 0, nlevel(o.lpath) - 1), o.parent_id, o.drive_id
          FROM old_rows o WHERE o.parent_id IS NOT NULL;
    END IF;
    RETURN NULL;
END $$;

-- folders_bump_tree_etag_upd, AFTER UPDATE on storage.folders, per
-- statement: for the rows whose name, parent_id, is_trashed or updated_at
-- changed, the old and the new parent (non-root rows). Nothing when nested,
-- so the cascade's rewrite of a subtree adds nothing.
CREATE OR REPLACE FUNCTION storage.bump_tree_from_folders_stmt_upd() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
BEGIN
    IF pg_trigger_depth() > 1 THEN
        RETURN NULL;
    END IF;
    WITH changed AS (
        SELECT o.lpath AS old_lpath, o.parent_id AS old_parent, o.drive_id AS old_drive,
               n.lpath AS new_lpath, n.parent_id AS new_parent, n.drive_id AS new_drive
          FROM old_rows o JOIN new_rows n ON n.id = o.id
         WHERE (o.name, o.parent_id, o.is_trashed, o.updated_at)
               IS DISTINCT FROM (n.name, n.parent_id, n.is_trashed, n.updated_at)
    )
    INSERT INTO storage.tree_etag_dirty (lpath, folder_id, drive_id)
    SELECT subpath(old_lpath, 0, nlevel(old_lpath) - 1), old_parent, old_drive
      FROM changed WHERE old_parent IS NOT NULL
    UNION
    SELECT subpath(new_lpath, 0, nlevel(new_lpath) - 1), new_parent, new_drive
      FROM changed WHERE new_parent IS NOT NULL;
    RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER files_bump_tree_etag_ins
    AFTER INSERT ON storage.files REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storage.bump_tree_from_files_stmt();
CREATE OR REPLACE TRIGGER files_bump_tree_etag_upd
    AFTER UPDATE ON storage.files REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storage.bump_tree_from_files_stmt_upd();
CREATE OR REPLACE TRIGGER files_bump_tree_etag_del
    AFTER DELETE ON storage.files REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storage.bump_tree_from_files_stmt();
CREATE OR REPLACE TRIGGER folders_bump_tree_etag_ins
    AFTER INSERT ON storage.folders REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storage.bump_tree_from_folders_stmt();
CREATE OR REPLACE TRIGGER folders_bump_tree_etag_upd
    AFTER UPDATE ON storage.folders REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storage.bump_tree_from_folders_stmt_upd();
CREATE OR REPLACE TRIGGER folders_bump_tree_etag_del
    AFTER DELETE ON storage.folders REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storage.bump_tree_from_folders_stmt();

-- files_enqueue_search_ins / _upd / _del, per statement, with no depth
-- guard (files deleted by a folder, drive or user cascade are enqueued too):
-- an insert enqueues 'upsert' for each live row; a delete 'delete' for each
-- row; an update, for the rows whose name, blob_hash or is_trashed changed,
-- 'delete' when the row is now trashed, else 'upsert'.
CREATE OR REPLACE FUNCTION storage.enqueue_search_from_files_stmt() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO storage.search_index_dirty (file_id, op)
        SELECT n.id, 'upsert' FROM new_rows n WHERE NOT n.is_trashed;
    ELSE
        INSERT INTO storage.search_index_dirty (file_id, op)
        SELECT o.id, 'delete' FROM old_rows o;
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION storage.enqueue_search_from_files_stmt_upd() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO storage.search_index_dirty (file_id, op)
    SELECT n.id, CASE WHEN n.is_trashed THEN 'delete' ELSE 'upsert' END
      FROM old_rows o JOIN new_rows n ON n.id = o.id
     WHERE (o.name, o.blob_hash, o.is_trashed) IS DISTINCT FROM (n.name, n.blob_hash, n.is_trashed);
    RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER files_enqueue_search_ins
    AFTER INSERT ON storage.files REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storage.enqueue_search_from_files_stmt();
CREATE OR REPLACE TRIGGER files_enqueue_search_upd
    AFTER UPDATE ON storage.files REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storage.enqueue_search_from_files_stmt_upd();
CREATE OR REPLACE TRIGGER files_enqueue_search_del
    AFTER DELETE ON storage.files REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storage.enqueue_search_from_files_stmt();
