-- Extensions, schemas and helper functions every later migration relies on.
CREATE EXTENSION IF NOT EXISTS ltree;

CREATE SCHEMA IF NOT EXISTS auth;
CREATE SCHEMA IF NOT EXISTS storage;
CREATE SCHEMA IF NOT EXISTS jobs;

-- Time-ordered UUIDs (version 7) for rows written in bulk: rows written
-- together stay close on disk, unlike random v4 ids. Portable to any
-- PostgreSQL >= 13 (gen_random_uuid is core there).
CREATE OR REPLACE FUNCTION public.oxicloud_uuid_v7() RETURNS uuid
LANGUAGE sql VOLATILE AS $$
  SELECT encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid())
              PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
              FROM 1 FOR 6),
      52, 1), 53, 1),
    'hex')::uuid;
$$;
