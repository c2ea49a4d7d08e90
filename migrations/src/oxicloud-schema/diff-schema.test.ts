import { describe, expect, it } from 'vitest';
import { OXICLOUD_SCHEMA } from './description.js';
import { diffSchema } from './diff-schema.js';
import { keyColumnsOf } from './read-schema.js';
import { ANY_DEFAULT, type SchemaDescription, type TableDescription } from './types.js';

const items: TableDescription = {
  schema: 'app',
  name: 'items',
  columns: [
    { name: 'id', type: 'uuid', nullable: false, default: 'gen_random_uuid()' },
    { name: 'kind', type: 'text', nullable: false, default: "'a'::text" },
    { name: 'note', type: 'text', nullable: true, default: ANY_DEFAULT },
    { name: 'seq', type: 'bigint', nullable: false, default: null, identity: 'always' },
  ],
  primaryKey: { columns: ['id'] },
  uniques: [{ name: 'items_kind_key', columns: ['kind'] }],
  checks: [
    {
      name: 'items_kind_check',
      meaning: 'a or b',
      definition: "CHECK ((kind = ANY (ARRAY['a'::text, 'b'::text])))",
    },
  ],
  foreignKeys: [
    { columns: ['id'], references: { schema: 'app', table: 'owners', columns: ['id'] }, onDelete: 'cascade' },
  ],
  indexes: [
    {
      name: 'idx_items_note',
      unique: false,
      method: 'btree',
      columns: ['note DESC'],
      predicate: '(note IS NOT NULL)',
    },
  ],
  triggers: [
    {
      name: 'trg_items_touch',
      timing: 'before',
      events: ['update'],
      level: 'row',
      updateOf: ['kind'],
      deferral: null,
      function: 'app.touch',
    },
  ],
};

const described: SchemaDescription = {
  schemas: ['app'],
  extensions: [{ name: 'ltree', schema: 'public' }],
  enums: [{ schema: 'app', name: 'level', labels: ['low', 'high'] }],
  tables: [items],
  views: [{ schema: 'app', name: 'live_items', columns: [{ name: 'id', type: 'uuid' }] }],
  outOfScope: [{ schema: 'app', name: 'audit', why: 'not ours' }],
};

/** What a read of a database that has exactly the description looks like: every name and default spelled out. */
const read: SchemaDescription = {
  ...described,
  extensions: [
    { name: 'ltree', schema: 'public' },
    { name: 'plpgsql', schema: 'pg_catalog' },
  ],
  tables: [
    {
      ...items,
      columns: items.columns.map((c) => ({
        ...c,
        default: c.default === ANY_DEFAULT ? "'x'::text" : c.default,
        identity: c.identity ?? null,
      })),
      primaryKey: { name: 'items_pkey', columns: ['id'] },
      checks: items.checks.map(({ name, definition }) => (definition ? { name, definition } : { name })),
      foreignKeys: items.foreignKeys.map((f) => ({ ...f, name: 'items_id_fkey' })),
      indexes: [
        ...items.indexes,
        { name: 'idx_items_extra', unique: false, method: 'btree', columns: ['kind'], predicate: null },
      ],
    },
    {
      ...items,
      name: 'audit',
      columns: [],
      uniques: [],
      checks: [],
      foreignKeys: [],
      indexes: [],
      triggers: [],
    },
  ],
  outOfScope: [],
};

const withItems = (change: (t: TableDescription) => TableDescription): SchemaDescription => ({
  ...read,
  tables: read.tables.map((t) => (t.name === 'items' ? change(t) : t)),
});

