-- The OxiCloud-compatible storage domain, step 1: the extensions, schemas
-- and enum types every later file uses. Written from the fact sheet
-- (OXICLOUD.md §1) and OXICLOUD_SCHEMA; safe to run twice.

-- ltree: folder paths (storage.folders.lpath) and the tree-ETag queue;
-- pg_trgm: trigram indexes on names and e-mails; citext: group names.
-- All three live in public, as in OxiCloud's database: queries with ltree
-- operators need public on the search_path (the functions below set it).
CREATE EXTENSION IF NOT EXISTS ltree WITH SCHEMA public;
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
CREATE EXTENSION IF NOT EXISTS citext WITH SCHEMA public;

CREATE SCHEMA IF NOT EXISTS auth;
CREATE SCHEMA IF NOT EXISTS storage;
CREATE SCHEMA IF NOT EXISTS caldav;
CREATE SCHEMA IF NOT EXISTS carddav;
CREATE SCHEMA IF NOT EXISTS audio;
CREATE SCHEMA IF NOT EXISTS faces;

-- CREATE TYPE has no IF NOT EXISTS: each type is created only when absent.
-- The labels are in sort order (storage.grant_role: ORDER BY role runs from
-- the strongest role to the weakest).
DO $$
BEGIN
    IF to_regtype('auth.userrole') IS NULL THEN
        CREATE TYPE auth.userrole AS ENUM ('admin', 'user');
    END IF;
    IF to_regtype('auth.device_code_status') IS NULL THEN
        CREATE TYPE auth.device_code_status AS ENUM ('pending', 'authorized', 'denied', 'expired');
    END IF;
    IF to_regtype('auth.magic_link_status') IS NULL THEN
        CREATE TYPE auth.magic_link_status AS ENUM ('pending', 'used', 'expired');
    END IF;
    IF to_regtype('storage.grant_role') IS NULL THEN
        CREATE TYPE storage.grant_role AS ENUM ('owner', 'editor', 'contributor', 'commenter', 'viewer');
    END IF;
END $$;
