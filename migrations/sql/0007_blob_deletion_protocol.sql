-- The blob deletion protocol: no file reference can slip past dedup_gc.
--
-- There is still no foreign key from storage.files.blob_hash to
-- storage.blobs (missing_blob must stay representable: the dataset generator
-- injects it, files_consistency reports it, repair acts on it). Instead:
--
--   1. Mark. Under the blob row lock (SELECT … FOR UPDATE), dedup_gc confirms
--      ref_count = 0, the grace, and that no row of storage.files references
--      the hash (files_blob_idx), then sets deleting_at and commits. A blob
--      whose ref_count says 0 but which files reference is not marked: GC
--      counts it (skipped_referenced).
--   2. Refuse. Every new reference (a file INSERT, or an UPDATE that changes
--      blob_hash) first locks the referenced blob rows (waiting on a GC that
--      holds them), then raises if a row is missing (SQLSTATE OXB02) or marked
--      (SQLSTATE OXB01). The upload fails and can reserve the blob again
--      (reserveBlob in @oxicloud/storage), instead of committing a file
--      without bytes.
--   3. Delete. In a second transaction, with the marked rows locked, GC
--      deletes the bytes, then the rows. A crash between any two steps leaves
--      a row still marked (never a live file without bytes); the next GC run
--      finishes it (deleting bytes is idempotent).
--
-- An upload that finds a marked row not held by GC (a crash left it) may
-- revive it under the row lock (clear deleting_at) and write the bytes again:
-- GC step 3 re-checks deleting_at under the same lock.

ALTER TABLE storage.blobs ADD COLUMN IF NOT EXISTS deleting_at TIMESTAMPTZ;
COMMENT ON COLUMN storage.blobs.deleting_at IS
    'Set by dedup_gc when it has decided to delete this blob (bytes, then row); a file may not reference a marked blob. NULL = live.';
CREATE INDEX IF NOT EXISTS blobs_deleting_idx ON storage.blobs (hash) WHERE deleting_at IS NOT NULL;

-- Raises unless every hash in `hashes` has a blob row that is not being
-- deleted. Locks those rows first (hash order, FOR NO KEY UPDATE), so a GC
-- deciding about one of them finishes first, and none can be marked until
-- the caller's transaction ends. The check is a separate statement, so (read
-- committed) it sees what a GC committed while this one waited.
CREATE OR REPLACE FUNCTION storage.assert_blobs_referenceable(hashes TEXT[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    bad_hash  TEXT;
    has_row   BOOLEAN;
BEGIN
    PERFORM 1 FROM storage.blobs b
      WHERE b.hash = ANY(hashes)
      ORDER BY b.hash
        FOR NO KEY UPDATE;
    SELECT h, b.hash IS NOT NULL INTO bad_hash, has_row
      FROM unnest(hashes) AS h
      LEFT JOIN storage.blobs b ON b.hash = h
     WHERE b.hash IS NULL OR b.deleting_at IS NOT NULL
     ORDER BY h
     LIMIT 1;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF has_row THEN
        RAISE EXCEPTION 'blob % is being deleted by dedup_gc: a file cannot reference it', bad_hash
            USING ERRCODE = 'OXB01',
                  HINT = 'reserve the blob again (reserveBlob in @oxicloud/storage), write its bytes, then insert the file';
    END IF;
    RAISE EXCEPTION 'blob % has no storage.blobs row: a file cannot reference it', bad_hash
        USING ERRCODE = 'OXB02',
              HINT = 'reserve the blob first (reserveBlob in @oxicloud/storage), write its bytes, then insert the file';
END $$;

CREATE OR REPLACE FUNCTION storage.files_ref_count_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM storage.assert_blobs_referenceable(ARRAY(SELECT DISTINCT blob_hash FROM new_rows));
    UPDATE storage.blobs b
       SET ref_count = b.ref_count + d.n, orphaned_at = NULL
      FROM (SELECT blob_hash, count(*)::int AS n FROM new_rows GROUP BY blob_hash) d
     WHERE b.hash = d.blob_hash;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION storage.files_ref_count_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM storage.assert_blobs_referenceable(ARRAY(
        SELECT DISTINCT nr.blob_hash FROM new_rows nr
          JOIN old_rows o ON o.id = nr.id AND nr.blob_hash <> o.blob_hash));
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

-- A blob row inserted for a hash that files already reference (a repair of
-- a missing row, an upload re-creating a blob) starts at its real ref_count
-- with no orphaned_at, so dedup_gc never sees it as an orphan.
CREATE OR REPLACE FUNCTION storage.blobs_mark_orphan_on_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    referenced INTEGER;
BEGIN
    SELECT count(*)::int INTO referenced FROM storage.files f WHERE f.blob_hash = NEW.hash;
    IF referenced > 0 THEN
        NEW.ref_count := referenced;
    END IF;
    IF NEW.ref_count = 0 AND NEW.orphaned_at IS NULL THEN
        NEW.orphaned_at := NOW();
    ELSIF NEW.ref_count > 0 THEN
        NEW.orphaned_at := NULL;
    END IF;
    RETURN NEW;
END $$;
