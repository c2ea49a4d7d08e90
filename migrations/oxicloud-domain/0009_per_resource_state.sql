-- The OxiCloud-compatible storage domain, step 9: the other state that
-- hangs off files, folders and users (fact sheet §10), and the calendar and
-- address-book collections grants can name. Safe to run twice.

-- WebDAV dead properties: resource state shared by all users, on exactly one
-- folder or file; a rename or move changes nothing.
CREATE TABLE IF NOT EXISTS storage.webdav_dead_properties (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    namespace   text NOT NULL DEFAULT '',
    local_name  text NOT NULL,
    value       text,
    created_at  timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at  timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
    folder_id   uuid REFERENCES storage.folders (id) ON DELETE CASCADE,
    file_id     uuid REFERENCES storage.files (id) ON DELETE CASCADE,
    CONSTRAINT webdav_dead_properties_one_resource_chk CHECK ((folder_id IS NULL) <> (file_id IS NULL))
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_webdav_dead_props_file_unique
    ON storage.webdav_dead_properties (file_id, namespace, local_name) WHERE file_id IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS idx_webdav_dead_props_folder_unique
    ON storage.webdav_dead_properties (folder_id, namespace, local_name) WHERE folder_id IS NOT NULL;

-- The numeric file ids NextCloud clients see and cache: no foreign key, rows
-- are never deleted, and ids are never renumbered.
CREATE TABLE IF NOT EXISTS storage.nextcloud_object_ids (
    id           bigserial PRIMARY KEY,
    object_type  text NOT NULL,
    object_id    uuid NOT NULL,
    UNIQUE (object_type, object_id),
    CONSTRAINT nextcloud_object_ids_object_type_check CHECK (object_type IN ('file', 'folder'))
);

-- Text extracted for content search, per content hash (= files.blob_hash,
-- no foreign key).
CREATE TABLE IF NOT EXISTS storage.blob_extracted_text (
    blob_hash     varchar(64) PRIMARY KEY,
    text          text,
    status        text NOT NULL,
    extractor     text NOT NULL,
    extracted_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT blob_extracted_text_status_check CHECK (status IN ('ok', 'empty', 'failed', 'too_large'))
);

-- External storage mounted on a folder: what lies below the mount folder is
-- virtual and never stored in storage.files. kind and visibility have no
-- default: the app names them.
CREATE TABLE IF NOT EXISTS storage.external_mounts (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    mount_folder_id  uuid NOT NULL UNIQUE REFERENCES storage.folders (id) ON DELETE CASCADE,
    kind             text NOT NULL,
    config           jsonb NOT NULL DEFAULT '{}',
    name             text NOT NULL,
    owner_id         uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    read_only        boolean NOT NULL DEFAULT false,
    visibility       text NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);

-- Calendars and address books, as far as grants (resource types 'calendar'
-- and 'address_book') and the user cascade meet them; their content tables
-- are not part of this domain. The id has no default: the app supplies it.
CREATE TABLE IF NOT EXISTS caldav.calendars (
    id           uuid PRIMARY KEY,
    name         text NOT NULL,
    owner_id     uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    description  text,
    color        varchar(9),
    is_public    boolean NOT NULL DEFAULT false,
    ctag         varchar(64) NOT NULL DEFAULT '0',
    created_at   timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at   timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE IF NOT EXISTS carddav.address_books (
    id           uuid PRIMARY KEY,
    name         text NOT NULL,
    owner_id     uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    description  text,
    color        varchar(9),
    is_public    boolean NOT NULL DEFAULT false,
    ctag         varchar(64) NOT NULL DEFAULT '0',
    created_at   timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at   timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP
);