describe('diffSchema', () => {
  it('finds nothing when the database has what is described, extra indexes, extensions and out-of-scope tables included', () => {
    expect(diffSchema(described, read)).toEqual([]);
  });

  it('names a missing schema, extension, enum label, table and view, and an extra table, enum and view', () => {
    const lines = diffSchema(described, {
      ...read,
      schemas: [],
      extensions: [],
      enums: [
        { schema: 'app', name: 'level', labels: ['low'] },
        { schema: 'app', name: 'mood', labels: ['sad'] },
      ],
      tables: [{ ...items, name: 'other' }],
      views: [{ schema: 'app', name: 'old_view', columns: [] }],
    });
    expect(lines).toEqual([
      'missing schema app',
      'missing extension ltree',
      'enum app.level: labels (low, high) described, (low) found',
      'extra enum app.mood (sad)',
      'missing table app.items',
      'extra table app.other',
      'missing view app.live_items',
      'extra view app.old_view',
    ]);
  });

  it('names column differences: type, nullability, default, identity, missing and extra; ANY_DEFAULT accepts any default', () => {
    const lines = diffSchema(
      described,
      withItems((t) => ({
        ...t,
        columns: [
          { name: 'id', type: 'text', nullable: true, default: null },
          { name: 'kind', type: 'text', nullable: false, default: "'b'::text" },
          { name: 'note', type: 'text', nullable: true, default: null },
          { name: 'extra', type: 'integer', nullable: true, default: null },
        ],
      })),
    );
    expect(lines).toEqual([
      'app.items: column id: type uuid described, text found',
      'app.items: column id: NOT NULL described, nullable found',
      'app.items: column id: default gen_random_uuid() described, none found',
      "app.items: column kind: default 'a'::text described, 'b'::text found",
      'app.items: missing column seq bigint',
      'app.items: extra column extra integer',
    ]);
  });

  it('names key, check and foreign-key differences', () => {
    const lines = diffSchema(
      described,
      withItems((t) => ({
        ...t,
        primaryKey: null,
        uniques: [{ name: 'items_note_key', columns: ['note'] }],
        checks: [
          { name: 'items_kind_check', definition: "CHECK ((kind = 'a'::text))" },
          { name: 'items_x', definition: 'CHECK (true)' },
        ],
        foreignKeys: [
          {
            name: 'items_id_fkey',
            columns: ['id'],
            references: { schema: 'app', table: 'owners', columns: ['id'] },
            onDelete: 'no action',
          },
          {
            name: 'items_kind_fkey',
            columns: ['kind'],
            references: { schema: 'app', table: 'kinds', columns: ['name'] },
            onDelete: 'restrict',
          },
        ],
      })),
    );
    expect(lines).toEqual([
      'app.items: missing primary key (id)',
      'app.items: missing unique constraint items_kind_key (kind)',
      'app.items: extra unique constraint items_note_key (note)',
      "app.items: check items_kind_check: CHECK ((kind = ANY (ARRAY['a'::text, 'b'::text]))) described, CHECK ((kind = 'a'::text)) found",
      'app.items: extra check items_x: CHECK (true)',
      'app.items: foreign key (id): on delete cascade described, no action found',
      'app.items: extra foreign key items_kind_fkey (kind) → app.kinds(name) on delete restrict',
    ]);
  });

  it('names a missing index, or one whose uniqueness, method, columns or predicate differ', () => {
    const changed = diffSchema(
      described,
      withItems((t) => ({
        ...t,
        indexes: [
          { name: 'idx_items_note', unique: true, method: 'gin', columns: ['note'], predicate: null },
        ],
      })),
    );
    expect(changed).toEqual([
      'app.items: index idx_items_note: not unique described, unique found',
      'app.items: index idx_items_note: method btree described, gin found',
      'app.items: index idx_items_note: columns (note DESC) described, (note) found',
      'app.items: index idx_items_note: WHERE (note IS NOT NULL) described, none found',
    ]);
    expect(
      diffSchema(
        described,
        withItems((t) => ({ ...t, indexes: [] })),
      ),
    ).toEqual(['app.items: missing index idx_items_note (note DESC)']);
  });

  it('names a missing, extra or differently shaped trigger', () => {
    const lines = diffSchema(
      described,
      withItems((t) => ({
        ...t,
        triggers: [
          {
            name: 'trg_items_touch',
            timing: 'after',
            events: ['insert', 'update'],
            level: 'statement',
            updateOf: [],
            deferral: null,
            function: 'app.other',
          },
          {
            name: 'trg_items_check',
            timing: 'after',
            events: ['insert'],
            level: 'row',
            updateOf: [],
            deferral: 'deferrable initially deferred',
            function: 'app.check',
          },
        ],
      })),
    );
    expect(lines).toEqual([
      'app.items: trigger trg_items_touch: before update of kind, for each row described, after insert or update, for each statement found',
      'app.items: trigger trg_items_touch: function app.touch described, app.other found',
      'app.items: extra trigger trg_items_check (after insert, for each row, constraint trigger deferrable initially deferred)',
    ]);
    expect(
      diffSchema(
        described,
        withItems((t) => ({ ...t, triggers: [] })),
      ),
    ).toEqual(['app.items: missing trigger trg_items_touch (before update of kind, for each row)']);
  });

  it('names a view whose columns differ', () => {
    const lines = diffSchema(described, {
      ...read,
      views: [{ schema: 'app', name: 'live_items', columns: [{ name: 'id', type: 'text' }] }],
    });
    expect(lines).toEqual(['view app.live_items: columns (id uuid) described, (id text) found']);
  });
});

