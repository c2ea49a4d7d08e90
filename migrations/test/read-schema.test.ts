import { createTestDatabase, type TestDatabase } from '@oxicloud/test-support';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffSchema } from '../src/oxicloud-schema/diff-schema.js';
import { readSchema } from '../src/oxicloud-schema/read-schema.js';
import type { SchemaDescription } from '../src/oxicloud-schema/types.js';

/** A small schema with one of each thing readSchema reads (this project's own SQL). */
const PROBE_SCHEMA = `
  CREATE EXTENSION IF NOT EXISTS ltree WITH SCHEMA public;
  CREATE SCHEMA probe;
  CREATE TYPE probe.mood AS ENUM ('low', 'high');
  CREATE TABLE probe.owners (id uuid PRIMARY KEY DEFAULT gen_random_uuid());
  CREATE TABLE probe.items (
    id        uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id  uuid REFERENCES probe.owners (id) ON DELETE SET NULL,
    label     varchar(64) NOT NULL DEFAULT '',
    tags      text[] NOT NULL DEFAULT '{}',
    place     public.ltree,
    mood      probe.mood NOT NULL DEFAULT 'low',
    seq       bigint GENERATED ALWAYS AS IDENTITY,
    removed   boolean NOT NULL DEFAULT false,
    CONSTRAINT items_label_short CHECK (char_length(label) <= 10),
    CONSTRAINT items_owner_label_key UNIQUE (owner_id, label)
  );
  CREATE UNIQUE INDEX idx_items_live_label ON probe.items (label) WHERE NOT removed;
  CREATE INDEX idx_items_label_pattern ON probe.items (label text_pattern_ops, seq DESC);
  CREATE INDEX idx_items_place ON probe.items USING gist (place);
  CREATE FUNCTION probe.touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
  CREATE TRIGGER trg_items_touch BEFORE INSERT OR UPDATE OF label, mood ON probe.items
    FOR EACH ROW EXECUTE FUNCTION probe.touch();
  CREATE TRIGGER trg_items_statement AFTER DELETE ON probe.items
    FOR EACH STATEMENT EXECUTE FUNCTION probe.touch();
  CREATE CONSTRAINT TRIGGER trg_items_at_commit AFTER INSERT OR UPDATE ON probe.items
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION probe.touch();
  CREATE VIEW probe.live_items AS SELECT id, label FROM probe.items WHERE NOT removed;
`;

describe('readSchema on a live database', () => {
  let db: TestDatabase;
  let client: pg.PoolClient;
  let probe: SchemaDescription;
  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
    await db.pool.query(PROBE_SCHEMA);
    client = await db.pool.connect();
    probe = await readSchema(client, ['probe', 'absent']);
  });
  afterAll(async () => {
    client?.release();
    await db?.drop();
  });

  it('reads the schemas that exist, the extensions and the enum labels in order', () => {
    expect(probe.schemas).toEqual(['probe']);
    expect(probe.extensions).toContainEqual({ name: 'ltree', schema: 'public' });
    expect(probe.enums).toEqual([{ schema: 'probe', name: 'mood', labels: ['low', 'high'] }]);
    expect(probe.tables.map((t) => t.name)).toEqual(['items', 'owners']);
  });

  it('reads columns with their types, nullability, defaults and identity as Postgres prints them', () => {
    const items = probe.tables.find((t) => t.name === 'items');
    expect(items?.columns).toEqual([
      { name: 'id', type: 'uuid', nullable: false, default: 'gen_random_uuid()', identity: null },
      { name: 'owner_id', type: 'uuid', nullable: true, default: null, identity: null },
      {
        name: 'label',
        type: 'character varying(64)',
        nullable: false,
        default: "''::character varying",
        identity: null,
      },
      { name: 'tags', type: 'text[]', nullable: false, default: "'{}'::text[]", identity: null },
      { name: 'place', type: 'public.ltree', nullable: true, default: null, identity: null },
      { name: 'mood', type: 'probe.mood', nullable: false, default: "'low'::probe.mood", identity: null },
      { name: 'seq', type: 'bigint', nullable: false, default: null, identity: 'always' },
      { name: 'removed', type: 'boolean', nullable: false, default: 'false', identity: null },
    ]);
  });

  it('reads the primary key, unique and check constraints, and foreign keys with ON DELETE', () => {
    const items = probe.tables.find((t) => t.name === 'items');
    expect(items?.primaryKey).toEqual({ name: 'items_pkey', columns: ['id'] });
    expect(items?.uniques).toEqual([{ name: 'items_owner_label_key', columns: ['owner_id', 'label'] }]);
    expect(items?.checks).toEqual([
      { name: 'items_label_short', definition: 'CHECK ((char_length((label)::text) <= 10))' },
    ]);
    expect(items?.foreignKeys).toEqual([
      {
        name: 'items_owner_id_fkey',
        columns: ['owner_id'],
        references: { schema: 'probe', table: 'owners', columns: ['id'] },
        onDelete: 'set null',
      },
    ]);
  });

  it('reads the indexes that back no constraint, with method, key columns as printed and predicate', () => {
    const items = probe.tables.find((t) => t.name === 'items');
    expect(items?.indexes).toEqual([
      {
        name: 'idx_items_label_pattern',
        unique: false,
        method: 'btree',
        columns: ['label text_pattern_ops', 'seq DESC'],
        predicate: null,
      },
      {
        name: 'idx_items_live_label',
        unique: true,
        method: 'btree',
        columns: ['label'],
        predicate: '(NOT removed)',
      },
      { name: 'idx_items_place', unique: false, method: 'gist', columns: ['place'], predicate: null },
    ]);
  });

  it('reads triggers: timing, events, level, UPDATE OF columns, deferral and function', () => {
    const items = probe.tables.find((t) => t.name === 'items');
    expect(items?.triggers).toEqual([
      {
        name: 'trg_items_at_commit',
        timing: 'after',
        events: ['insert', 'update'],
        level: 'row',
        updateOf: [],
        deferral: 'deferrable initially deferred',
        function: 'probe.touch',
      },
      {
        name: 'trg_items_statement',
        timing: 'after',
        events: ['delete'],
        level: 'statement',
        updateOf: [],
        deferral: null,
        function: 'probe.touch',
      },
      {
        name: 'trg_items_touch',
        timing: 'before',
        events: ['insert', 'update'],
        level: 'row',
        updateOf: ['label', 'mood'],
        deferral: null,
        function: 'probe.touch',
      },
    ]);
  });

  it('reads views with their columns', () => {
    expect(probe.views).toEqual([
      {
        schema: 'probe',
        name: 'live_items',
        columns: [
          { name: 'id', type: 'uuid' },
          { name: 'label', type: 'character varying(64)' },
        ],
      },
    ]);
  });

  it('gives diffSchema what it needs: no difference with itself, and the line for a change made after', async () => {
    expect(diffSchema(probe, probe)).toEqual([]);
    await client.query('ALTER TABLE probe.items ALTER COLUMN label DROP NOT NULL');
    await client.query('DROP TRIGGER trg_items_statement ON probe.items');
    const after = await readSchema(client, ['probe']);
    expect(diffSchema(probe, after)).toEqual([
      'probe.items: column label: NOT NULL described, nullable found',
      'probe.items: missing trigger trg_items_statement (after delete, for each statement)',
    ]);
  });
});
