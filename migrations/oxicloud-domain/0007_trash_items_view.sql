-- The OxiCloud-compatible storage domain, step 7: the trash listing (fact
-- sheet §4). Safe to run twice.

-- The top-level trashed items only: a trashed file whose folder is not
-- trashed (or that has none), a trashed folder whose parent is not trashed
-- (or that is a root). Items trashed with a folder show through that folder.
-- original_parent_id is a file's original_folder_id. OxiCloud scopes the
-- listing per drive through drive grants.
CREATE OR REPLACE VIEW storage.trash_items AS
SELECT f.id,
       f.name,
       'file'::text AS item_type,
       f.trashed_at,
       f.original_folder_id AS original_parent_id,
       f.created_at,
       f.drive_id
  FROM storage.files f
  LEFT JOIN storage.folders container ON container.id = f.folder_id
 WHERE f.is_trashed AND (f.folder_id IS NULL OR NOT container.is_trashed)
UNION ALL
SELECT d.id,
       d.name,
       'folder'::text AS item_type,
       d.trashed_at,
       d.original_parent_id,
       d.created_at,
       d.drive_id
  FROM storage.folders d
  LEFT JOIN storage.folders parent ON parent.id = d.parent_id
 WHERE d.is_trashed AND (d.parent_id IS NULL OR NOT parent.is_trashed);
