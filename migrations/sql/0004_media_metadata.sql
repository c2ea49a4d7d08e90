-- Media metadata extracted from blobs: audio tags and image capture dates.
CREATE TABLE IF NOT EXISTS storage.audio_metadata (
    file_id           UUID PRIMARY KEY REFERENCES storage.files (id) ON DELETE CASCADE,
    title             TEXT,
    artist            TEXT,
    album             TEXT,
    genre             TEXT,
    year              INTEGER,
    track_number      INTEGER,
    duration_seconds  DOUBLE PRECISION,
    bitrate           INTEGER,
    codec             TEXT,
    extracted_at      TIMESTAMPTZ NOT NULL DEFAULT NOW()
);

CREATE TABLE IF NOT EXISTS storage.image_metadata (
    file_id       UUID PRIMARY KEY REFERENCES storage.files (id) ON DELETE CASCADE,
    captured_at   TIMESTAMPTZ,
    camera_make   TEXT,
    camera_model  TEXT,
    width         INTEGER,
    height        INTEGER,
    extracted_at  TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
