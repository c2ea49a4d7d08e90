-- The OxiCloud-compatible storage domain, step 4: content (fact sheet §5).
-- A file's blob_hash names either a chunk manifest (CDC uploads: the bytes
-- are the manifest's chunks, in order) or, for legacy pre-CDC files, one
-- whole-file blob. Hashes are BLAKE3, 64 lowercase hex. Safe to run twice.

-- One row per object in the blob store (a CDC chunk or a legacy whole-file
-- blob), stored under <hash[0:2]>/<hash>.blob. size is the plaintext size.
-- orphaned_at means something only while ref_count = 0 (the GC's grace clock).
CREATE TABLE IF NOT EXISTS storage.blobs (
    hash          varchar(64) PRIMARY KEY,
    size          bigint NOT NULL,
    ref_count     integer NOT NULL DEFAULT 1,
    content_type  text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    orphaned_at   timestamptz,
    CONSTRAINT blobs_ref_count_check CHECK (ref_count >= 0)
);
CREATE INDEX IF NOT EXISTS idx_blobs_gc_eligible ON storage.blobs (orphaned_at) WHERE ref_count = 0;

-- One row per distinct CDC file content. chunk_hashes lists one entry per
-- occurrence (repeats possible), chunk_sizes is aligned with it. An empty
-- file has empty arrays (use cardinality(), not array_length()). No object
-- in the store and no orphaned_at.
CREATE TABLE IF NOT EXISTS storage.chunk_manifests (
    file_hash     varchar(64) PRIMARY KEY,
    chunk_hashes  text[] NOT NULL,
    chunk_sizes   bigint[] NOT NULL,
    total_size    bigint NOT NULL,
    chunk_count   integer NOT NULL,
    content_type  text,
    ref_count     integer NOT NULL DEFAULT 1,
    created_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT chunk_manifests_ref_count_check CHECK (ref_count >= 0)
);
-- Which manifests list a chunk: chunk_hashes @> ARRAY[hash::text].
CREATE INDEX IF NOT EXISTS idx_chunk_manifests_chunk_hashes_gin ON storage.chunk_manifests USING gin (chunk_hashes);
-- The GC's first phase: manifests nothing counts any more.
CREATE INDEX IF NOT EXISTS idx_chunk_manifests_ref_count_zero ON storage.chunk_manifests (created_at)
    WHERE ref_count = 0;

-- trg_files_decrement_blob_ref, AFTER DELETE on storage.files, per row: the
-- one reference-count trigger. The blobs row named OLD.blob_hash (if there
-- is one: a multi-chunk file's hash has none) loses one reference, never
-- below 0, and when the count is 0 after it, orphaned_at is set to now().
-- It fires on every delete path (direct, folder/drive/user cascades, trash
-- purges) and never touches chunk_manifests. There is no trigger for
-- inserts: OxiCloud's app takes the references itself.
CREATE OR REPLACE FUNCTION storage.decrement_blob_ref() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE storage.blobs b
       SET ref_count = greatest(b.ref_count - 1, 0),
           orphaned_at = CASE WHEN b.ref_count <= 1 THEN now() ELSE b.orphaned_at END
     WHERE b.hash = OLD.blob_hash;
    RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER trg_files_decrement_blob_ref
    AFTER DELETE ON storage.files
    FOR EACH ROW EXECUTE FUNCTION storage.decrement_blob_ref();