describe('OXICLOUD_SCHEMA', () => {
  it('finds no difference with itself', () => {
    expect(diffSchema(OXICLOUD_SCHEMA, OXICLOUD_SCHEMA)).toEqual([]);
  });

  it('describes each table once, and every foreign key points at a described table', () => {
    const names = OXICLOUD_SCHEMA.tables.map((t) => `${t.schema}.${t.name}`);
    expect(new Set(names).size).toBe(names.length);
    const targets = OXICLOUD_SCHEMA.tables.flatMap((t) =>
      t.foreignKeys.map((f) => `${f.references.schema}.${f.references.table}`),
    );
    expect(targets.filter((t) => !names.includes(t))).toEqual([]);
  });

  it('covers the tables, enums and view the storage domain needs (issue 30)', () => {
    const names = OXICLOUD_SCHEMA.tables.map((t) => `${t.schema}.${t.name}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'auth.users',
        'auth.subject_groups',
        'auth.subject_group_members',
        'storage.drives',
        'storage.folders',
        'storage.files',
        'storage.blobs',
        'storage.chunk_manifests',
        'storage.role_grants',
        'storage.shares',
        'storage.file_metadata',
        'audio.file_metadata',
        'audio.playlists',
        'caldav.calendars',
        'carddav.address_books',
        'storage.webdav_dead_properties',
        'auth.user_favorites',
        'auth.user_recent_files',
        'storage.nextcloud_object_ids',
        'auth.magic_link_tokens',
        'storage.blob_extracted_text',
        'faces.faces',
        'storage.tree_etag_dirty',
        'storage.search_index_dirty',
      ]),
    );
    expect(OXICLOUD_SCHEMA.enums.map((e) => `${e.schema}.${e.name}`)).toEqual(
      expect.arrayContaining(['auth.userrole', 'storage.grant_role']),
    );
    expect(OXICLOUD_SCHEMA.views.map((v) => `${v.schema}.${v.name}`)).toEqual(['storage.trash_items']);
  });
});

describe('keyColumnsOf', () => {
  it('splits an index definition into its key columns, keeping opclasses, DESC and expressions whole', () => {
    expect(
      keyColumnsOf('CREATE INDEX i ON s.t USING btree (folder_id, lower(name), id) WHERE (NOT is_trashed)'),
    ).toEqual(['folder_id', 'lower(name)', 'id']);
    expect(keyColumnsOf('CREATE INDEX i ON s.t USING gin (name public.gin_trgm_ops)')).toEqual([
      'name public.gin_trgm_ops',
    ]);
    expect(keyColumnsOf("CREATE INDEX i ON s.t USING btree (created_at DESC, (coalesce(a, ',')))")).toEqual([
      'created_at DESC',
      "(coalesce(a, ','))",
    ]);
  });
});
