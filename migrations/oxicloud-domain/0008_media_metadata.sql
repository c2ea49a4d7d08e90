-- The OxiCloud-compatible storage domain, step 8: media metadata, playlists
-- and faces (fact sheet §9, §10). Every row here goes with its file (ON
-- DELETE CASCADE). Safe to run twice.

-- Image and video capture data, one row per file (EXIF orientation 1-8).
CREATE TABLE IF NOT EXISTS storage.file_metadata (
    file_id       uuid PRIMARY KEY REFERENCES storage.files (id) ON DELETE CASCADE,
    captured_at   timestamptz,
    latitude      double precision,
    longitude     double precision,
    camera_make   text,
    camera_model  text,
    orientation   smallint,
    width         integer,
    height        integer,
    created_at    timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX IF NOT EXISTS idx_file_metadata_geo ON storage.file_metadata (longitude, latitude)
    WHERE latitude IS NOT NULL AND longitude IS NOT NULL;

-- trg_sync_media_sort_date, AFTER INSERT OR UPDATE OF captured_at: the
-- file's timeline date becomes the capture date, or its created_at when
-- there is none. Deleting a metadata row changes nothing (no DELETE trigger).
CREATE OR REPLACE FUNCTION storage.sync_media_sort_date() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE storage.files f
       SET media_sort_date = COALESCE(NEW.captured_at, f.created_at)
     WHERE f.id = NEW.file_id;
    RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER trg_sync_media_sort_date
    AFTER INSERT OR UPDATE OF captured_at ON storage.file_metadata
    FOR EACH ROW EXECUTE FUNCTION storage.sync_media_sort_date();

-- Audio tags, one row per file.
CREATE TABLE IF NOT EXISTS audio.file_metadata (
    file_id        uuid PRIMARY KEY REFERENCES storage.files (id) ON DELETE CASCADE,
    title          text,
    artist         text,
    album          text,
    album_artist   text,
    genre          text,
    track_number   integer,
    disc_number    integer,
    year           integer,
    duration_secs  integer NOT NULL DEFAULT 0,
    bitrate        integer,
    sample_rate    integer,
    channels       smallint,
    format         text,
    created_at     timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at     timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- Playlists (grants may name one: resource_type 'playlist') and their items.
CREATE TABLE IF NOT EXISTS audio.playlists (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name           text NOT NULL,
    description    text,
    owner_id       uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    is_public      boolean NOT NULL DEFAULT false,
    cover_file_id  uuid REFERENCES storage.files (id) ON DELETE SET NULL,
    created_at     timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at     timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE IF NOT EXISTS audio.playlist_items (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    playlist_id  uuid NOT NULL REFERENCES audio.playlists (id) ON DELETE CASCADE,
    file_id      uuid NOT NULL REFERENCES storage.files (id) ON DELETE CASCADE,
    position     integer NOT NULL,
    added_at     timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
    UNIQUE (playlist_id, file_id)
);

-- Faces found in a user's photos, and the persons they are grouped into.
-- blob_hash repeats the file's content hash, with no foreign key.
CREATE TABLE IF NOT EXISTS faces.persons (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id        uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    display_name   text,
    cover_face_id  uuid,
    is_hidden      boolean NOT NULL DEFAULT false,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS faces.faces (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    file_id     uuid NOT NULL REFERENCES storage.files (id) ON DELETE CASCADE,
    user_id     uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    person_id   uuid REFERENCES faces.persons (id) ON DELETE SET NULL,
    bbox        real[] NOT NULL,
    det_score   real NOT NULL,
    quality     real,
    embedding   bytea NOT NULL,
    blob_hash   varchar(64),
    created_at  timestamptz NOT NULL DEFAULT now()
);
